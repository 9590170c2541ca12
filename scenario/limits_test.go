package scenario

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/winerr"
)

// run runs src on a fresh machine with lim and returns what it printed and its error.
func runLimited(t *testing.T, lim Limits, src string) (*Machine, string, error) {
	t.Helper()
	var out bytes.Buffer
	m := NewLimited(&out, lim)
	t.Cleanup(m.Close)
	err := m.Run(strings.NewReader(src))
	return m, out.String(), err
}

// header reads the log-file header of an in-memory file.
func header(t *testing.T, m *Machine, name string) etl.LogfileHeader {
	t.Helper()
	data, ok := m.fs.ReadFile(name)
	if !ok {
		t.Fatalf("no file %s", name)
	}
	rd, err := etl.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return rd.Header()
}

// A SEQUENTIAL file with no MaximumFileSize fills the in-memory disk and no more: the
// buffers that do not fit are lost (LogBuffersLost), the session goes on, and its file
// is finalized with the count.
func TestDiskFullCostsBuffersNotTheSession(t *testing.T) {
	m, out, err := runLimited(t, Limits{}, `kernel disk=1
start s file=s.etl mode=SEQUENTIAL
register P
enable s P
write P 2000 size=60000
query s
write P 3
stop s
`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if used, capacity := m.fs.Used(), m.fs.Capacity(); capacity != 1<<20 || used > capacity {
		t.Errorf("disk holds %d of %d bytes", used, capacity)
	}
	// 1 MB holds the header buffer and 15 buffers of 64 KB; the other 1984 are lost, and
	// the two written after the disk filled (the three small events and the stop's flush).
	for _, want := range []string{
		"queried s: NumberOfBuffers 7, FreeBuffers 5, EventsLost 0, BuffersWritten 16, LogBuffersLost 1984",
		"wrote P x3 (16 bytes, processor 0): logger 2: 3 written",
		"stopped s: NumberOfBuffers 7, FreeBuffers 7, EventsLost 0, BuffersWritten 16, LogBuffersLost 1986",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if h := header(t, m, "s.etl"); h.BuffersWritten != 16 || h.BuffersLost != 1986 || h.EndTime == 0 {
		t.Errorf("finalized header: BuffersWritten %d BuffersLost %d EndTime %d", h.BuffersWritten, h.BuffersLost, h.EndTime)
	}
}

// The disk's size is the machine's limit unless kernel disk=MB asks for less; more is
// refused.
func TestDiskLimit(t *testing.T) {
	m, _, err := runLimited(t, Limits{Disk: 8 << 20}, "start s file=a.etl\n")
	if err != nil || m.fs.Capacity() != 8<<20 {
		t.Fatalf("%v, capacity %d", err, m.fs.Capacity())
	}
	m, _, err = runLimited(t, Limits{Disk: 8 << 20}, "kernel disk=2\nstart s file=a.etl\n")
	if err != nil || m.fs.Capacity() != 2<<20 {
		t.Fatalf("%v, capacity %d", err, m.fs.Capacity())
	}
	if _, _, err := runLimited(t, Limits{Disk: 8 << 20}, "kernel disk=9\n"); err == nil || !strings.Contains(err.Error(), "line 1: kernel: disk=9: the in-memory disk may be 1 to 8 MB") {
		t.Errorf("disk past the limit: %v", err)
	}
	for _, c := range []struct {
		lim      Limits
		src, err string
	}{
		{Limits{Processors: 4}, "kernel processors=5\n", "processors=5: the emulator supports 1 to 4"},
		{Limits{Events: 10}, "write P 11\n", `count "11": a number from 0 to 10`},
		{Limits{BufferKB: 16}, "start s buffer=17 file=a\n", "buffer=17: a number from 0 to 16"},
		{Limits{Buffers: 8}, "start s max=9 file=a\n", "max=9: a number from 0 to 8"},
		{Limits{Buffers: 8}, "start s file=a\nupdate s max=9\n", "max=9: a number from 0 to 8"},
	} {
		if _, _, err := runLimited(t, c.lim, c.src); err == nil || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %v, want %q", c.src, err, c.err)
		}
	}
	// One processor: the kernel a scenario gets without asking stays within the limit.
	if _, out, err := runLimited(t, Limits{Processors: 1}, "start s file=a.etl\nstrdump\n"); err != nil || !strings.Contains(out, "started s: LoggerId 2, LoggerMode NONE, BufferSize 64 KB, 2 buffers") {
		t.Errorf("one-processor limit: %v\n%s", err, out)
	}
}

// advance refuses a move the clock cannot hold, names the limit, and leaves the clock
// where it was; up to the limit it moves.
func TestAdvanceStopsAtTheClocksEnd(t *testing.T) {
	src := strings.Repeat("advance 2562047h\n", 100) // 100 × 92233692000000000 ticks: 2^63 is passed at the 101st
	m, _, err := runLimited(t, Limits{}, src)
	if err != nil {
		t.Fatal(err)
	}
	before := m.clk.Peek()
	err = m.Exec("advance 2562047h")
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("it stands at %d ticks and holds at most %d", before, int64(math.MaxInt64))) {
		t.Errorf("advance past the end: %v", err)
	}
	if m.clk.Peek() != before {
		t.Errorf("a refused advance moved the clock from %d to %d", before, m.clk.Peek())
	}
	if _, _, err := runLimited(t, Limits{}, src+"advance 2562047h\n"); err == nil || !strings.HasPrefix(err.Error(), "line 101: advance: 2562047h would pass the end of the clock") {
		t.Errorf("Run: %v", err)
	}
	room := time.Duration(math.MaxInt64-before) * 100
	if err := m.Exec("advance " + room.String()); err != nil || m.clk.Peek() != math.MaxInt64 {
		t.Errorf("advance to the last tick: %v, clock %d", err, m.clk.Peek())
	}
}

