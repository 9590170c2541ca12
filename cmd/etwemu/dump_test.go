package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/consumer"
	"github.com/etwemu/etwemu/decode"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/etw"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/internal/tltest"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/tracelogging"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The newcomer's two commands: demo -logfile makes a file, dump reads every record back.
func TestDemoLogfileThenDump(t *testing.T) {
	for _, extra := range [][]string{{"-max-file-size", "1"}, {"-compress", "-max-file-size", "1"}, {"-mode", "CIRCULAR,USE_KBYTES_FOR_SIZE", "-max-file-size", "256"}} {
		path := filepath.Join(t.TempDir(), "out.etl")
		var out, errb bytes.Buffer
		args := append([]string{"demo", "-logfile", path, "-duration", "100ms", "-progress", "0", "-processors", "2", "-buffer-kb", "16"}, extra...)
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", extra, code, out.String(), errb.String())
		}
		if !strings.Contains(out.String(), "read it back with: etwemu dump -summary "+path) {
			t.Errorf("%v: demo does not say how to read the file:\n%s", extra, out.String())
		}
		written := regexp.MustCompile(`buffers written +(\d+)`).FindStringSubmatch(out.String())
		out.Reset()
		if code := run([]string{"dump", "-json", path}, &out, &errb); code != 0 {
			t.Fatalf("%v: dump exit %d: %s", extra, code, errb.String())
		}
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 1<<20)
		var header map[string]any
		records, headers := 0, 0
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("dump -json line %q: %v", sc.Text(), err)
			}
			if header == nil {
				header = m
				continue
			}
			if m["buffer"] == float64(0) { // the header buffer: EventTrace records only
				if m["kind"] != "system" || !strings.HasPrefix(fmt.Sprint(m["hookName"]), "EventTrace/") {
					t.Fatalf("header buffer record %v", m)
				}
				headers++
				continue
			}
			if m["kind"] != "event" || m["provider"] == "" {
				t.Fatalf("record %v", m)
			}
			records++
		}
		if header["logger"] != "etwemu-demo" || records == 0 || headers != 2 {
			t.Errorf("%v: header %v, %d records, %d in the header buffer (want the header event and PartitionInfoExtension)", extra, header, records, headers)
		}
		if w, _ := strconv.Atoi(written[1]); header["buffersWritten"] != float64(w) {
			t.Errorf("%v: file header says %v buffers written, the demo's query %d", extra, header["buffersWritten"], w)
		}
	}
}

func TestLogsave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ring.etl")
	var out, errb bytes.Buffer
	if code := run([]string{"logsave", "-events", "5000", "-buffers", "4", "-o", path}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	m := regexp.MustCompile(`newest (\d+) events`).FindStringSubmatch(out.String())
	if m == nil || !strings.Contains(out.String(), "overwritten") {
		t.Fatalf("logsave output:\n%s", out.String())
	}
	out.Reset()
	run([]string{"dump", path}, &out, &errb)
	if !strings.Contains(out.String(), "\n"+fmt.Sprint(atoi(t, m[1])+2)+" records (2 in the header buffer)\n") {
		t.Errorf("dump of the saved ring does not hold the %s newest events:\n%s", m[1], tail(out.String()))
	}
}

