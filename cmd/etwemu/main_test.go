package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

func TestHelpAndUnknownCommands(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "demo") {
		t.Fatalf("help: code %d, %q", code, out.String())
	}
	out.Reset()
	if code := run([]string{"help", "demo"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "-buffer-kb") {
		t.Fatalf("help demo: code %d, %q", code, out.String())
	}
	errb.Reset()
	if code := run([]string{"help", "demo", "dump"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "one command at a time") || strings.Contains(errb.String(), "help dump") {
		t.Fatalf("help demo dump: code %d, %q", code, errb.String())
	}
	// A subcommand's help is its command's, as the hint of modes check's usage says.
	out.Reset()
	if code := run([]string{"help", "modes", "check"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "Usage: etwemu modes check") || !strings.Contains(out.String(), "-max-file-size") {
		t.Fatalf("help modes check: code %d, %q", code, out.String())
	}
	errb.Reset()
	if code := run([]string{"nonsense"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown command "nonsense"`) {
		t.Fatalf("unknown command: code %d, %q", code, errb.String())
	}
	if code := run(nil, &out, &errb); code != 2 {
		t.Fatalf("no command: code %d", code)
	}
	if code := run([]string{"demo", "-payload", "-1"}, &out, &errb); code != 2 {
		t.Fatalf("bad payload: code %d", code)
	}
	if code := run([]string{"demo", "-version", "7"}, &out, &errb); code != 2 {
		t.Fatalf("bad version: code %d", code)
	}
}

// The demo's report agrees with itself: the writers' lost count equals the session's
// EventsLost, and it wrote events. The losses are made by state, not by timing: the
// logger is held at its first buffer until the writers, finding no free buffer, have
// lost events.
func TestDemoReport(t *testing.T) {
	holdLoggerUntilLoss(t)
	var out, errb bytes.Buffer
	// -events, not -duration, ends the run: the writers cannot reach it while the logger
	// is held, as the four small buffers hold some 140 events.
	code := run([]string{"demo", "-duration", "1h", "-events", "20000", "-progress", "100ms", "-processors", "2", "-payload", "32",
		"-buffer-kb", "4", "-min-buffers", "4", "-max-buffers", "4"}, &out, &errb)
	if code != 0 {
		t.Fatalf("demo exited %d: %s", code, errb.String())
	}
	s := out.String()
	num := func(re string) uint64 {
		m := regexp.MustCompile(re).FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("report lacks %q:\n%s", re, s)
		}
		n, _ := strconv.ParseUint(m[1], 10, 64)
		return n
	}
	written := num(`events written\s+(\d+)`)
	lost := num(`events lost\s+(\d+)`)
	if writersLost := num(`the writers counted (\d+)`); writersLost != lost {
		t.Fatalf("writers counted %d lost, the session %d", writersLost, lost)
	}
	if written == 0 || lost == 0 {
		t.Fatalf("written %d lost %d: the logger held at its first buffer should both pass and lose events", written, lost)
	}
	if !strings.Contains(s, "M events/s") || !strings.Contains(s, "buffers per processor  cpu0=") {
		t.Fatalf("report incomplete:\n%s", s)
	}
}

// holdLoggerUntilLoss holds the demo's logger at its first buffer until the writers,
// finding no free buffer, have lost events: losses made by state, not by timing.
func holdLoggerUntilLoss(t *testing.T) {
	demoFirstBuffer = func(_ context.Context, s *emu.Session) {
		for s.Stats().EventsLost == 0 {
			runtime.Gosched()
		}
	}
	t.Cleanup(func() { demoFirstBuffer = nil })
}

// demo -json prints one JSON object and nothing else, with the report's figures: the
// same run as TestDemoReport's, losses made by holding the logger.
func TestDemoReportJSON(t *testing.T) {
	holdLoggerUntilLoss(t)
	var out, errb bytes.Buffer
	code := run([]string{"demo", "-json", "-duration", "1h", "-events", "20000", "-processors", "2", "-payload", "32",
		"-buffer-kb", "4", "-min-buffers", "4", "-max-buffers", "4"}, &out, &errb)
	if code != 0 {
		t.Fatalf("demo exited %d: %s", code, errb.String())
	}
	var r demoResult
	dec := json.NewDecoder(&out)
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	if dec.More() {
		t.Errorf("more than one JSON value on stdout")
	}
	if r.EventsWritten != 20000 || r.EventsLost == 0 || uint64(r.EventsLost) != r.WritersCountedLost || r.Processors != 2 ||
		len(r.BuffersPerProcessor) != 2 || r.RecordBytes != 112 || r.LoggerMode != "REAL_TIME" || r.Conclusions == "" || r.EventsPerSecond <= 0 {
		t.Errorf("demo -json: %+v", r)
	}
}

// etwemu bench runs the short suite with a progress line per benchmark and prints a
// table with one row per benchmark, the floors at 1.00.
func TestBenchTable(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"bench", "-benchtime", "2ms"}, &out, &errb); code != 0 {
		t.Fatalf("bench: code %d, %s", code, errb.String())
	}
	s := out.String()
	// Progress goes to stderr, so that etwemu bench > table.md holds only the table.
	progress := regexp.MustCompile(`(?m)^  \[(\d+)/(\d+)\] `).FindAllStringSubmatch(errb.String(), -1)
	if strings.Contains(s, "] payload=") {
		t.Fatalf("progress lines on stdout:\n%s", s)
	}
	rows := regexp.MustCompile("(?m)^\\| `([^`]+)` \\| ([0-9.]+) \\| [0-9]+ % \\|.*\\| ([0-9.]*|unsteady|unsteady floor|lost [0-9]+ %) \\|$").FindAllStringSubmatch(s, -1)
	if len(progress) == 0 || len(rows) != len(progress) {
		t.Fatalf("%d progress lines, %d table rows:\n%s", len(progress), len(rows), s)
	}
	floors := 0
	for _, r := range rows {
		if strings.Contains(r[1], "/floor") && !strings.Contains(r[1], "/floor+") {
			floors++
			if r[3] != "1.00" && r[3] != "unsteady" { // a machine busy enough moves the floor's runs apart
				t.Errorf("floor row %s has ratio %q, want 1.00 (or unsteady)", r[1], r[3])
			}
		}
		if ns, _ := strconv.ParseFloat(r[2], 64); ns <= 0 {
			t.Errorf("row %s: ns/op %q", r[1], r[2])
		}
	}
	if floors == 0 {
		t.Fatal("no floor rows")
	}
	if !strings.Contains(s, "Baselines (what each row measures):") || !strings.Contains(s, "- `floor+recycle`: ") {
		t.Errorf("no legend of the baselines under the table:\n%s", s)
	}
	// The machine probe ran before and after the suite, and its two times are printed.
	probe := regexp.MustCompile(`Machine probe \(integer work alone, as BenchmarkProbe\): ([0-9.]+) ns before the suite, ([0-9.]+) after,\n[0-9]+ % apart`).FindStringSubmatch(s)
	if probe == nil || probe[1] == "0.0" || probe[2] == "0.0" {
		t.Errorf("no machine probe times in:\n%s", s)
	}
	if code := run([]string{"bench", "-benchtime", "0s"}, &out, &errb); code != 2 {
		t.Fatalf("zero benchtime: code %d", code)
	}
	// A pin that names no CPU of this machine is refused before anything runs.
	t.Setenv("ETWEMU_BENCH_CPU", "100000")
	errb.Reset()
	if code := run([]string{"bench", "-benchtime", "2ms"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "ETWEMU_BENCH_CPU") {
		t.Fatalf("bench with ETWEMU_BENCH_CPU=100000: code %d, %s", code, errb.String())
	}
	t.Setenv("ETWEMU_BENCH_CPU", "")
	if code := run([]string{"help", "bench"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "-full") {
		t.Fatalf("help bench: code %d", code)
	}
}

// Help goes to stdout with exit 0 however it is asked for, lists every flag (modes: of
// both subcommands), speaks of rules and versions rather than of the specification's
// file names, and its examples are accepted.
func TestHelpEverywhere(t *testing.T) {
	for name := range commands {
		for _, args := range [][]string{{"help", name}, {name, "-h"}, {name, "--help"}} {
			var out, errb bytes.Buffer
			code := run(args, &out, &errb)
			if code != 0 || out.Len() == 0 || errb.Len() != 0 {
				t.Errorf("%v: exit %d, %d bytes on stdout, stderr %q", args, code, out.Len(), errb.String())
			}
			if strings.Contains(strings.ToLower(out.String()), "seed 0") {
				t.Errorf("%v: help names a seed file instead of the rule:\n%s", args, out.String())
			}
		}
	}
	var out, errb bytes.Buffer
	run([]string{"help", "modes"}, &out, &errb)
	for _, flag := range []string{"-max-file-size", "-flush-timer", "-guid", "-autologger", "-private", "Flags of modes check", "Flags of modes table"} {
		if !strings.Contains(out.String(), flag) {
			t.Errorf("help modes lacks %s:\n%s", flag, out.String())
		}
	}
	out.Reset()
	run([]string{"help", "demo"}, &out, &errb)
	m := regexp.MustCompile(`e\.g\. (\S+) or (\S+) \(`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("help demo has no -mode example:\n%s", out.String())
	}
	for _, mode := range m[1:] {
		out.Reset()
		if code := run([]string{"modes", "check", "-mode", mode, "-logfile", "x.etl", "-max-file-size", "1"}, &out, &errb); code != 0 {
			t.Errorf("help demo's example -mode %s is refused: exit %d %s%s", mode, code, out.String(), errb.String())
		}
	}
}

func TestVersion(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"version"}, &out, &errb); code != 0 || !strings.HasPrefix(out.String(), "etwemu ") || !strings.Contains(out.String(), "2004") {
		t.Fatalf("version: exit %d, %q", code, out.String())
	}
	out.Reset()
	if code := run([]string{"version", "-json"}, &out, &errb); code != 0 || !strings.Contains(out.String(), `"default_windows_version": "2004"`) {
		t.Fatalf("version -json: exit %d, %q", code, out.String())
	}
}

// The demo's closing sentences follow its numbers: no claim of scaling from one run, the
// shared processors said when writers outnumber them, and each kind of loss named.
func TestDemoConclusions(t *testing.T) {
	none := &emu.Properties{}
	for _, c := range []struct {
		writers, procs  int
		delivered, lost uint64
		logLost         uint32
		fileErr         error
		want            []string
		wantNot         []string
		busy, output    float64 // the logger's busy share of the run, and the part handing buffers on
		overwritten     uint64  // events the ring wrote over
	}{
		{1, 2, 1000, 0, 0, nil, []string{"1 writer goroutine(s) wrote", "processor of its own", "No events were lost"}, nil, 0, 0, 0},
		{4, 2, 1000, 0, 0, nil, []string{"shared 2 processor(s)"}, []string{"own"}, 0, 0, 0},
		{2, 2, 900, 100, 0, nil, []string{"100 of the 1000 events the writers tried (10.00%) were lost", "ERROR_NOT_ENOUGH_MEMORY", "raise -max-buffers"}, []string{"No events", "-min-buffers"}, 0, 0, 0},
		{2, 2, 900, 100, 7, winerr.New(winerr.ErrLogFileFull, "log file reached MaximumFileSize"), []string{"7 full buffers could not be written", "ERROR_LOG_FILE_FULL", "-max-file-size"}, nil, 0, 0, 0},
		// A full disk is named, never blamed on MaximumFileSize.
		{2, 2, 900, 100, 7, winerr.New(winerr.ErrDiskFull, "the disk is full: writing"), []string{"7 full buffers could not be written", "ERROR_DISK_FULL", "the disk is full"}, []string{"MaximumFileSize", "-max-file-size"}, 0, 0, 0},
		{2, 2, 900, 0, 3, winerr.New(winerr.ErrDiskFull, "the disk is full: writing"), []string{"3 full buffers could not be written", "ERROR_DISK_FULL"}, []string{"MaximumFileSize"}, 0, 0, 0},
		{2, 2, 0, 100, 0, nil, []string{"No event reached the session"}, nil, 0, 0, 0},
		// A logger with no time left to wait limited the rate, not the writers: no advice
		// to try other processor counts. Which part of it, sealing or the sink, is named.
		{2, 2, 900, 100, 0, nil, []string{"busy 95% of the run", "it, not the writers, limited the rate", "more processors would not help"}, []string{"run again with another -processors"}, 0.95, 0.1, 0},
		{2, 2, 900, 100, 0, nil, []string{"busy 99% of the run, 90% of it handing buffers", "the sink, not the writers, limited the rate"}, []string{"run again with another -processors"}, 0.99, 0.9, 0},
		// A busy logger that lost nothing limited nothing.
		{2, 2, 900, 0, 0, nil, []string{"run again with another -processors"}, []string{"limited the rate"}, 0.95, 0.1, 0},
		// A ring that wrote over events says so, and gives no advice about a slow sink.
		{2, 2, 900, 0, 0, nil, []string{"the in-memory ring (BUFFERING) wrote over 800 of them (88.89%)"}, []string{"No events were lost", "-slow-sink"}, 0, 0, 800},
	} {
		p := *none
		p.LogBuffersLost = c.logLost
		got := conclusions(c.writers, c.procs, c.delivered, c.lost, c.overwritten, 1, &p, c.fileErr, c.busy, c.output)
		if strings.Contains(got, "grows with processors") {
			t.Errorf("%+v: claims scaling: %s", c, got)
		}
		for _, w := range c.want {
			if !strings.Contains(got, w) {
				t.Errorf("%+v: %q lacks %q", c, got, w)
			}
		}
		for _, w := range c.wantNot {
			if strings.Contains(got, w) {
				t.Errorf("%+v: %q has %q", c, got, w)
			}
		}
	}
	// Losses with buffers still to grow into: the bound to raise is MinimumBuffers.
	below := &emu.Properties{NumberOfBuffers: 12, MaximumBuffers: 26}
	got := conclusions(2, 2, 10, 1, 0, 1, below, nil, 0, 0)
	if !strings.Contains(got, "raise -min-buffers") || !strings.Contains(got, "12 of at most 26 buffers") || strings.Contains(got, "-max-buffers") {
		t.Errorf("losses below MaximumBuffers: %q", got)
	}
}

// etwemu bench -sweep measures the four designs and the machine probe at each writer
// count and prints the designs as JSON, and -svg writes the chart.
func TestBenchSweep(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "scaling.svg")
	var out, errb bytes.Buffer
	if code := run([]string{"bench", "-sweep", "-max-writers", "2", "-benchtime", "2ms", "-json", "-svg", svg}, &out, &errb); code != 0 {
		t.Fatalf("bench -sweep: exit %d: %s", code, errb.String())
	}
	var points []struct {
		Writers      int      `json:"writers"`
		Design       string   `json:"design"`
		EventsPerSec float64  `json:"events_per_sec"`
		ProbeVar     *float64 `json:"probe_var"`
	}
	if err := json.Unmarshal(out.Bytes(), &points); err != nil {
		t.Fatalf("bench -sweep -json: %v\n%s", err, out.String())
	}
	seen := map[string]bool{}
	for _, p := range points {
		if p.EventsPerSec <= 0 || p.Writers < 1 || p.Writers > 2 || p.Design == "probe" || p.ProbeVar == nil {
			t.Errorf("point %+v", p)
		}
		seen[fmt.Sprintf("%s/%d", p.Design, p.Writers)] = true
	}
	if len(points) != 8 || len(seen) != 8 {
		t.Fatalf("%d points (%v), want the emulator, the floor, the floor with recycled buffers and the mutex at 1 and 2 writers", len(points), seen)
	}
	if !strings.Contains(errb.String(), "[10/10] 2 writer(s), probe") {
		t.Errorf("no progress on stderr: %q", errb.String())
	}
	b, err := os.ReadFile(svg)
	if err != nil || !bytes.HasPrefix(b, []byte("<svg")) || bytes.Count(b, []byte("<polyline")) != 4 {
		t.Fatalf("chart %s: %v\n%s", svg, err, b)
	}
}

// The slow sink is slow only while the writers run: once they have stopped, or the
// demo's context ended, the buffers left go through at once (with the bug, the hour-long
// delay below holds the test until go test's timeout).
func TestSlowSinkOnlyWhileWriting(t *testing.T) {
	buf := make([]byte, 0x48) // an empty buffer: WMI_BUFFER_HEADER's Offset (+0x30) is its own size
	buf[0x30] = 0x48
	s := &slowSink{delay: time.Hour, ctx: context.Background()}
	s.done.Store(true)
	if err := s.WriteBuffer(buf); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	s = &slowSink{delay: time.Hour, ctx: ctx}
	if err := s.WriteBuffer(buf); err != nil {
		t.Fatal(err)
	}
}

// fullWriter is an output on a full disk.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// A command whose output does not reach it fails, naming why: help, demo's report, and
// commands that stop at the failed write (run, dump) with the same code.
func TestOutputOnAFullDisk(t *testing.T) {
	scn := filepath.Join(t.TempDir(), "a.scn")
	if err := os.WriteFile(scn, []byte("start s mode=REAL_TIME\nstrdump\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"help", "demo"}, {"demo", "-duration", "10ms", "-progress", "0"}, {"version"}, {"run", scn}} {
		var errb bytes.Buffer
		if code := run(args, fullWriter{}, &errb); code != 1 || !strings.Contains(errb.String(), "ERROR_DISK_FULL (112): the disk is full: the output was not written whole") {
			t.Errorf("%v on a full disk: exit %d, stderr %q", args, code, errb.String())
		}
	}
}

// The demo's report counts every file of a NEWFILE series, up to the one the session
// ended in, however many (a series of 10,050 files, past the 10,000 an earlier report
// stopped at), and says why -compress wrote a file uncompressed.
func TestDemoLogFilesAndCompression(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []string{"a_1.etl", "a_2.etl", "a_3.etl", "a_9.etl"} {
		if err := os.WriteFile(filepath.Join(dir, n), make([]byte, 10), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pattern := filepath.Join(dir, "a_%d.etl")
	name := func(n int) string { return filepath.Join(dir, fmt.Sprintf("a_%d.etl", n)) }
	if w := logFiles(pattern, name(3), logmode.NewFile, 10); w.count != 3 || w.size != 30 || w.first != name(1) || w.last != name(3) {
		t.Errorf("NEWFILE series: %+v; want a_1 to a_3, 30 bytes", w)
	}
	if w := logFiles(pattern, name(2), logmode.Sequential, 10); w.count != 1 || w.size != 10 || w.first != name(2) {
		t.Errorf("one file: %+v", w)
	}
	if w := logFiles(pattern, name(50), logmode.NewFile, 4); w.count != 3 || w.last != name(3) {
		t.Errorf("a series whose last file is gone, 4 buffers written: %+v; want a_1 to a_3, the walk ended at a_5", w)
	}
	many := t.TempDir()
	const n = 10050
	for i := 1; i <= n; i++ {
		if err := os.WriteFile(filepath.Join(many, fmt.Sprintf("b_%d.etl", i)), []byte{1}, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	last := filepath.Join(many, fmt.Sprintf("b_%d.etl", n))
	if w := logFiles(filepath.Join(many, "b_%d.etl"), last, logmode.NewFile, 2*n); w.count != n || w.size != n || w.last != last {
		t.Errorf("a series of %d files: %d files, %d bytes, the last %s", n, w.count, w.size, w.last)
	}
	if why := uncompressed(winver.V6_1, logmode.PrivateLogger); !strings.Contains(why, "no EVENT_TRACE_COMPRESSED_MODE") {
		t.Errorf("6.1: %q", why)
	}
	if why := uncompressed(winver.V2004, logmode.Compressed|logmode.Circular); !strings.Contains(why, "circular") {
		t.Errorf("circular: %q", why)
	}
	if why := uncompressed(winver.V2004, logmode.Compressed|logmode.Sequential); why != "" {
		t.Errorf("sequential compressed: %q", why)
	}
}

// The report lists every processor's buffers on a small machine and only those that
// wrote any on a large one, and gives a writer's rate in k when it is under 0.01 M.
func TestDemoReportScales(t *testing.T) {
	if got := perProcessor([]uint64{3, 0, 1}); got != "cpu0=3 cpu1=0 cpu2=1" {
		t.Errorf("3 processors: %s", got)
	}
	big := make([]uint64, 2048)
	big[5], big[2047] = 6, 1
	if got := perProcessor(big); got != "cpu5=6 cpu2047=1 (the other 2046 processors wrote none)" {
		t.Errorf("2048 processors: %s", got)
	}
	for _, c := range []struct {
		rate    float64
		writers int
		want    string
	}{{2.53, 1, "2.53 M"}, {2.53, 2048, "1.24 k"}, {0, 4, "0.00 M"}} {
		if got := perWriter(c.rate, c.writers); got != c.want {
			t.Errorf("perWriter(%v, %d) = %s, want %s", c.rate, c.writers, got, c.want)
		}
	}
}