// endless is a line of n bytes with no end, made as it is read.
type endless struct{ n int }

func (e *endless) Read(p []byte) (int, error) {
	if e.n == 0 {
		return 0, io.EOF
	}
	k := min(len(p), e.n)
	for i := range p[:k] {
		p[i] = 'x'
	}
	e.n -= k
	return k, nil
}

// A line longer than MaxLine is an error naming its line; the reader skips it without
// holding it and goes on with the next line. Run stops there.
func TestLongLine(t *testing.T) {
	src := io.MultiReader(strings.NewReader("echo one\n"), &endless{10 << 20}, strings.NewReader("\necho two\r\nlast"))
	lr := NewLineReader(src)
	var ms0, ms1 runtime.MemStats
	runtime.ReadMemStats(&ms0)
	var got []string
	for {
		text, n, err := lr.Next()
		if err == io.EOF {
			break
		}
		got = append(got, fmt.Sprintf("%d:%s:%v", n, text, err))
	}
	runtime.ReadMemStats(&ms1)
	want := []string{"1:echo one:<nil>", "2::" + ErrLineTooLong.Error(), "3:echo two:<nil>", "4:last:<nil>"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("lines %q, want %q", got, want)
	}
	if grew := ms1.TotalAlloc - ms0.TotalAlloc; grew > 4<<20 {
		t.Errorf("reading a 10 MB line allocated %d bytes: the line was held", grew)
	}
	// A line of exactly MaxLine bytes is read; one more byte is too long.
	_, out, err := runLimited(t, Limits{}, "echo "+strings.Repeat("y", MaxLine-5)+"\n")
	if err != nil || len(out) != MaxLine-5+1 {
		t.Errorf("a MaxLine line: %v, printed %d bytes", err, len(out))
	}
	_, out, err = runLimited(t, Limits{}, "echo a\necho "+strings.Repeat("y", MaxLine-4)+"\necho b\n")
	if !errors.Is(err, ErrLineTooLong) || !strings.HasPrefix(err.Error(), "line 2: longer than 65536 bytes") || out != "a\n" {
		t.Errorf("Run on a long line: %v, printed %q", err, out)
	}

	// The error comes once the line passes MaxLine, not at its end: a line that never
	// ends (run /dev/zero; here 64 MB) is an error after MaxLine bytes and a buffer more.
	e := &endless{1 << 26}
	if _, n, err := NewLineReader(e).Next(); !errors.Is(err, ErrLineTooLong) || n != 1 || 1<<26-e.n > MaxLine+2*4096 {
		t.Errorf("a line without end: line %d, %v, after %d bytes", n, err, 1<<26-e.n)
	}
}

// A write of many events stops at the next chunk once its context is done: it prints
// what it wrote, fails with the context's cause, and StopAll then stops the session and
// finalizes its file.
func TestWriteStopsOnContext(t *testing.T) {
	m, out := machine(t, "start s file=s.etl buffer=4", "register P", "enable s P")
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("stop requested")
	m.SetProgress(func(cmd string, done uint64) {
		if cmd == "write" && done == 3*writeChunk {
			cancel(stop)
		}
	})
	out.Reset()
	err := m.ExecContext(ctx, "write P 10000000 size=100")
	if !errors.Is(err, stop) || !strings.Contains(err.Error(), fmt.Sprintf("stopped after %d of 10000000 events", 3*writeChunk)) {
		t.Fatalf("interrupted write: %v", err)
	}
	if want := fmt.Sprintf("wrote P x%d of 10000000 (100 bytes, processor 0): logger 2: %d written\n", 3*writeChunk, 3*writeChunk); out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
	if err := m.ExecContext(ctx, "strdump"); !errors.Is(err, stop) {
		t.Errorf("a command after the stop ran: %v", err)
	}
	out.Reset()
	if err := m.StopAll(); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.String(), "stopped s: ") || strings.Count(out.String(), "\n") != 1 {
		t.Errorf("StopAll printed %q", out.String())
	}
	h := header(t, m, "s.etl")
	size, _ := m.fs.Size("s.etl")
	if h.EndTime == 0 || int64(h.BuffersWritten)*4096 != size {
		t.Errorf("file not finalized: EndTime %d, BuffersWritten %d for %d bytes", h.EndTime, h.BuffersWritten, size)
	}
	if len(m.k.Sessions()) != 0 {
		t.Error("a session still runs after StopAll")
	}

	// RunContext stops between commands too, naming the line it reached.
	m2 := New(io.Discard)
	defer m2.Close()
	ctx2, cancel2 := context.WithCancelCause(context.Background())
	m2.SetProgress(func(string, uint64) { cancel2(stop) })
	ran, err := m2.RunContext(ctx2, strings.NewReader("start s file=s.etl\nregister P\nwrite P 5\nstrdump\n"))
	if ran != 2 || !errors.Is(err, stop) || !strings.HasPrefix(err.Error(), "line 3: write: stopped after 0 of 5 events") {
		t.Errorf("RunContext: %d commands, %v", ran, err)
	}
}