// logsave -json prints one object whose figures agree with each other and with the file:
// the events kept are those written, less those refused and overwritten, and dump finds
// them in the saved ring.
func TestLogsaveJSON(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ring.etl")
	var out, errb bytes.Buffer
	if code := run([]string{"logsave", "-json", "-events", "5000", "-buffers", "4", "-o", path}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	var r logsaveResult
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	if r.EventsWritten != 5000 || r.RingBuffers != 4 || r.File != path || r.EventsKept == 0 ||
		r.EventsKept != uint64(r.EventsWritten-r.EventsRefused)-r.EventsOverwritten || r.BuffersSaved == 0 {
		t.Fatalf("logsave -json: %+v", r)
	}
	out.Reset()
	run([]string{"dump", path}, &out, &errb)
	if !strings.Contains(out.String(), "\n"+fmt.Sprint(r.EventsKept+2)+" records (2 in the header buffer)\n") {
		t.Errorf("dump of the saved ring does not hold the %d events kept:\n%s", r.EventsKept, tail(out.String()))
	}
}

// dump says when a file holds another number of buffers than its header's BuffersWritten
// (circular files), and why, and is silent when they agree (6.2 compressed files too,
// whose header counts buffers as real Windows 8 files do).
func TestDumpBufferCountNote(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-mode", "CIRCULAR", "-max-file-size", "1"}, "a circular file's header counts every buffer"},
		{[]string{"-compress", "-version", "6.2"}, ""},
		{[]string{"-mode", "SEQUENTIAL"}, ""},
	} {
		path := filepath.Join(dir, "f.etl")
		var out, errb bytes.Buffer
		// 64 buffers of 64 KB hold every event the demo writes (1.4 MB of records), so
		// none is lost however long the logger waits for a processor, and the circular
		// file of 1 MB always wraps.
		args := append([]string{"demo", "-logfile", path, "-events", "20000", "-min-buffers", "64", "-progress", "0"}, c.args...)
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errb.String())
		}
		out.Reset()
		if code := run([]string{"dump", "-payload", "0", path}, &out, &errb); code != 0 {
			t.Fatalf("%v: dump exit %d: %s", c.args, code, errb.String())
		}
		m := regexp.MustCompile(`the file holds (\d+) buffers, the header says BuffersWritten (\d+)`).FindStringSubmatch(out.String())
		switch {
		case c.want == "" && m != nil:
			t.Errorf("%v: a note where the counts agree: %s", c.args, m[0])
		case c.want != "" && (m == nil || m[1] == m[2] || !strings.Contains(out.String(), c.want)):
			t.Errorf("%v: no note saying %q:\n%s", c.args, c.want, tail(out.String()))
		}
	}
}

// dump -buffers prints each buffer's header as stored: buffer 0 with CurrentOffset at
// SavedOffset, as real files have it; a data buffer's CurrentOffset past its end, by
// BufferSize where the buffer was closed to be flushed (the last one, with the flush
// marker) and by the refused record where a reservation did not fit; and record counts
// that add up to dump's own.
func TestDumpBuffers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "b.etl")
	var out, errb bytes.Buffer
	args := []string{"demo", "-logfile", path, "-events", "3000", "-processors", "1", "-buffer-kb", "4", "-min-buffers", "64", "-progress", "0"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("demo exit %d: %s", code, errb.String())
	}
	out.Reset()
	if code := run([]string{"dump", "-payload", "0", path}, &out, &errb); code != 0 {
		t.Fatalf("dump exit %d: %s", code, errb.String())
	}
	m := regexp.MustCompile(`\n(\d+) records \(2 in the header buffer\)`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("dump:\n%s", tail(out.String()))
	}
	out.Reset()
	if code := run([]string{"dump", "-buffers", "-json", path}, &out, &errb); code != 0 {
		t.Fatalf("dump -buffers exit %d: %s", code, errb.String())
	}
	var rows []dumpBuffer
	sc := bufio.NewScanner(&out)
	for first := true; sc.Scan(); first = false {
		if first {
			continue // the file header
		}
		var d dumpBuffer
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		rows = append(rows, d)
	}
	if len(rows) < 3 {
		t.Fatalf("%d buffers", len(rows))
	}
	records := 0
	for i, d := range rows {
		records += d.Records
		last := i == len(rows)-1
		switch {
		case i == 0:
			if d.Type != "HEADER" || d.CurrentOffset != d.SavedOffset || d.Offset != d.SavedOffset || d.Records != 2 {
				t.Errorf("header buffer %+v", d)
			}
		case d.Type != "GENERIC" || d.Offset != d.SavedOffset || d.Sequence != int64(i):
			t.Errorf("buffer %d: %+v", i, d)
		case last && (d.Flags != "FLUSH_MARKER|PROC_INDEX" || d.CurrentOffset != d.SavedOffset+d.BufferSize):
			t.Errorf("last buffer, flushed at stop: %+v, want the flush marker and CurrentOffset = SavedOffset + BufferSize", d)
		case !last && (d.CurrentOffset <= d.BufferSize || d.CurrentOffset-d.SavedOffset > 0x200 && d.CurrentOffset-d.SavedOffset != d.BufferSize):
			t.Errorf("buffer %d: %+v: CurrentOffset is neither past the end by the refused record nor by BufferSize", i, d)
		}
	}
	if want := atoi(t, m[1]); records != want {
		t.Errorf("the buffers hold %d records, dump read %d", records, want)
	}
	out.Reset()
	if code := run([]string{"dump", "-buffers", "-limit", "2", path}, &out, &errb); code != 0 || !strings.Contains(out.String(), "CurrentOffset") || !strings.HasSuffix(out.String(), "\n2 buffers\n") {
		t.Errorf("dump -buffers -limit 2: exit %d\n%s", code, out.String())
	}
	errb.Reset()
	if code := run([]string{"dump", "-buffers", "-summary", path}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "-buffers") {
		t.Errorf("dump -buffers -summary: exit %d, %q", code, errb.String())
	}
}

