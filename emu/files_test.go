package emu

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

var fileProviders = []guid.GUID{
	guid.MustParse("{6d8a1f2e-3b4c-4d5e-8f90-a1b2c3d4e5f6}"),
	guid.MustParse("{0f1e2d3c-4b5a-4968-8776-655443322110}"),
}

// wrote is one event the test wrote and the session accepted.
type wrote struct {
	provider int
	proc     int
	seq      int // per processor
	size     int
}

// payload encodes an event's identity into its first 12 bytes and fills the rest
// compressibly.
func (w wrote) payload() []byte {
	b := make([]byte, w.size)
	binary.LittleEndian.PutUint32(b, uint32(w.provider))
	binary.LittleEndian.PutUint32(b[4:], uint32(w.proc))
	binary.LittleEndian.PutUint32(b[8:], uint32(w.seq))
	for i := 12; i < len(b); i++ {
		b[i] = "etwemu round trip "[i%18]
	}
	return b
}

type fileRun struct {
	k        *Kernel
	h        TraceHandle
	regs     []*Registration
	accepted []wrote
	next     [2]int
}

func startFile(t *testing.T, k *Kernel, name string, p *Properties) *fileRun {
	t.Helper()
	h, err := k.StartTrace(name, p)
	if err != nil {
		t.Fatal(err)
	}
	fr := &fileRun{k: k, h: h}
	for _, g := range fileProviders {
		r, err := k.EventRegister(g, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { k.EventUnregister(r) })
		fr.regs = append(fr.regs, r)
		if err := k.EnableTraceEx2(h, g, regentry.ControlEnable, 5, 0, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	return fr
}

// write writes n events of sizes cycling through sizes, alternating providers and
// processors, and remembers those the kernel accepted.
func (fr *fileRun) write(t *testing.T, n int, sizes ...int) (lost int) {
	t.Helper()
	for i := range n {
		w := wrote{provider: i % 2, proc: (i / 3) % 2, size: sizes[i%len(sizes)]}
		w.seq = fr.next[w.proc]
		fr.next[w.proc]++
		d := &EventDescriptor{ID: uint16(100 + w.provider), Level: 4}
		err := fr.k.EventWriteEx(fr.regs[w.provider], d, &WriteOptions{Processor: w.proc, ThreadID: 77}, w.payload())
		switch {
		case err == nil:
			fr.accepted = append(fr.accepted, w)
		case errors.Is(err, winerr.ErrNotEnoughMemory), errors.Is(err, winerr.ErrLogFileFull):
			lost++
		default:
			t.Fatalf("event %d: %v", i, err)
		}
	}
	return lost
}

// readEvents reads every EVENT_HEADER record of the files, in file order, and checks each
// record's header against its payload.
func readEvents(t *testing.T, paths ...string) (events []wrote, headers []etl.LogfileHeader) {
	return readFiles(t, false, paths...)
}

// readFiles is readEvents, with buffers in file order unless bySeq.
func readFiles(t *testing.T, bySeq bool, paths ...string) (events []wrote, headers []etl.LogfileHeader) {
	t.Helper()
	type buf struct {
		seq int64
		evs []wrote
	}
	var bufs []buf
	for _, path := range paths {
		f, err := etl.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		headers = append(headers, f.Header())
		err = f.Walk(func(b *etl.Buffer, r etl.Record) error {
			if len(bufs) == 0 || bufs[len(bufs)-1].seq != b.Header.SequenceNumber {
				bufs = append(bufs, buf{seq: b.Header.SequenceNumber})
			}
			if r.Kind != etl.KindEventHeader || len(r.Payload) < 12 {
				return fmt.Errorf("record at %#x: kind %v, payload %d bytes", r.Offset, r.Kind, len(r.Payload))
			}
			w := wrote{
				provider: int(binary.LittleEndian.Uint32(r.Payload)), proc: int(binary.LittleEndian.Uint32(r.Payload[4:])),
				seq: int(binary.LittleEndian.Uint32(r.Payload[8:])), size: len(r.Payload),
			}
			if !bytes.Equal(r.Payload, w.payload()) || r.Event.ProviderID != fileProviders[w.provider] ||
				r.Event.Descriptor.ID != uint16(100+w.provider) || r.Event.ThreadID != 77 ||
				int(b.Header.ProcessorNumber) != w.proc {
				return fmt.Errorf("record at %#x of buffer %d does not match its payload %+v", r.Offset, b.Header.SequenceNumber, w)
			}
			bufs[len(bufs)-1].evs = append(bufs[len(bufs)-1].evs, w)
			return nil
		})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
	}
	if bySeq {
		sort.SliceStable(bufs, func(i, j int) bool { return bufs[i].seq < bufs[j].seq })
	}
	for _, b := range bufs {
		events = append(events, b.evs...)
	}
	return events, headers
}

// perProc splits events by processor, keeping their order.
func perProc(ws []wrote) [2][]wrote {
	var out [2][]wrote
	for _, w := range ws {
		out[w.proc] = append(out[w.proc], w)
	}
	return out
}

func sameEvents(t *testing.T, got, want []wrote) {
	t.Helper()
	g, w := perProc(got), perProc(want)
	for p := range g {
		if len(g[p]) != len(w[p]) {
			t.Fatalf("processor %d: read %d events, want %d", p, len(g[p]), len(w[p]))
		}
		for i := range g[p] {
			if g[p][i] != w[p][i] {
				t.Fatalf("processor %d event %d: read %+v, want %+v", p, i, g[p][i], w[p][i])
			}
		}
	}
}

func fileKernel(t *testing.T, v winver.Version, fs etl.FileSystem) *Kernel {
	k, err := New(Config{Version: v, Processors: 2, FileSystem: fs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// Round trip in each file mode: exactly the accepted events come back, with their
// headers and payloads, per processor in write order, and the finalized header's
// counters equal what ControlTrace query returns at stop.
func TestFileRoundTrip(t *testing.T) {
	sizes := []int{12, 100, 900, 3000}
	cases := []struct {
		name    string
		v       winver.Version
		mode    uint32
		private bool
	}{
		{"sequential", winver.V2004, logmode.Sequential, false},
		{"sequential-6.1", winver.V6_1, logmode.Sequential, false},
		{"preallocate", winver.V2004, logmode.Sequential | logmode.Preallocate, false},
		{"realtime+file", winver.V2004, logmode.Sequential | logmode.RealTime, false},
		{"compressed-6.2", winver.V6_2, logmode.Sequential | logmode.Compressed | logmode.PrivateLogger | logmode.PrivateInProc, true},
		{"compressed-2004", winver.V2004, logmode.Sequential | logmode.Compressed | logmode.PrivateLogger | logmode.PrivateInProc, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rt.etl")
			k := fileKernel(t, c.v, nil)
			p := &Properties{BufferSize: 8, LogFileName: path, LogFileMode: c.mode, MaximumFileSize: 64, MinimumBuffers: 8, MaximumBuffers: 64}
			fr := startFile(t, k, "file "+c.name, p)
			var wg sync.WaitGroup
			if c.mode&logmode.RealTime != 0 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					k.Consume(context.Background(), "file "+c.name, 0, func(*etl.Buffer) error { return nil })
				}()
			}
			fr.write(t, 3000, sizes...)
			var q Properties
			if err := k.StopTrace(fr.h, "", &q); err != nil {
				t.Fatal(err)
			}
			wg.Wait()
			events, hs := readEvents(t, path)
			sameEvents(t, events, fr.accepted)
			h := hs[0]
			written := q.BuffersWritten
			if c.v == winver.V6_2 && c.mode&logmode.Compressed != 0 {
				// A 6.2 logger counts flushes of the compression area (Geoff Chappell,
				// "ETW_UM_LOGGER_CONTEXT"); the header counts the buffers in the file, as
				// real Windows 8 files do.
				f, err := etl.Open(path)
				if err != nil {
					t.Fatal(err)
				}
				f.Walk(func(*etl.Buffer, etl.Record) error { return nil })
				written = uint32(f.BuffersRead())
				f.Close()
				if q.BuffersWritten >= written {
					t.Errorf("6.2 logger counted %d buffers written, the file holds %d: want fewer flushes", q.BuffersWritten, written)
				}
			}
			if h.BuffersWritten != written || h.EventsLost != q.EventsLost || h.BuffersLost != q.LogBuffersLost {
				t.Errorf("file header written/lost/buffers lost %d/%d/%d, want %d/%d/%d (query written %d)",
					h.BuffersWritten, h.EventsLost, h.BuffersLost, written, q.EventsLost, q.LogBuffersLost, q.BuffersWritten)
			}
			if h.LoggerName != "file "+c.name || h.LogFileName != path || h.NumberOfProcessors != 2 || h.EndTime == 0 {
				t.Errorf("header names %q %q, %d processors, end %d", h.LoggerName, h.LogFileName, h.NumberOfProcessors, h.EndTime)
			}
			if c.mode&logmode.Compressed != 0 {
				if h.SubVersion != 2 {
					t.Errorf("compressed file says trace format %d.%d", h.SubVersion, h.SubMinorVersion)
				}
				st, _ := os.Stat(path)
				if st.Size()*2 > int64(len(fr.accepted))*1000 {
					t.Errorf("compressed file of %d bytes for %d events", st.Size(), len(fr.accepted))
				}
			}
		})
	}
}

// APPEND adds a second session's buffers after the first's.
func TestFileAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.etl")
	k := fileKernel(t, winver.V2004, nil)
	var all []wrote
	for i, mode := range []uint32{logmode.Sequential, logmode.Append} {
		fr := startFile(t, k, "append", &Properties{BufferSize: 8, LogFileName: path, LogFileMode: mode})
		fr.next = [2]int{i * 1000, i * 1000}
		fr.write(t, 500, 40, 400)
		k.StopTrace(fr.h, "", nil)
		for _, r := range fr.regs {
			k.EventUnregister(r)
		}
		all = append(all, fr.accepted...)
	}
	events, _ := readEvents(t, path)
	sameEvents(t, events, all)
}

// CIRCULAR keeps the newest buffers in a file of MaximumFileSize.
func TestFileCircularWrap(t *testing.T) {
	path := filepath.Join(t.TempDir(), "circ.etl")
	k := fileKernel(t, winver.V2004, nil)
	fr := startFile(t, k, "circ", &Properties{BufferSize: 4, LogFileName: path, MaximumFileSize: 40,
		LogFileMode: logmode.Circular | logmode.KBytesForSize, MinimumBuffers: 16, MaximumBuffers: 64})
	fr.write(t, 4000, 200)
	var q Properties
	k.StopTrace(fr.h, "", &q)
	st, _ := os.Stat(path)
	if st.Size() != 40<<10 {
		t.Errorf("circular file of %d bytes, want MaximumFileSize 40 KB", st.Size())
	}
	events, _ := readFiles(t, true, path)
	if q.BuffersWritten <= 10 || len(events) == 0 || len(events) >= len(fr.accepted) {
		t.Fatalf("%d buffers written, %d of %d events kept", q.BuffersWritten, len(events), len(fr.accepted))
	}
	// What is kept is, per processor, the newest events, in order.
	got, want := perProc(events), perProc(fr.accepted)
	for p := range got {
		tail := want[p][len(want[p])-len(got[p]):]
		sameEvents(t, got[p], tail)
	}
}

// rollProps are the properties of a NEWFILE session of 4 KB buffers rolling over at
// 32 KB files named by pattern.
func rollProps(pattern string) *Properties {
	return &Properties{BufferSize: 4, LogFileName: pattern, MaximumFileSize: 32,
		LogFileMode: logmode.NewFile | logmode.KBytesForSize, MinimumBuffers: 16, MaximumBuffers: 64}
}

// NEWFILE rolls over to numbered files at MaximumFileSize; together they hold every event.
func TestFileNewFileRollOver(t *testing.T) {
	dir := t.TempDir()
	k := fileKernel(t, winver.V2004, nil)
	fr := startFile(t, k, "roll", rollProps(filepath.Join(dir, "roll_%d.etl")))
	fr.write(t, 2000, 300)
	if err := k.ControlTrace(fr.h, "", nil, ControlIncrementFile); err != nil {
		t.Fatal(err)
	}
	fr.write(t, 10, 300)
	k.StopTrace(fr.h, "", nil)
	var paths []string
	for i := 1; ; i++ {
		p := filepath.Join(dir, fmt.Sprintf("roll_%d.etl", i))
		if _, err := os.Stat(p); err != nil {
			break
		}
		paths = append(paths, p)
	}
	if all, _ := filepath.Glob(filepath.Join(dir, "*")); len(all) != len(paths) {
		t.Errorf("files %v are not numbered 1 to %d", all, len(paths))
	}
	if len(paths) < 4 {
		t.Fatalf("%d files after writing ~600 KB into 32 KB files", len(paths))
	}
	events, hs := readEvents(t, paths...)
	sameEvents(t, events, fr.accepted)
	for i, h := range hs {
		if h.BuffersWritten < 1 || h.BuffersWritten > 8 {
			t.Errorf("file %d: BuffersWritten %d in a 32 KB file of 4 KB buffers", i, h.BuffersWritten)
		}
	}
}

// faultyFS fails writes while broken is set.
type faultyFS struct {
	etl.MemFS
	broken sync.Map // file name -> bool
	fails  int
	mu     sync.Mutex
}

type faultyFile struct {
	etl.WriteFile
	fs   *faultyFS
	name string
}

func (f *faultyFS) OpenFile(name string, flag int, perm os.FileMode) (etl.WriteFile, error) {
	w, err := f.MemFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return faultyFile{w, f, name}, nil
}

func (f faultyFile) WriteAt(b []byte, off int64) (int, error) {
	if v, _ := f.fs.broken.Load(f.name); v == true {
		f.fs.mu.Lock()
		f.fs.fails++
		f.fs.mu.Unlock()
		n, _ := f.WriteFile.WriteAt(b[:len(b)/2], off)
		return n, errors.New("injected: disk full")
	}
	return f.WriteFile.WriteAt(b, off)
}

// A disk that fills up costs buffers (LogBuffersLost), never the session or the file:
// everything written before and after the fault reads back.
func TestFileFaultInjection(t *testing.T) {
	fs := &faultyFS{}
	k := fileKernel(t, winver.V2004, fs)
	fr := startFile(t, k, "faulty", &Properties{BufferSize: 4, LogFileName: "faulty.etl", LogFileMode: logmode.Sequential})
	fr.write(t, 300, 200)
	k.FlushTrace(fr.h, "", nil)
	before := len(fr.accepted)
	fs.broken.Store("faulty.etl", true)
	fr.write(t, 100, 200)
	k.FlushTrace(fr.h, "", nil)
	fs.broken.Store("faulty.etl", false)
	during := fr.accepted[before:]
	fr.write(t, 300, 200)
	var q Properties
	if err := k.StopTrace(fr.h, "", &q); err != nil {
		t.Fatal(err)
	}
	if q.LogBuffersLost == 0 || int(q.LogBuffersLost) != fs.fails {
		t.Fatalf("LogBuffersLost %d, %d writes failed", q.LogBuffersLost, fs.fails)
	}
	b, _ := fs.ReadFile("faulty.etl")
	dir := t.TempDir()
	path := filepath.Join(dir, "faulty.etl")
	os.WriteFile(path, b, 0o644)
	events, hs := readEvents(t, path)
	var want []wrote
	want = append(want, fr.accepted[:before]...)
	want = append(want, fr.accepted[before+len(during):]...)
	sameEvents(t, events, want)
	if hs[0].BuffersLost != q.LogBuffersLost {
		t.Errorf("header BuffersLost %d, query %d", hs[0].BuffersLost, q.LogBuffersLost)
	}
}

// A SEQUENTIAL file stops accepting at MaximumFileSize and counts what it refuses. The
// kernel is synchronous: with a logger goroutine, a busy machine can leave the writers
// short of buffers, losing events before any buffer reaches the full file.
func TestFileSequentialFull(t *testing.T) {
	path := filepath.Join(t.TempDir(), "full.etl")
	k, err := New(Config{Version: winver.V2004, Processors: 2, Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	fr := startFile(t, k, "full", &Properties{BufferSize: 4, LogFileName: path, MaximumFileSize: 20,
		LogFileMode: logmode.Sequential | logmode.KBytesForSize})
	fr.write(t, 500, 300)
	var q Properties
	k.StopTrace(fr.h, "", &q)
	if q.BuffersWritten != 5 || q.LogBuffersLost == 0 {
		t.Fatalf("BuffersWritten %d LogBuffersLost %d, want 5 (the header and 4) and some lost", q.BuffersWritten, q.LogBuffersLost)
	}
	events, hs := readEvents(t, path)
	if len(events) == 0 || hs[0].BuffersLost != q.LogBuffersLost {
		t.Errorf("%d events kept; header BuffersLost %d, query %d", len(events), hs[0].BuffersLost, q.LogBuffersLost)
	}
	// Per processor, the file holds the first events written.
	got, want := perProc(events), perProc(fr.accepted)
	for p := range got {
		sameEvents(t, got[p], want[p][:len(got[p])])
	}
}

// A consumer that falls behind fills its backlog; then buffers are dropped and counted
// in RealTimeBuffersLost. What it receives is in order per processor.
func TestRealTimeBacklogOverflow(t *testing.T) {
	k := fileKernel(t, winver.V2004, nil)
	fr := startFile(t, k, "rt", &Properties{BufferSize: 4, LogFileMode: logmode.RealTime, MinimumBuffers: 8, MaximumBuffers: 64})
	release := make(chan struct{})
	var got []wrote
	attached := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		first := true
		done <- k.Consume(context.Background(), "rt", 2, func(b *etl.Buffer) error {
			if first {
				first = false
				close(attached)
				<-release // fall behind
			}
			return b.Records(func(r etl.Record) error {
				got = append(got, wrote{int(binary.LittleEndian.Uint32(r.Payload)), int(binary.LittleEndian.Uint32(r.Payload[4:])),
					int(binary.LittleEndian.Uint32(r.Payload[8:])), len(r.Payload)})
				return nil
			})
		})
	}()
	fr.write(t, 30, 300)
	k.FlushTrace(fr.h, "", nil)
	<-attached
	fr.write(t, 1000, 300)
	k.FlushTrace(fr.h, "", nil)
	close(release)
	var q Properties
	k.StopTrace(fr.h, "", &q)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if q.RealTimeBuffersLost == 0 {
		t.Fatal("a consumer stalled for 1000 events lost no buffers")
	}
	if len(got) == 0 || len(got) >= len(fr.accepted) {
		t.Fatalf("consumer got %d of %d events", len(got), len(fr.accepted))
	}
	for p, evs := range perProc(got) {
		for i := 1; i < len(evs); i++ {
			if evs[i].seq <= evs[i-1].seq {
				t.Fatalf("processor %d: event %d after %d", p, evs[i].seq, evs[i-1].seq)
			}
		}
	}
}

// With no consumer a REAL_TIME session keeps a backlog, then refuses writers with
// ERROR_LOG_FILE_FULL; a consumer attaching later receives the backlog first.
func TestRealTimeNoConsumer(t *testing.T) {
	k, err := New(Config{Version: winver.V2004, Processors: 2, RealTimeBacklog: 3})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	fr := startFile(t, k, "lonely", &Properties{BufferSize: 4, LogFileMode: logmode.RealTime, MinimumBuffers: 8, MaximumBuffers: 64})
	lost := 0
	for i := 0; i < 20; i++ {
		lost += fr.write(t, 100, 300)
		k.FlushTrace(fr.h, "", nil)
	}
	var q Properties
	k.QueryTrace(fr.h, "", &q)
	if lost == 0 || q.RealTimeBuffersLost == 0 || int(q.EventsLost) != lost {
		t.Fatalf("no consumer: %d writes refused, %d buffers lost, EventsLost %d", lost, q.RealTimeBuffersLost, q.EventsLost)
	}
	n := 0
	ctx, cancel := context.WithCancel(context.Background())
	err = k.Consume(ctx, "lonely", 0, func(b *etl.Buffer) error {
		n++
		if n == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n != 3 {
		t.Fatalf("consumer after the fact: %v after %d buffers, want the 3 kept", err, n)
	}
	if err := fr.k.EventWriteEx(fr.regs[0], &EventDescriptor{ID: 1, Level: 4}, &WriteOptions{Processor: 0}, make([]byte, 20)); err != nil {
		t.Fatalf("a consumer attached: writes are accepted again, got %v", err)
	}
}

// BUFFERING keeps a ring of MinimumBuffers that recycles the oldest; SaveBuffers writes
// what it holds, which is the newest events.
func TestBufferingRingSnapshot(t *testing.T) {
	fs := &etl.MemFS{}
	k, err := New(Config{Version: winver.V2004, Processors: 2, FileSystem: fs, Clock: clock.NewManualSource(10, 1), Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	fr := startFile(t, k, "ring", &Properties{BufferSize: 4, LogFileMode: logmode.Buffering, MinimumBuffers: 6, MaximumBuffers: 50})
	var q Properties
	k.QueryTrace(fr.h, "", &q)
	if q.MaximumBuffers != 6 {
		t.Errorf("BUFFERING MaximumBuffers %d, want MinimumBuffers 6", q.MaximumBuffers)
	}
	lost := fr.write(t, 600, 300)
	n, err := k.SaveBuffers("ring", "snap.etl")
	if err != nil {
		t.Fatal(err)
	}
	l := k.Session(fr.h)
	st := l.Stats()
	if st.BuffersOverwritten == 0 || st.BuffersWritten != 0 || int(st.EventsLost) != lost {
		t.Fatalf("ring: %d buffers overwritten, %d written, %d lost (writers told %d)", st.BuffersOverwritten, st.BuffersWritten, st.EventsLost, lost)
	}
	b, _ := fs.ReadFile("snap.etl")
	path := filepath.Join(t.TempDir(), "snap.etl")
	os.WriteFile(path, b, 0o644)
	events, _ := readEvents(t, path)
	// The ring gives up only its oldest buffer: no event is lost, and the snapshot holds
	// every buffer that is not free (six, less at most one per processor).
	if lost != 0 || n < 4 || n > 6 || uint64(len(events))+st.EventsOverwritten != uint64(len(fr.accepted)) {
		t.Fatalf("snapshot of %d buffers, %d events + %d overwritten, %d accepted", n, len(events), st.EventsOverwritten, len(fr.accepted))
	}
	got, want := perProc(events), perProc(fr.accepted)
	for p := range got {
		sameEvents(t, got[p], want[p][len(want[p])-len(got[p]):])
	}
	if _, err := k.SaveBuffers("ring", "snap2.etl"); err != nil {
		t.Fatalf("second snapshot: %v", err)
	}
	b2, _ := fs.ReadFile("snap2.etl")
	if !bytes.Equal(b2[abi.BufferHeaderSize*0+4096:], b[4096:]) {
		t.Error("a second snapshot with no new events differs from the first after the header")
	}
}

// BLOCKING: a writer short of buffers waits for the logger instead of losing its event;
// stopping the session wakes a waiting writer with ERROR_CANCELLED, uncounted.
func TestBlockingMode(t *testing.T) {
	k := fileKernel(t, winver.V2004, nil)
	gate := &stallSink{open: make(chan struct{})}
	close(gate.open)
	mode := uint32(logmode.Sequential | logmode.PrivateLogger | logmode.PrivateInProc | logmode.Blocking)
	p := &Properties{BufferSize: 4, LogFileMode: mode, MinimumBuffers: 4, MaximumBuffers: 4, LogFileName: filepath.Join(t.TempDir(), "blocking.etl"), Sink: gate}
	fr := startFile(t, k, "blocking", p)
	lost := fr.write(t, 3000, 500)
	var q Properties
	k.QueryTrace(fr.h, "", &q)
	if lost != 0 || q.EventsLost != 0 {
		t.Fatalf("BLOCKING with 4 buffers lost %d events (EventsLost %d)", lost, q.EventsLost)
	}

	// Now the logger cannot write: the next writer that needs a buffer waits.
	gate.mu.Lock()
	gate.open = make(chan struct{})
	gate.mu.Unlock()
	errc := make(chan error, 1)
	var tally Tally
	go func() {
		for {
			err := k.EventWriteEx(fr.regs[0], &EventDescriptor{ID: 1, Level: 4}, &WriteOptions{Processor: 0, Tally: &tally}, make([]byte, 500))
			if err != nil {
				errc <- err
				return
			}
		}
	}()
	// Decided by state, not by a time window: the writer is counted among the session's
	// waiters, and it has not returned.
	for l := k.Session(fr.h); l.Waiters() == 0; {
		select {
		case err := <-errc:
			t.Fatalf("writer returned %v instead of waiting", err)
		default:
			runtime.Gosched()
		}
	}
	stopped := make(chan error, 1)
	go func() { stopped <- k.StopTrace(fr.h, "", &q) }()
	// A stop that never woke the writer hangs here, and the test binary's timeout reports
	// every goroutine's stack.
	if err := <-errc; !errors.Is(err, winerr.ErrCancelled) {
		t.Fatalf("waiting writer woke with %v, want ERROR_CANCELLED", err)
	}
	// The tally says so: every write is delivered (none, if the first one waited), or
	// the one cancelled.
	if id := fr.h.LoggerID(); tally.Cancelled[id] != 1 || tally.Lost[id] != 0 {
		t.Errorf("tally: delivered %d, lost %d, cancelled %d; want any, 0, 1", tally.Delivered[id], tally.Lost[id], tally.Cancelled[id])
	}
	gate.mu.Lock()
	close(gate.open)
	gate.mu.Unlock()
	if err := <-stopped; err != nil {
		t.Fatal(err)
	}
	if q.EventsLost != 0 {
		t.Errorf("EventsLost %d after a cancelled wait, want 0", q.EventsLost)
	}
}

// stallSink blocks the logger while its gate is closed.
type stallSink struct {
	mu   sync.Mutex
	open chan struct{}
}

func (g *stallSink) WriteBuffer([]byte) error {
	g.mu.Lock()
	ch := g.open
	g.mu.Unlock()
	<-ch
	return nil
}

// A log file a running session writes is its own: a second StartTrace naming it (by
// another spelling too) is refused with ERROR_BAD_PATHNAME and the file keeps every event
// of its session; once that session stops, the name is free again.
func TestFileUsedByAnotherSession(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.etl")
	k := fileKernel(t, winver.V2004, nil)
	fr := startFile(t, k, "one", &Properties{LogFileName: path, LogFileMode: logmode.Sequential})
	fr.write(t, 500, 100)
	for _, name := range []string{path, filepath.Join(dir, ".", "x", "..", "a.etl")} {
		_, err := k.StartTrace("two", &Properties{LogFileName: name, LogFileMode: logmode.Sequential})
		if !errors.Is(err, winerr.ErrBadPathname) || !strings.Contains(err.Error(), "another session is writing it") {
			t.Fatalf("second session on %s: %v, want ERROR_BAD_PATHNAME naming the other session's use", name, err)
		}
	}
	fr.write(t, 500, 100)
	var q Properties
	if err := k.StopTrace(fr.h, "", &q); err != nil {
		t.Fatal(err)
	}
	events, _ := readEvents(t, path)
	sameEvents(t, events, fr.accepted)
	h, err := k.StartTrace("two", &Properties{LogFileName: path, LogFileMode: logmode.Sequential})
	if err != nil {
		t.Fatalf("the file of a stopped session: %v", err)
	}
	k.StopTrace(h, "", nil)
}

// A NEWFILE session whose next file is one another session writes does not truncate it:
// the roll-over fails, its buffers are counted lost, and the other file stays whole.
func TestFileRollOverOntoAnotherSessionsFile(t *testing.T) {
	dir := t.TempDir()
	k := fileKernel(t, winver.V2004, nil)
	other := startFile(t, k, "other", &Properties{LogFileName: filepath.Join(dir, "roll_2.etl"), LogFileMode: logmode.Sequential})
	other.write(t, 200, 100)
	k.FlushTrace(other.h, "", nil)
	for _, g := range fileProviders { // the roll-over session's events are its own
		if err := k.EnableTraceEx2(other.h, g, regentry.ControlDisable, 0, 0, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	fr := startFile(t, k, "roll", rollProps(filepath.Join(dir, "roll_%d.etl")))
	fr.write(t, 400, 300)
	var q Properties
	if err := k.StopTrace(fr.h, "", &q); err != nil {
		t.Fatal(err)
	}
	if q.LogBuffersLost == 0 {
		t.Errorf("the roll-over onto a file in use lost no buffers: LogBuffersLost 0")
	}
	for _, g := range fileProviders {
		if err := k.EnableTraceEx2(other.h, g, regentry.ControlEnable, 5, 0, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	other.write(t, 200, 100)
	if err := k.StopTrace(other.h, "", nil); err != nil {
		t.Fatal(err)
	}
	events, _ := readEvents(t, filepath.Join(dir, "roll_2.etl"))
	sameEvents(t, events, other.accepted)
}

// Every file of a NEWFILE series is finalized: the files a roll-over closed carry their
// EndTime, as the last one does, and read back whole.
func TestFileNewFileEveryHeaderFinalized(t *testing.T) {
	dir := t.TempDir()
	k := fileKernel(t, winver.V2004, nil)
	fr := startFile(t, k, "roll", rollProps(filepath.Join(dir, "roll_%d.etl")))
	fr.write(t, 2000, 300)
	if err := k.StopTrace(fr.h, "", nil); err != nil {
		t.Fatal(err)
	}
	paths, _ := filepath.Glob(filepath.Join(dir, "roll_*.etl"))
	if len(paths) < 3 {
		t.Fatalf("%d files", len(paths))
	}
	_, hs := readEvents(t, paths...)
	for i, h := range hs {
		if h.EndTime == 0 {
			t.Errorf("%s: EndTime 0, never finalized", filepath.Base(paths[i]))
		}
	}
}

// A NEWFILE roll-over that cannot create its file loses buffers (counted) until the file
// can be made, then goes on in that same file: the series is not stuck, and no number is
// skipped.
func TestFileNewFileRollOverRetried(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "d1"), 0o755); err != nil {
		t.Fatal(err)
	}
	k := fileKernel(t, winver.V2004, nil)
	fr := startFile(t, k, "roll", rollProps(filepath.Join(dir, "d%d", "a.etl")))
	fr.write(t, 400, 300)
	k.FlushTrace(fr.h, "", nil)
	var q Properties
	if err := k.ControlTrace(fr.h, "", &q, ControlQuery); err != nil {
		t.Fatal(err)
	}
	if q.LogBuffersLost == 0 {
		t.Fatalf("no buffer lost while d2 is missing")
	}
	for _, d := range []string{"d2", "d3"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	before := len(fr.accepted)
	fr.write(t, 40, 300)
	k.FlushTrace(fr.h, "", nil)
	if err := k.ControlTrace(fr.h, "", nil, ControlIncrementFile); err != nil {
		t.Fatal(err)
	}
	fr.write(t, 40, 300)
	if err := k.StopTrace(fr.h, "", nil); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, d := range []string{"d1", "d2", "d3"} {
		p := filepath.Join(dir, d, "a.etl")
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		paths = append(paths, p)
	}
	events, _ := readEvents(t, paths...)
	got := map[wrote]bool{}
	for _, e := range events {
		got[e] = true
	}
	for _, w := range fr.accepted[before:] {
		if !got[w] {
			t.Fatalf("event %+v, written once d2 existed, is in no file", w)
		}
	}
}

// ControlTrace flush puts a compressed session's events in its file, as it does an
// uncompressed one's: what the compression area held is written out, and the file, read
// while the session runs, holds every event written before the flush.
func TestFileCompressedFlush(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.etl")
	k := fileKernel(t, winver.V2004, nil)
	fr := startFile(t, k, "c", &Properties{LogFileName: path,
		LogFileMode: logmode.Sequential | logmode.Compressed | logmode.PrivateLogger | logmode.PrivateInProc})
	fr.write(t, 50, 100)
	if err := k.FlushTrace(fr.h, "", nil); err != nil {
		t.Fatal(err)
	}
	events, _ := readEvents(t, path)
	sameEvents(t, events, fr.accepted)
	fr.write(t, 50, 100)
	if err := k.StopTrace(fr.h, "", nil); err != nil {
		t.Fatal(err)
	}
	events, _ = readEvents(t, path)
	sameEvents(t, events, fr.accepted)
}

// APPEND: the finalized header counts the old file's buffers and the new ones, and the
// session's BuffersWritten says the same; a file of another processor count or clock is
// refused, as Windows requires the same BufferSize, NumberOfProcessors and ClockType.
func TestFileAppendCountsAndRefusals(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a.etl")
	for i, mode := range []uint32{logmode.Sequential, logmode.Sequential | logmode.Append} {
		k := fileKernel(t, winver.V2004, nil)
		fr := startFile(t, k, "s", &Properties{LogFileMode: mode, LogFileName: path, ClockType: 2})
		fr.write(t, 1000, 100)
		var q Properties
		if err := k.StopTrace(fr.h, "", &q); err != nil {
			t.Fatal(err)
		}
		_, hs := readEvents(t, path)
		if hs[0].BuffersWritten != q.BuffersWritten {
			t.Errorf("run %d: the header's BuffersWritten %d, ControlTrace query's %d", i, hs[0].BuffersWritten, q.BuffersWritten)
		}
	}
	for _, c := range []struct {
		procs int
		clock clock.Type
		want  string
	}{{4, 2, "processors"}, {2, 1, "clock type"}} {
		k, err := New(Config{Version: winver.V2004, Processors: c.procs})
		if err != nil {
			t.Fatal(err)
		}
		_, err = k.StartTrace("s", &Properties{LogFileMode: logmode.Sequential | logmode.Append, LogFileName: path, ClockType: c.clock})
		k.Close()
		if !errors.Is(err, winerr.ErrInvalidParameter) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("append with %d processors, clock %d: %v, want ERROR_INVALID_PARAMETER naming the %s", c.procs, c.clock, err, c.want)
		}
	}
}

// On a file system of the caller's (Config.FileSystem) a file is its cleaned name: a
// second session naming it is refused as on disk.
func TestFileUsedByAnotherSessionInMemory(t *testing.T) {
	k := fileKernel(t, winver.V2004, &etl.MemFS{})
	fr := startFile(t, k, "one", &Properties{LogFileName: "logs/a.etl", LogFileMode: logmode.Sequential})
	if _, err := k.StartTrace("two", &Properties{LogFileName: "logs/./a.etl", LogFileMode: logmode.Sequential}); !errors.Is(err, winerr.ErrBadPathname) {
		t.Fatalf("a second session on logs/./a.etl: %v, want ERROR_BAD_PATHNAME", err)
	}
	k.StopTrace(fr.h, "", nil)
}

// A PREALLOCATE start the disk has no room for is refused before the kernel opens the
// log file: a file of that name, a stopped session's, keeps its bytes (the kernel's file
// system passes the file system's Room on).
func TestPreallocateRefusalKeepsFile(t *testing.T) {
	fs := &etl.MemFS{}
	k := fileKernel(t, winver.V2004, fs)
	fr := startFile(t, k, "first", &Properties{BufferSize: 8, LogFileName: "a.etl", LogFileMode: logmode.Sequential})
	fr.write(t, 50, 100)
	if err := k.StopTrace(fr.h, "", &Properties{}); err != nil {
		t.Fatal(err)
	}
	before, _ := fs.ReadFile("a.etl")
	_, err := k.StartTrace("second", &Properties{BufferSize: 8, LogFileName: "a.etl", LogFileMode: logmode.Sequential | logmode.Preallocate, MaximumFileSize: 1 << 20})
	if !errors.Is(err, winerr.ErrDiskFull) {
		t.Fatalf("preallocating 1 TB on the 256 MB in-memory disk: %v, want ERROR_DISK_FULL", err)
	}
	if after, there := fs.ReadFile("a.etl"); !there || !bytes.Equal(after, before) || len(before) == 0 {
		t.Errorf("a.etl: %d bytes before the refused start, %d after (there: %v)", len(before), len(after), there)
	}
}

// A PREALLOCATE start naming a running session's log file is refused as any start naming
// it is (ERROR_BAD_PATHNAME), however much room it asks for: the file in use comes first.
func TestPreallocateOnAFileInUse(t *testing.T) {
	k := fileKernel(t, winver.V2004, &etl.MemFS{})
	fr := startFile(t, k, "first", &Properties{BufferSize: 8, LogFileName: "a.etl", LogFileMode: logmode.Sequential})
	defer k.StopTrace(fr.h, "", &Properties{})
	_, err := k.StartTrace("second", &Properties{BufferSize: 8, LogFileName: "a.etl", LogFileMode: logmode.Sequential | logmode.Preallocate, MaximumFileSize: 1 << 20})
	if !errors.Is(err, winerr.ErrBadPathname) {
		t.Fatalf("a 1 TB PREALLOCATE start on a running session's file: %v, want ERROR_BAD_PATHNAME", err)
	}
}

// A full SEQUENTIAL file costs every event written after it filled: LogBuffersLost counts
// their buffers, and LogEventsLost their events, so that every event a writer was told was
// accepted is in the file or counted (the events were in no event counter). The same for
// a compressed file, whose losses come in flushes of the compression area.
func TestFullFileCountsItsEvents(t *testing.T) {
	for _, c := range []struct {
		name   string
		mode   uint32
		rounds int // of 1,000 events of 100 bytes: several times the 1 MB file's worth
	}{
		{"sequential", logmode.Sequential, 20},
		{"compressed", logmode.Sequential | logmode.PrivateLogger | logmode.PrivateInProc | logmode.Compressed, 200},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := fileKernel(t, winver.V2004, nil)
			path := filepath.Join(t.TempDir(), "full.etl")
			fr := startFile(t, k, "full", &Properties{BufferSize: 4, MinimumBuffers: 16, MaximumBuffers: 64, MaximumFileSize: 1, LogFileMode: c.mode, LogFileName: path})
			refused := 0 // writes told ERROR_NOT_ENOUGH_MEMORY: EventsLost's
			for range c.rounds {
				refused += fr.write(t, 1000, 100)
				if err := k.FlushTrace(fr.h, "", nil); err != nil && !errors.Is(err, winerr.ErrLogFileFull) {
					t.Fatal(err)
				}
			}
			s := k.Session(fr.h)
			if err := k.StopTrace(fr.h, "", nil); err != nil && !errors.Is(err, winerr.ErrLogFileFull) {
				t.Fatal(err)
			}
			st := s.Stats() // final: the stop wrote, or lost, everything
			inFile, _ := readEvents(t, path)
			if st.LogBuffersLost == 0 || st.LogEventsLost == 0 {
				t.Fatalf("a full file lost %d buffers, %d events", st.LogBuffersLost, st.LogEventsLost)
			}
			if got := uint64(len(inFile)) + st.LogEventsLost; got != uint64(len(fr.accepted)) || st.EventsLost != uint64(refused) {
				t.Errorf("%d accepted, %d refused; %d in the file, LogEventsLost %d (%d buffers), EventsLost %d",
					len(fr.accepted), refused, len(inFile), st.LogEventsLost, st.LogBuffersLost, st.EventsLost)
			}
		})
	}
}