// The first commands a newcomer types say what to do next, keeping the Windows code.
func TestFirstCommandsHelp(t *testing.T) {
	var out bytes.Buffer
	m := New(&out)
	defer m.Close()
	if err := m.Exec("start s file=s.etl"); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ line, want string }{
		{"start s1", "start: ERROR_INVALID_PARAMETER (87): a session needs somewhere for its events to go"},
		{"start s1", "(start s1 file=s1.etl writes a log file; mode=REAL_TIME delivers to a consumer"},
		{"enable s1 P", `enable: ERROR_WMI_INSTANCE_NOT_FOUND (4201): no session named "s1" was started (start s1 file=s1.etl, or mode=REAL_TIME, starts one)`},
		{"counters s1 TotalCycles", `no session named "s1" was started`},
		{"write Q 2", "write: EventWriteEx: ERROR_INVALID_HANDLE (6) (Q is not registered: register Q first; all 2 writes failed)"},
		{"logdump s t=-1", "t=-1: a number from 0 to 10000 (decimal or 0x hex)"},
		{"enable s P level=999", "level=999: a number from 0 to 255"},
		{"bufdump s bytes=99999999", "bytes=99999999: a number from 0 to 65536"},
	} {
		out.Reset()
		err := m.Exec(c.line)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.line, err, c.want)
		}
		if strings.Contains(out.String(), "wrote") {
			t.Errorf("%s printed %q beside its error", c.line, out.String())
		}
	}
	// A session that ran and stopped: its handle is stale, and the error says so by name.
	for _, l := range []string{"start s2 mode=REAL_TIME", "stop s2"} {
		if err := m.Exec(l); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Exec("enable s2 P"); err == nil || !strings.Contains(err.Error(), `ERROR_WMI_INSTANCE_NOT_FOUND (4201): session "s2" is no longer running`) {
		t.Errorf("enable on a stopped session: %v", err)
	}
	if err := m.Exec("expect ERROR_WMI_INSTANCE_NOT_FOUND enable s2 P"); err != nil {
		t.Errorf("the explained error lost its code: %v", err)
	}
}

// The sessions' buffers together are held to Limits.BufferMemory: a start or an update
// past it is refused with ERROR_NOT_ENOUGH_MEMORY before anything is allocated, and
// what fits still starts.
func TestBufferMemoryBound(t *testing.T) {
	_, out, err := runLimited(t, Limits{BufferMemory: 64 << 20}, `start a file=a.etl buffer=1024 min=8 max=40
expect ERROR_NOT_ENOUGH_MEMORY start b file=b.etl buffer=1024 min=8 max=40
start c file=c.etl buffer=1024 min=8 max=20
expect ERROR_NOT_ENOUGH_MEMORY update a max=50
update a max=44
`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"started a:", "started c:", "updated a: MaximumBuffers 44"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "started b:") {
		t.Errorf("b started past the bound:\n%s", out)
	}
}

// A REAL_TIME session with no consumer keeps up to a backlog of full buffers (at most
// session.MaxRealTimeBacklogBytes of them) beside its own, and the bound counts them: of
// sessions of 16 MB buffers, each holding 64 MB of buffers and 64 MB of backlog, the
// ninth is refused, and a session's writes past what it keeps cost no more memory.
func TestBufferMemoryCountsTheRealTimeBacklog(t *testing.T) {
	var script strings.Builder
	for i := range 9 {
		fmt.Fprintf(&script, "start s%d mode=REAL_TIME buffer=16384 min=4 max=4\n", i)
	}
	script.WriteString("register P\nenable s0 P\nwrite P 2000 size=60000\n")
	_, out, err := runLimited(t, Limits{}, script.String())
	if err == nil || !errors.Is(err, winerr.ErrNotEnoughMemory) || !strings.Contains(err.Error(), "start s8") || !strings.Contains(err.Error(), "backlog") {
		t.Fatalf("nine sessions of 128 MB each under 1 GiB: %v\n%s", err, out)
	}
	_, out, err = runLimited(t, Limits{}, "start s0 mode=REAL_TIME buffer=16384 min=4 max=4\nregister P\nenable s0 P\nexpect ERROR_LOG_FILE_FULL write P 2000 size=60000\n")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "as expected") {
		t.Errorf("the writes past the backlog were not refused:\n%s", out)
	}
}