// A header never finalized (EndTime 0, BuffersWritten 0, as a running session's file
// copied from a Windows machine holds) gets its own reason.
func TestDumpNoteUnfinalized(t *testing.T) {
	path := filepath.Join(t.TempDir(), "live.etl")
	var out, errb bytes.Buffer
	if code := run([]string{"demo", "-logfile", path, "-events", "2000", "-min-buffers", "64", "-progress", "0"}, &out, &errb); code != 0 {
		t.Fatalf("demo exit %d: %s", code, errb.String())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// The header event's payload follows the 0x48-byte buffer header and the 0x20-byte
	// system header; EndTime is at +0x10 in it, BuffersWritten at +0x24.
	const payload = abi.BufferHeaderSize + etl.SystemHeaderSize
	for i := 0; i < 8; i++ {
		b[payload+0x10+i] = 0
	}
	for i := 0; i < 4; i++ {
		b[payload+0x24+i] = 0
	}
	writeFile(t, path, b)
	out.Reset()
	if code := run([]string{"dump", "-buffers", path}, &out, &errb); code != 0 {
		t.Fatalf("dump exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "BuffersWritten 0: the header was never finalized (EndTime 0)") {
		t.Errorf("no note on the unfinalized header:\n%s", tail(out.String()))
	}
	if !strings.Contains(out.String(), ", end none (the header was never finalized") {
		t.Errorf("the header line leaves the end time blank instead of saying it was never set:\n%s", out.String())
	}
}

func TestDumpErrors(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"dump"}, &out, &errb); code != 2 {
		t.Errorf("dump without a file: exit %d", code)
	}
	bad := filepath.Join(t.TempDir(), "bad.etl")
	writeFile(t, bad, bytes.Repeat([]byte{0x11}, 300))
	if code := run([]string{"dump", bad}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "offset 0x") {
		t.Errorf("dump of garbage: exit %d, %q", code, errb.String())
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func tail(s string) string {
	if len(s) > 400 {
		return s[len(s)-400:]
	}
	return s
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// The README's file example: demo -events keeps the file small and complete (no buffer
// refused for the file's size), dump -summary accounts for every event the demo wrote in
// a few lines, and dump -limit prints just that many records.
func TestReadmeFileExample(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.etl")
	var out, errb bytes.Buffer
	// 32 buffers of 64 KB hold all 10000 events (1.4 MB of records at most), so none is
	// lost however long the logger goroutine waits for a processor.
	if code := run([]string{"demo", "-logfile", path, "-events", "10000", "-min-buffers", "32", "-progress", "0", "-processors", "2"}, &out, &errb); code != 0 {
		t.Fatalf("demo: exit %d\n%s%s", code, out.String(), errb.String())
	}
	report := out.String()
	num := func(s, re string) int {
		t.Helper()
		m := regexp.MustCompile(re).FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("no %q in:\n%s", re, s)
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	written := num(report, `events written\s+(\d+)`)
	lost, bufLost := num(report, `events lost\s+(\d+)`), num(report, `LogBuffersLost (\d+)`)
	if lost != 0 || bufLost != 0 || written == 0 || written > 10000 {
		t.Fatalf("demo -events 10000: %d events written, %d lost, LogBuffersLost %d:\n%s", written, lost, bufLost, report)
	}
	out.Reset()
	if code := run([]string{"dump", "-summary", path}, &out, &errb); code != 0 {
		t.Fatalf("dump -summary: exit %d: %s", code, errb.String())
	}
	sum := out.String()
	if got := num(sum, `(\d+) records in`) - num(sum, `\((\d+) in the header buffer\)`); got != written {
		t.Fatalf("dump -summary counts %d records, the demo wrote %d:\n%s", got, written, sum)
	}
	if lines := strings.Count(sum, "\n"); lines > 60 {
		t.Fatalf("dump -summary printed %d lines", lines)
	}
	for _, id := range []string{" 0 ", " 15 "} { // Demo.Network is fully enabled: ids 0..15
		if !strings.Contains(sum, id) {
			t.Errorf("dump -summary lacks event id%s:\n%s", id, sum)
		}
	}
	out.Reset()
	if code := run([]string{"dump", "-limit", "5", path}, &out, &errb); code != 0 {
		t.Fatalf("dump -limit 5: exit %d: %s", code, errb.String())
	}
	if got := num(out.String(), `\n(\d+) records \(`); got != 5 {
		t.Fatalf("dump -limit 5 printed %d records:\n%s", got, out.String())
	}
}

// dump -sort time merges the processors' buffers: timestamps never go back, both
// processors appear, and the same records come out as in file order.
func TestDumpSortTime(t *testing.T) {
	// Two processors write in turn on a manual clock: processor 0 at odd ticks, 1 at
	// even ones, so file order (buffer by buffer) and time order differ on every record.
	path := filepath.Join(t.TempDir(), "two.etl")
	clk := clock.NewManualSource(1, 0)
	k, err := emu.New(emu.Config{Processors: 2, Clock: clk, Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	h, err := k.StartTrace("two", &emu.Properties{LogFileName: path, BufferSize: 4})
	if err != nil {
		t.Fatal(err)
	}
	reg, err := k.EventRegister(guid.FromName("two"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.EnableTraceEx2(h, guid.FromName("two"), regentry.ControlEnable, 0, 0, 0, nil); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if err := k.EventWriteEx(reg, &emu.EventDescriptor{ID: uint16(i)}, &emu.WriteOptions{Processor: i % 2}, make([]byte, 40)); err != nil {
			t.Fatal(err)
		}
		clk.Advance(1)
	}
	if err := k.StopTrace(h, "", nil); err != nil {
		t.Fatal(err)
	}
	k.Close()
	var out, errb bytes.Buffer
	read := func(args ...string) []map[string]any {
		out.Reset()
		if code := run(append([]string{"dump", "-json"}, append(args, path)...), &out, &errb); code != 0 {
			t.Fatalf("dump %v: exit %d: %s", args, code, errb.String())
		}
		var recs []map[string]any
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatal(err)
			}
			recs = append(recs, m)
		}
		return recs[1:] // the file header
	}
	byFile, byTime := read(), read("-sort", "time")
	if len(byFile) != len(byTime) || len(byTime) < 200 {
		t.Fatalf("%d records in file order, %d by time", len(byFile), len(byTime))
	}
	cpus, swaps := map[float64]int{}, 0
	for i, r := range byTime {
		cpus[r["processor"].(float64)]++
		if i > 0 && r["timeStamp"].(float64) < byTime[i-1]["timeStamp"].(float64) {
			t.Fatalf("record %d goes back in time: %v after %v", i, r["timeStamp"], byTime[i-1]["timeStamp"])
		}
		if r["processor"] != byFile[i]["processor"] || r["offset"] != byFile[i]["offset"] {
			swaps++
		}
	}
	if len(cpus) != 2 || swaps == 0 {
		t.Errorf("records per processor %v, %d placed differently from file order", cpus, swaps)
	}
	if got := read("-sort", "time", "-limit", "5"); len(got) != 5 || got[4]["timeStamp"] != byTime[4]["timeStamp"] {
		t.Errorf("-sort time -limit 5: %d records", len(got))
	}

	// A file of more buffers than the index takes is refused, after the header buffer.
	defer func(n int) { mergeIndexMax = n }(mergeIndexMax)
	mergeIndexMax = 2
	out.Reset()
	errb.Reset()
	if code := run([]string{"dump", "-sort", "time", path}, &out, &errb); code != 1 || strings.Count(out.String(), "\ncpu ") != 2 || !strings.Contains(errb.String(), "-sort time indexes every buffer of the file, and it has more than 2: use -sort file") {
		t.Errorf("-sort time past the index's bound: exit %d, stdout %q, stderr %q", code, out.String(), errb.String())
	}
}

// TestDumpTraceLogging writes an event with every field go-winio's etw package writes,
// and checks that dump prints each field's name and value as the consumer decodes them
// from the same file (the consumer's reading is checked against the written values in
// package etw's tests).
func TestDumpTraceLogging(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tl.etl")
	k, err := emu.New(emu.Config{Processors: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	cases := tltest.EveryField()
	tltest.WriteFile(t, k, path, cases)
	var read *consumer.Event
	c := consumer.NewConsumerOn(context.Background(), k).FromFiles(path)
	c.EventCallback = func(e *consumer.Event) error { read = e; return nil }
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err != nil || read == nil {
		t.Fatalf("consumer: %v, event %v", err, read)
	}
	tltest.CheckFields(t, "consumer", read.Fields, cases)

	var out, errOut bytes.Buffer
	if rc := runDump([]string{path}, &out, &errOut); rc != 0 {
		t.Fatalf("dump exit %d: %s", rc, errOut.String())
	}
	want := `(Etwemu.Test.File) id 0 v0 level 4`
	line := ""
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, want) {
			line = l
		}
	}
	if text := `event "Everything" {` + tracelogging.Text(read.Fields) + `}`; !strings.Contains(line, text) {
		t.Fatalf("dump's line for the event:\n%s\nlacks\n%s", line, text)
	}

	out.Reset()
	if rc := runDump([]string{"-json", path}, &out, &errOut); rc != 0 {
		t.Fatalf("dump -json exit %d: %s", rc, errOut.String())
	}
	var rec struct {
		Event  string `json:"event"`
		Fields []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Value any    `json:"value"`
		} `json:"fields"`
	}
	for _, l := range strings.Split(out.String(), "\n") {
		if strings.Contains(l, `"event":"Everything"`) {
			dec := json.NewDecoder(strings.NewReader(l))
			dec.UseNumber() // 64-bit values would lose digits as float64
			if err := dec.Decode(&rec); err != nil {
				t.Fatal(err)
			}
		}
	}
	if rec.Event != "Everything" || len(rec.Fields) != len(read.Fields) {
		t.Fatalf("dump -json: event %q with %d fields, the consumer %d", rec.Event, len(rec.Fields), len(read.Fields))
	}
	for i, f := range read.Fields {
		j := rec.Fields[i]
		typ := f.In.String()
		if f.Array {
			typ += "[]"
		}
		// dump -json gives numbers, bools and strings as JSON values, the rest (and
		// hexadecimal or otherwise formatted numbers) as tracelogging.FormatValue writes
		// them.
		got, want := fmt.Sprint(j.Value), fmt.Sprint(f.Value)
		if _, ok := j.Value.(json.Number); !ok {
			if _, ok := j.Value.(bool); !ok {
				if got != want {
					want = fmt.Sprint(decode.FieldValue(f))
				}
			}
		}
		if j.Name != f.Name || j.Type != typ || got != want {
			t.Errorf("dump -json field %d: %s %s %s; consumer %s %s %s", i, j.Name, j.Type, got, f.Name, typ, want)
		}
	}
}

// A damaged file: every dump mode prints what it read, then names the file and the damage
// on stderr and exits 1. A file cut at a buffer boundary says how many of the buffers its
// header counts it holds; a bad record costs its buffer, not the rest of the file.
func TestDumpDamagedFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "whole.etl")
	var out, errb bytes.Buffer
	if code := run([]string{"demo", "-logfile", path, "-events", "3000", "-processors", "1", "-buffer-kb", "4", "-min-buffers", "64", "-progress", "0"}, &out, &errb); code != 0 {
		t.Fatalf("demo: exit %d: %s", code, errb.String())
	}
	whole, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	const bs = 4096
	nbuf := len(whole) / bs
	bad := append([]byte{}, whole...)
	copy(bad[3*bs+72:], []byte{0xF0, 0xFF, 0x13, 0xC0}) // buffer 3's first record runs past its buffer
	// The header buffer's second record (after the log-file header event) of size 0.
	badHeader := append([]byte{}, whole...)
	second := 0x48 + (int(binary.LittleEndian.Uint16(whole[0x48+4:]))+7)&^7
	binary.LittleEndian.PutUint16(badHeader[second+4:], 0)
	count := func(mode []string, p string) (int, string, int) {
		t.Helper()
		out.Reset()
		errb.Reset()
		code := run(append(append([]string{"dump"}, mode...), p), &out, &errb)
		s := out.String()
		var n int
		switch {
		case len(mode) > 0 && mode[0] == "-buffers":
			n = atoi(t, regexp.MustCompile(`\n(\d+) buffers\n`).FindStringSubmatch(s)[1])
		case len(mode) > 0 && mode[0] == "-summary":
			n = atoi(t, regexp.MustCompile(`\n(\d+) records in`).FindStringSubmatch(s)[1])
		case len(mode) > 0 && mode[0] == "-json":
			n = strings.Count(s, "\n") - 1 + 2 // the header line; the header buffer's two records
		default:
			n = atoi(t, regexp.MustCompile(`\n(\d+) records \(`).FindStringSubmatch(s)[1])
		}
		return code, errb.String(), n
	}
	for _, mode := range [][]string{{}, {"-json"}, {"-summary"}, {"-sort", "time"}, {"-buffers"}} {
		_, _, all := count(mode, path)
		cut := filepath.Join(dir, "cut.etl")
		writeFile(t, cut, whole[:(nbuf/2)*bs])
		code, msg, n := count(mode, cut)
		if code != 1 || !strings.Contains(msg, cut+": ") || !strings.Contains(msg, fmt.Sprintf("holds %d of %d buffers", nbuf/2, nbuf)) || n == 0 || n >= all {
			t.Errorf("%v cut at a buffer boundary: exit %d, %d of %d, %q", mode, code, n, all, msg)
		}
		mid := filepath.Join(dir, "mid.etl")
		writeFile(t, mid, whole[:(nbuf/2)*bs+1000])
		if code, msg, n2 := count(mode, mid); code != 1 || !strings.Contains(msg, "runs past the end of the file") || n2 != n {
			t.Errorf("%v cut inside a buffer: exit %d, %d (want %d), %q", mode, code, n2, n, msg)
		}
		badf := filepath.Join(dir, "bad.etl")
		writeFile(t, badf, bad)
		code, msg, n = count(mode, badf)
		if code != 1 || !strings.Contains(msg, "file offset 0x3000") || !strings.Contains(msg, "1 damaged buffer(s) skipped") || n < all*3/4 {
			t.Errorf("%v bad record: exit %d, %d of %d, %q", mode, code, n, all, msg)
		}
		// A marker no kind has (the helper's flipped bytes): the record is shown as of an
		// unknown kind, and the rest of its buffer, which cannot be framed, is damage.
		unknown := append([]byte{}, whole...)
		copy(unknown[3*bs+72:], []byte{0xDE, 0xAD, 0xBE, 0xEF})
		writeFile(t, badf, unknown)
		code, msg, n = count(mode, badf)
		if code != 1 || !strings.Contains(msg, "file offset 0x3000: offset 0x48: unknown record marker 0xefbeadde") || !strings.Contains(msg, "1 damaged buffer(s) skipped") || n < all*3/4 {
			t.Errorf("%v unknown marker: exit %d, %d of %d, %q", mode, code, n, all, msg)
		}
		if len(mode) > 0 && mode[0] == "-summary" && !regexp.MustCompile(`\n\s+unknown\s+-\s+1\s+0\s+-\s+-\n`).MatchString(out.String()) {
			t.Errorf("dump -summary: the unknown record's row is not one record of no time:\n%s", out.String())
		}
		// A bad record in the header buffer costs the rest of the header buffer only.
		writeFile(t, badf, badHeader)
		code, msg, n = count(mode, badf)
		if code != 1 || !strings.Contains(msg, "file offset 0x0") || !strings.Contains(msg, "(ERROR_FILE_CORRUPT (1392))") || n < all-2 {
			t.Errorf("%v bad record in the header buffer: exit %d, %d of %d, %q", mode, code, n, all, msg)
		}
	}
}

// dump -summary names the demo's providers and the header buffer's EventTrace records.
func TestDumpSummaryNames(t *testing.T) {
	path := filepath.Join(t.TempDir(), "demo.etl")
	var out, errb bytes.Buffer
	if code := run([]string{"demo", "-logfile", path, "-events", "2000", "-min-buffers", "64", "-progress", "0"}, &out, &errb); code != 0 {
		t.Fatalf("demo: exit %d: %s", code, errb.String())
	}
	out.Reset()
	if code := run([]string{"dump", "-summary", path}, &out, &errb); code != 0 {
		t.Fatalf("dump -summary: exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, want := range []string{"Demo.Network", "Demo.Storage", "EventTrace/Header", "EventTrace/PartitionInfoExtension"} {
		if !strings.Contains(s, want) {
			t.Errorf("dump -summary lacks %s:\n%s", want, s)
		}
	}
	if strings.Contains(s, "hook 0x") {
		t.Errorf("dump -summary shows a hook by number:\n%s", s)
	}
}

// First contact: a file that is not an ETL file says so; a flag after the file says that
// flags come first.
func TestDumpFirstContact(t *testing.T) {
	text := filepath.Join(t.TempDir(), "notes.md")
	writeFile(t, text, bytes.Repeat([]byte("## notes, not a trace\n"), 20))
	var out, errb bytes.Buffer
	if code := run([]string{"dump", text}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "not an ETL file") {
		t.Errorf("dump of text: exit %d, %q", code, errb.String())
	}
	errb.Reset()
	if code := run([]string{"dump", text, "-limit", "2"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "flags come before the FILE.etl") {
		t.Errorf("dump FILE -limit 2: exit %d, %q", code, errb.String())
	}
}

// Times keep all seven digits of a FILETIME's 100 ns ticks, trailing zeros too, so that
// a column of them lines up.
func TestFileTimeDigits(t *testing.T) {
	const epoch = 11644473600                              // seconds from 1601 to 1970
	ft := (int64(1767323045)+epoch)*10_000_000 + 1_000_000 // 2026-01-02T03:04:05.1Z
	if got, want := fileTime(ft), "2026-01-02T03:04:05.1000000Z"; got != want {
		t.Errorf("fileTime = %q, want %q", got, want)
	}
}

// dump -summary keeps a row for at most maxSummaryGroups groups, whatever the file: the
// records of the others are summed in one row, so that every record is still counted.
func TestSummaryGroupsBounded(t *testing.T) {
	s := summary{rows: map[summaryKey]*summaryRow{}}
	const n = maxSummaryGroups + 50
	for i := range n {
		e := &decode.Event{}
		e.Kind, e.Size, e.TimeStamp = etl.KindEventHeader, 100, int64(i)
		e.Provider = guid.FromName(strconv.Itoa(i)) // a provider of its own for each record
		s.add(e)
	}
	if len(s.rows) != maxSummaryGroups || s.other.Count != 50 {
		t.Fatalf("%d rows and %d records in other, want %d and 50", len(s.rows), s.other.Count, maxSummaryGroups)
	}
	var out bytes.Buffer
	if err := s.print(&out, false, n, 0); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), fmt.Sprintf("the groups past the first %d", maxSummaryGroups)) {
		t.Errorf("the text names no other row:\n%s", out.String()[max(0, out.Len()-400):])
	}
	out.Reset()
	if err := s.print(&out, true, n, 0); err != nil || !strings.Contains(out.String(), `"kind":"other"`) {
		t.Errorf("the JSON has no other row (%v)", err)
	}
}

// What a file names is its own bytes: a provider's name or a field's name with an escape
// sequence, a newline and a bidirectional override comes out of dump, its records and
// its summary, escaped, one record a line, nothing a terminal would act on.
func TestDumpEscapesNamesFromTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "names.etl")
	k, err := emu.New(emu.Config{Processors: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	h, err := k.StartTrace("Names", &emu.Properties{LogFileMode: emu.FileModeSequential, LogFileName: path, BufferSize: 64})
	if err != nil {
		t.Fatal(err)
	}
	p, err := etw.NewProviderWithOptions("Evil\x1b[31mRED\nFAKE LINE\u202e", etw.WithKernel(k))
	if err != nil {
		t.Fatal(err)
	}
	if err := k.EnableTraceEx2(h, p.ID, emu.EnableProvider, 5, 0, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteEvent("Named", nil, etw.WithFields(etw.StringField("F\x1b]0;title\x07", "v"))); err != nil {
		t.Fatal(err)
	}
	if err := k.StopTrace(h, "", &emu.Properties{}); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{path}, {"-summary", path}} {
		var out, errOut bytes.Buffer
		if rc := runDump(args, &out, &errOut); rc != 0 {
			t.Fatalf("dump %q: exit %d: %s", args, rc, errOut.String())
		}
		s := out.String()
		if strings.ContainsAny(s, "\x1b\x07\u202e") || strings.Contains(s, "\nFAKE") || !strings.Contains(s, `Evil\x1b[31mRED\x0aFAKE LINE\u202e`) {
			t.Errorf("dump %q printed:\n%q", args, s)
		}
		if args[0] == path && !strings.Contains(s, `{F\x1b]0;title\x07="v"}`) {
			t.Errorf("dump's event line lacks the field's name escaped:\n%q", s)
		}
	}
}

// A header's times that are no time (a hostile StartTime, an unfinalized EndTime) print
// as none with the field's value, not as an empty word.
func TestHeaderTimesThatAreNone(t *testing.T) {
	var out bytes.Buffer
	if err := printHeader(&out, nil, false, etl.LogfileHeader{StartTime: -1 << 63, EndTime: -5}); err != nil {
		t.Fatal(err)
	}
	if s := out.String(); !strings.Contains(s, "start none (StartTime -9223372036854775808 is no time), end none (EndTime -5 is no time)") {
		t.Errorf("header:\n%s", s)
	}
}