// Without a bound given, the machine's sessions together may hold DefaultBufferMemory.
func TestBufferMemoryDefault(t *testing.T) {
	_, out, err := runLimited(t, Limits{}, `start a mode=REAL_TIME buffer=16384 min=4 max=60
expect ERROR_NOT_ENOUGH_MEMORY start b mode=REAL_TIME buffer=16384 min=4 max=60
`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "more than the 1024 MB this machine allows") {
		t.Errorf("no refusal naming the default bound:\n%s", out)
	}
}

// A write of no events says so, not that no session took them.
func TestWriteNothing(t *testing.T) {
	_, out, err := runLimited(t, Limits{}, "start s mode=REAL_TIME\nregister P\nenable s P\nwrite P 0\n")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "nothing written: 0 events asked") || strings.Contains(out, "no session took it") {
		t.Errorf("write P 0:\n%s", out)
	}
}

// A command with too few or too many words says how many it takes.
func TestArgumentCount(t *testing.T) {
	_, out, err := runLimited(t, Limits{}, "write P\n")
	if err == nil || !strings.Contains(err.Error(), "write: 1 argument, want 2") {
		t.Errorf("write P: %v\n%s", err, out)
	}
}

// logdump keeps only the last t events, whatever the buffers hold: the same events, in
// the same order, as the tail of a view of them all.
func TestLogdumpKeepsTheLastEvents(t *testing.T) {
	src := `kernel processors=3
start s mode=BUFFERING buffer=64 min=8
register P
enable s P
write P 700 size=8 proc=0
write P 900 size=0 proc=1
write P 800 size=24 proc=2
advance 1ms
write P 5 size=4 proc=1
`
	type row struct {
		TimeStamp                 int64
		Processor, Buffer, Offset int
		Payload                   []byte
	}
	dump := func(n int) []row {
		_, out, err := runLimited(t, Limits{}, src+fmt.Sprintf("logdump s t=%d -json\n", n))
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		var rows []row
		if err := json.Unmarshal([]byte(out[strings.LastIndex(out, "\n[")+1:]), &rows); err != nil {
			t.Fatalf("%v in %q", err, out[strings.LastIndex(out, "\n[")+1:])
		}
		return rows
	}
	all := dump(MaxLogdumpEvents)
	if len(all) != 2405 {
		t.Fatalf("logdump of every event shows %d events, want 2405", len(all))
	}
	for _, n := range []int{0, 1, 7, 1000} {
		if got, want := dump(n), all[len(all)-n:]; !reflect.DeepEqual(got, want) && !(n == 0 && len(got) == 0) {
			t.Errorf("t=%d: %d events, not the last %d of all's", n, len(got), n)
		}
	}
}

// bufdump shows at most MaxBufdumpBytes of buffer bytes in all, and says it cut them.
func TestBufdumpBytesBounded(t *testing.T) {
	_, out, err := runLimited(t, Limits{}, `kernel processors=1
start s mode=BUFFERING buffer=64 min=64
register P
enable s P
write P 40000 size=100
bufdump s bytes=65536
`)
	if err != nil {
		t.Fatalf("%v", err)
	}
	hexBytes := 0
	table := out[strings.Index(out, "First bytes after the header"):]
	for _, line := range strings.Split(table, "\n") {
		if f := strings.Fields(line); len(f) == 8 {
			hexBytes += len(f[7]) / 2
		}
	}
	if hexBytes == 0 || hexBytes > MaxBufdumpBytes {
		t.Errorf("bufdump showed %d bytes in hex, want some and at most %d", hexBytes, MaxBufdumpBytes)
	}
	if !strings.Contains(out, fmt.Sprintf("bufdump shows at most %d bytes in all", MaxBufdumpBytes)) {
		t.Errorf("bufdump does not say it cut the bytes:\n%s", out[max(0, len(out)-500):])
	}
	_, out, err = runLimited(t, Limits{}, `kernel processors=1
start s mode=BUFFERING buffer=64 min=64
register P
enable s P
write P 40000 size=100
bufdump s bytes=65536 -json
`)
	if err != nil || !strings.Contains(out, `"cut": true`) {
		t.Errorf("bufdump -json does not mark the buffers it cut (%v)", err)
	}
}

// A session may be named with another's logger id: its name finds it, and "#ID" finds
// the logger of that id.
func TestSessionNamedLikeAnID(t *testing.T) {
	_, out, err := runLimited(t, Limits{}, "start 3 mode=REAL_TIME\nstart x mode=REAL_TIME buffer=4\nlogger 3\nlogger #3\nexpect ERROR_WMI_INSTANCE_NOT_FOUND logger #9\n")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	names := regexp.MustCompile(`LoggerName +: "(.*)"`).FindAllStringSubmatch(out, -1)
	if len(names) != 2 || names[0][1] != "3" || names[1][1] != "x" {
		t.Errorf("logger 3 and logger #3 show %v, want the sessions named 3 and x:\n%s", names, out)
	}
}

// An error's text gives the reason its code stands for: an empty counter list is refused
// for its length whichever session it names, and a session that was never started is
// named as such only where that is the refusal.
func TestCountersRefusalsSayTheirReason(t *testing.T) {
	for _, c := range []struct{ cmd, code, text string }{
		{"counters nosuch none", "ERROR_BAD_LENGTH", "an empty list"},
		{"counters nosuch none via=native", "STATUS_INFO_LENGTH_MISMATCH", "an empty list"},
		{"counters nosuch TotalCycles", "ERROR_WMI_INSTANCE_NOT_FOUND", `no session named "nosuch" was started`},
	} {
		_, out, err := runLimited(t, Limits{}, "start s mode=REAL_TIME\n"+c.cmd+"\n")
		if err == nil || !strings.Contains(err.Error(), c.code) || !strings.Contains(err.Error(), c.text) {
			t.Errorf("%s: %v, want %s saying %q\n%s", c.cmd, err, c.code, c.text, out)
		}
	}
}

// The GUID table is held to Limits.GUIDEntries: an enable, a register or a group join that
// would add an entry past it is refused naming the bound, and entries already there can
// still be enabled.
func TestGUIDEntriesBound(t *testing.T) {
	_, out, err := runLimited(t, Limits{GUIDEntries: 3}, `start s mode=REAL_TIME
enable s A
enable s B
register C
expect ERROR_NO_SYSTEM_RESOURCES enable s D
expect ERROR_NO_SYSTEM_RESOURCES register D
expect ERROR_NO_SYSTEM_RESOURCES traits C group=G
enable s C level=4
disable s A
enable s A
`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "Limits.GUIDEntries") {
		t.Errorf("no refusal names the bound:\n%s", out)
	}
}

// A kernel's commands print at most Limits.Output bytes: past it every command but
// kernel is refused with ERROR_NOT_ENOUGH_QUOTA, naming the bound, and a kernel line
// starts a new count. Without the bound, views of thousands of registrations repeated
// thousands of times printed in proportion to the square of the scenario's length.
func TestOutputBound(t *testing.T) {
	var src strings.Builder
	for i := range 40 {
		fmt.Fprintf(&src, "register P%d\n", i)
	}
	src.WriteString("guids\nexpect ERROR_NOT_ENOUGH_QUOTA guids\nexpect ERROR_NOT_ENOUGH_QUOTA regs\nexpect ERROR_NOT_ENOUGH_QUOTA register Q\nkernel\nregister Q\nregs\n")
	m, out, err := runLimited(t, Limits{Output: 6 << 10}, src.String()) // the registrations print 3.4 KB, a view 4 KB
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "scenario.Limits.Output") {
		t.Errorf("no refusal names the bound:\n%s", out)
	}
	if m.printed.n > 1<<10 || !strings.Contains(out[strings.LastIndex(out, "kernel:"):], "Q") {
		t.Errorf("after kernel: %d bytes counted, output\n%s", m.printed.n, out)
	}
	// Without expect, the refusal ends the run at its line.
	src.Reset()
	for i := range 200 {
		fmt.Fprintf(&src, "register P%d\nguids\n", i)
	}
	_, out, err = runLimited(t, Limits{Output: 64 << 10}, src.String())
	if !errors.Is(err, winerr.ErrNotEnoughQuota) || strings.Count(out, "GUID entries") >= 200 {
		t.Errorf("err %v after %d views", err, strings.Count(out, "GUID entries"))
	}
}

// The default bound stops a scenario of 20,000 registrations and as many views of
// them within 64 MB of output.
func TestOutputBoundDefault(t *testing.T) {
	if testing.Short() {
		t.Skip("prints 64 MB")
	}
	var src strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&src, "register P%d\n", i)
	}
	src.WriteString(strings.Repeat("guids\n", 20000))
	var n counted
	n.w = io.Discard
	m := New(&n)
	defer m.Close()
	err := m.Run(strings.NewReader(src.String()))
	if !errors.Is(err, winerr.ErrNotEnoughQuota) || n.n > DefaultOutput+8<<20 {
		t.Fatalf("err %v after %d MB printed", err, n.n>>20)
	}
}

// A kernel's checks and enables walk at most Limits.Walk registrations, GUID entries and
// buffers, and its writes write at most Limits.Writes bytes: past them commands are
// refused with ERROR_NOT_ENOUGH_QUOTA, naming the bound, a write whole before it writes
// anything, and a kernel line starts new counts. Without the bounds, a scenario of a few
// lines wrote for minutes, and checks of 65,535 registrations ran for hours.
func TestWalkAndWritesBound(t *testing.T) {
	var src strings.Builder
	for i := range 50 {
		fmt.Fprintf(&src, "register P%d guid=11111111-2222-3333-4444-555555555555\n", i)
	}
	// 50 registrations and one GUID entry a check; a session's enable walks the 50.
	src.WriteString("check\nstart s mode=REAL_TIME\nenable s P0\nexpect ERROR_NOT_ENOUGH_QUOTA check\nexpect ERROR_NOT_ENOUGH_QUOTA disable s P0\nkernel\ncheck\n")
	m, out, err := runLimited(t, Limits{Walk: 100}, src.String())
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "scenario.Limits.Walk") || m.walked != 0 {
		t.Errorf("walked %d after kernel, output\n%s", m.walked, out)
	}
	// The writes' count goes on across kernels: 500 and 50 events of 180 bytes fit in
	// 100 KB, 100 more do not, after a kernel line too.
	_, out, err = runLimited(t, Limits{Writes: 100 << 10}, `start s mode=REAL_TIME
register P
enable s P
write P 500 size=100
expect ERROR_NOT_ENOUGH_QUOTA write P 1000 size=100
write P 50 size=100
kernel
start s mode=REAL_TIME
register P
enable s P
expect ERROR_NOT_ENOUGH_QUOTA write P 100 size=100
write P 10 size=100
`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "scenario.Limits.Writes") || strings.Count(out, "wrote P") != 3 {
		t.Errorf("output\n%s", out)
	}
	// A count whose bytes pass 2^64 is refused, not wrapped around to a few.
	_, out, err = runLimited(t, Limits{Events: math.MaxUint64}, "register P\nexpect ERROR_NOT_ENOUGH_QUOTA write P 4611686018427387904 size=0\n")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
}

// echo and ## lines print what a terminal would act on (an escape sequence that retitles
// the window, a bell, bytes that are not UTF-8) escaped, not as it is.
func TestEchoEscapesControls(t *testing.T) {
	_, out, err := runLimited(t, Limits{}, "echo a\x1b[31mb\x07c \xff\n## title\x1b]0;x\x07 end\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "a\\x1b[31mb\\x07c \\xff\n# title\\x1b]0;x\\x07 end\n"; out != want {
		t.Errorf("printed %q, want %q", out, want)
	}
}

// A name a line gave (a provider's, a session's, an error code's, a poke's field) comes
// back in messages, in what a command prints and in the views' tables escaped and cut
// after 64 bytes: no escape sequence reaches the terminal, and a 50,000-byte name is not
// echoed whole, twice.
func TestTypedNamesShown(t *testing.T) {
	esc, long := "\x1b[2J", strings.Repeat("z", 50000)
	for _, name := range []string{esc, long} {
		for _, lines := range [][]string{
			{"expect " + name + " start s"},
			{"poke " + name},
			{"poke reg " + name + " mask=1"},
			{"poke guid " + name + " slot=0"},
			{"start " + name},
			{"start " + name + " mode=REAL_TIME", "flush " + name, "query " + name, "update " + name + " max=30", "register P", "enable " + name + " P", "logger " + name, "stop " + name},
			{"guid " + name},
			{"reg " + name},
			{"write " + name + " 1"},
			{"register " + name, "unregister " + name},
			{"register " + name, "register " + name},
			{"register " + name, "start s mode=REAL_TIME", "enable s " + name, "write " + name + " 1", "traits " + name, "guids", "regs", "logdump s"},
		} {
			var out bytes.Buffer
			m := New(&out)
			for _, l := range lines {
				if err := m.Exec(l); err != nil {
					fmt.Fprintln(&out, err)
				}
			}
			m.Close()
			if s := out.String(); strings.Contains(s, "\x1b") || len(s) > 4000 {
				t.Errorf("%.60q: %d bytes printed, an escape in them %v: %.300q", lines, len(s), strings.Contains(s, "\x1b"), s)
			}
		}
	}
}

// ExecView runs a view outside the output quota, and nothing but a view.
func TestExecView(t *testing.T) {
	m, _, err := runLimited(t, Limits{Output: 1 << 10}, "start s mode=REAL_TIME\nregister P\nenable s P\nlogger s\nexpect ERROR_NOT_ENOUGH_QUOTA strdump\n")
	if err != nil {
		t.Fatal(err)
	}
	if err := m.ExecView(context.Background(), "strdump -json"); err != nil {
		t.Errorf("a view past the quota: %v", err)
	}
	if err := m.Exec("strdump"); !errors.Is(err, winerr.ErrNotEnoughQuota) {
		t.Errorf("the learner's next command: %v, want the quota's refusal still", err)
	}
	if err := m.ExecView(context.Background(), "write P 1"); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("ExecView of a write: %v", err)
	}
}

// What a learner tries: a 64-bit keyword mask comes out of guids -json exact (a JSON
// number lost its low bits in JavaScript and jq, and the page drew 0x10000000000000000);
// a name unregistered registers again; unregistering a name never registered succeeds,
// as EventUnregister of a zero REGHANDLE does, and says it did nothing (it said
// "unregistered"); expect takes ERROR_SUCCESS and names itself once.
func TestLearnerCorners(t *testing.T) {
	m, out, err := runLimited(t, Limits{}, `start a mode=REAL_TIME
register P
enable a P any=0xfffffffffffffff1 all=0x8000000000000001
unregister P
register P
expect ERROR_SUCCESS write P 1
unregister Nope
`)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "Nope holds no registration: EventUnregister of a zero REGHANDLE succeeds and does nothing") {
		t.Errorf("unregister of a name never registered:\n%s", out)
	}
	var b bytes.Buffer
	m.out = &b
	if err := m.Exec("guids -json"); err != nil {
		t.Fatal(err)
	}
	if s := b.String(); !strings.Contains(s, `"matchAnyKeyword": "0xfffffffffffffff1"`) || !strings.Contains(s, `"matchAllKeyword": "0x8000000000000001"`) {
		t.Errorf("guids -json:\n%s", s)
	}
	if err := m.Exec("expect ERROR_FOO write P 1"); err == nil || strings.Count(err.Error(), "expect: ") != 1 {
		t.Errorf("expect of no code: %v, want it named once", err)
	}
	// P is registered; its GUID has no group entry, and the error says it is the group's.
	if err := m.Exec("guid P group=1"); err == nil || !strings.Contains(err.Error(), "no group GUID entry") {
		t.Errorf("guid P group=1: %v", err)
	}
}

// -json is refused by the commands that have no JSON form, naming those that do, and
// taken by every command whose usage offers it.
func TestJSONOnlyWhereOffered(t *testing.T) {
	m, out, err := runLimited(t, Limits{}, "start a mode=REAL_TIME\nregister P\n")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, line := range []string{"register Q -json", "enable a P -json", "query a -json", "advance 1ms -json"} {
		err := m.Exec(line)
		if err == nil || !strings.Contains(err.Error(), "-json: this command has no JSON form (") || !strings.Contains(err.Error(), "regs") {
			t.Errorf("%s: %v, want -json refused with the commands that have it", line, err)
		}
	}
	if names := jsonCommands(); len(names) < 5 {
		t.Fatalf("commands offering -json: %v", names)
	}
	// Every JSON form parses, and its keys are written alike: lowerCamelCase.
	for _, line := range []string{"regs -json", "guids -json", "files -json", "reg P -json", "guid P -json", "logger a -json", "bufdump a -json", "logdump a -json", "pmc a -json"} {
		var b bytes.Buffer
		m.out = &b
		if err := m.Exec(line); err != nil {
			t.Errorf("%s: %v", line, err)
			continue
		}
		var v any
		if err := json.Unmarshal(b.Bytes(), &v); err != nil {
			t.Errorf("%s: %v\n%s", line, err, b.String())
			continue
		}
		if k := upperKey(v); k != "" {
			t.Errorf("%s: key %q is not lowerCamelCase as the others are", line, k)
		}
	}
}

// upperKey returns a key of v's objects, at any depth, that starts with a capital.
func upperKey(v any) string {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if k != "" && k[0] >= 'A' && k[0] <= 'Z' {
				return k
			}
			if k := upperKey(e); k != "" {
				return k
			}
		}
	case []any:
		for _, e := range v {
			if k := upperKey(e); k != "" {
				return k
			}
		}
	}
	return ""
}

// Counts of one are written in the singular.
func TestOneIsSingular(t *testing.T) {
	m, out, err := runLimited(t, Limits{}, "start a mode=BUFFERING min=1 max=1 buffer=4\nregister P\nenable a P\nwrite P 1\n")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var b bytes.Buffer
	m.out = &b
	for _, line := range []string{"logdump a", "bufdump a", "save a one.etl"} {
		if err := m.Exec(line); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	for _, want := range []string{": 1 event in its buffers", ": 4 buffers of 4096 bytes", ": 1 buffer after the header"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in:\n%s", want, b.String())
		}
	}
}

// expect takes a code by number as well as by name (87, 0x57, 0xC000000D, 0), and
// advance refuses a step under one tick rather than leave the clock where it was.
func TestExpectByNumberAndAdvanceUnderATick(t *testing.T) {
	m, out, err := runLimited(t, Limits{}, "start a mode=REAL_TIME\nexpect 87 start b\nexpect 0x57 start b\nexpect 0 start c mode=REAL_TIME\nexpect 183 start a mode=REAL_TIME\nadvance 150ns\n")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "clock: 1 tick\n") {
		t.Errorf("advance 150ns:\n%s", out)
	}
	for line, want := range map[string]string{
		"expect 0xC000000D start b": "expected STATUS_INVALID_PARAMETER, got ERROR_INVALID_PARAMETER (87)",
		"expect 12345 start b":      "12345 is no Windows code the emulator returns",
		"advance 10ns":              "less than one tick of the manual clock (100ns)",
	} {
		if err := m.Exec(line); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", line, err, want)
		}
	}
}

// A code's number is decimal, or hex after 0x: a leading zero does not make it octal.
func TestCodeNumber(t *testing.T) {
	for s, want := range map[string]uint64{"87": 87, "087": 87, "0x57": 87, "0X57": 87, "0xc000000d": 0xC000000D, "0": 0, "00": 0} {
		if n, err := codeNumber(s); err != nil || n != want {
			t.Errorf("codeNumber(%q) = %d, %v; want %d", s, n, err, want)
		}
	}
	for _, s := range []string{"8_7", "0b1010111", "-87", "0x", "4294967383", "ERROR_BUSY"} {
		if n, err := codeNumber(s); err == nil {
			t.Errorf("codeNumber(%q) = %d, want an error", s, n)
		}
	}
}

// Every number a command reads is decimal or 0x hex, as the help says: 010 is ten (it
// was eight, Go's octal), 08 and 09 are read (they were refused), and Go's 0b, 0o and
// 1_000 forms are refused.
func TestNumbersAreDecimal(t *testing.T) {
	_, out, err := runLimited(t, Limits{}, "start s buffer=010 min=010 max=0100 mode=REAL_TIME\nregister A\nenable s A keep=08,09\nwrite A 010 size=010\nlogdump s t=020\n")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, bad := range []string{"0b11", "0o17", "1_000"} {
		if _, out, err := runLimited(t, Limits{}, "register A\nwrite A "+bad+"\n"); err == nil || !strings.Contains(err.Error(), "a number from 0") {
			t.Errorf("write A %s: %v\n%s", bad, err, out)
		}
	}
	for _, want := range []string{"BufferSize 10 KB", "MinimumBuffers 10, MaximumBuffers 100", "wrote A x10 (10 bytes"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}

// The views that read a session's buffers count what they read against Limits.Walk:
// logdump and bufdump each record, save each kilobyte of the ring, and every view the
// providers named so far. A scenario of a thousand logdump lines over 12 million events
// took about an hour; now the line past the bound is refused, and a kernel line starts a
// new count. ExecView (the web page drawing the kernel) counts nothing.
func TestViewsCountTheirWalk(t *testing.T) {
	const setup = "start s mode=BUFFERING buffer=64 min=4 max=4\nregister A\nenable s A\nwrite A 2000 size=0 proc=0\n"
	for _, c := range []struct {
		view string
		walk int64
	}{{"logdump s t=1", 1500}, {"bufdump s bytes=0", 1500}, {"save s f.etl", 200}} { // 2,000 records; a ring of 256 KB
		view := c.view
		m, out, err := runLimited(t, Limits{Walk: c.walk}, setup+view+"\nexpect ERROR_NOT_ENOUGH_QUOTA "+view+"\nkernel\n")
		if err != nil {
			t.Fatalf("%s: %v\n%s", view, err, out)
		}
		if !strings.Contains(out, "scenario.Limits.Walk") || m.walked != 0 {
			t.Errorf("%s: walked %d after kernel, output\n%s", view, m.walked, out)
		}
	}
	// Each view walks the providers named so far: 600 of them, three views.
	var src strings.Builder
	for i := range 600 {
		fmt.Fprintf(&src, "register P%d\n", i)
	}
	src.WriteString("regs\nguids\nexpect ERROR_NOT_ENOUGH_QUOTA regs\n")
	if _, out, err := runLimited(t, Limits{Walk: 1500}, src.String()); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// The page's views do not count against the learner's commands.
	m, out, err := runLimited(t, Limits{Walk: 1500}, setup)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	before := m.walked
	for range 3 {
		if err := m.ExecView(context.Background(), "bufdump s bytes=0"); err != nil {
			t.Fatal(err)
		}
	}
	if m.walked != before {
		t.Errorf("ExecView walked %d", m.walked-before)
	}
}

// A refused start leaves no log file and takes no disk: one the machine's buffer memory
// refuses after StartTrace (its session stopped again), and one whose log-file header
// does not fit its buffer. Both files stayed, the first 32 MB of a 64 MB disk each, so
// that a later start could not write its header.
func TestRefusedStartLeavesNoFile(t *testing.T) {
	src := "start a buffer=16384 min=40 max=40 mode=BUFFERING\n" +
		"expect ERROR_NOT_ENOUGH_MEMORY start b buffer=16384 min=4 file=b.etl\n" +
		"expect ERROR_NOT_ENOUGH_MEMORY start c buffer=16384 min=4 file=c.etl\n" +
		"expect ERROR_INVALID_PARAMETER start x buffer=4 file=" + strings.Repeat("x", 3000) + "\n" +
		"stop a\nstart d file=d.etl\n"
	m, out, err := runLimited(t, Limits{Disk: 64 << 20}, src)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if names := m.fs.Names(); !slices.Equal(names, []string{"d.etl"}) {
		t.Errorf("files %v, want d.etl only\n%s", names, out)
	}
}

// strdump and files show a session's name and a file's escaped, as every other view and
// message does: an escape sequence in a name retitled the terminal.
func TestViewsEscapeNames(t *testing.T) {
	_, out, err := runLimited(t, Limits{}, "start a\x1b]0;title\x07b file=f\x07.etl\nstrdump\nfiles\n")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, `a\x1b]0;title\x07b`) || !strings.Contains(out, `f\x07.etl`) {
		t.Errorf("output\n%q", out)
	}
}
