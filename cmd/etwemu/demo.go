package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/internal/quote"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

type demoConfig struct {
	duration   time.Duration
	events     int64 // events to write in all (accepted by the session); 0 for no limit
	payload    int
	bufferKB   uint
	minBuffers uint
	maxBuffers uint
	procs      int
	version    winver.Version
	slowSink   time.Duration
	progress   time.Duration
	logFile    string
	mode       string
	compress   bool
	maxFileMB  uint64 // a ULONG: a uint64 so that the bound is checked on 32-bit systems too
	pmc        string // profile sources to collect on event id 1, comma-separated
	pmcSource  string
	force      bool
	sources    []pmc.ProfileSource // -pmc, parsed
	// started, if not nil, runs once StartTrace has created the log file: the notices
	// that it replaced a file wait for it, so that a refused start claims nothing.
	started func()
	// result, if not nil (-json), receives the run's figures, which runDemo prints as
	// JSON in place of the text report.
	result *demoResult
}

// demoResult is the demo's report for a script (-json): the figures of the text's result
// lines, the log files, and its conclusions.
type demoResult struct {
	Version             string   `json:"version"`
	Processors          int      `json:"processors"` // emulated, one writer goroutine each
	GOMAXPROCS          int      `json:"gomaxprocs"`
	LoggerMode          string   `json:"loggerMode"`
	BufferSize          uint32   `json:"bufferSizeKB"`
	PayloadBytes        int      `json:"payloadBytes"`
	RecordBytes         uint64   `json:"recordBytes"` // per record, header and padding included
	Seconds             float64  `json:"seconds"`
	EventsWritten       uint64   `json:"eventsWritten"` // accepted by the session
	EventsPerSecond     float64  `json:"eventsPerSecond"`
	BytesPerSecond      float64  `json:"bytesPerSecond"`
	EventsLost          uint32   `json:"eventsLost"`         // the session's, after StopTrace
	WritersCountedLost  uint64   `json:"writersCountedLost"` // the writers' own count
	FilteredOut         uint64   `json:"filteredOut"`
	BuffersWritten      uint32   `json:"buffersWritten"`
	LogBuffersLost      uint32   `json:"logBuffersLost"`
	NumberOfBuffers     uint32   `json:"numberOfBuffers"`
	MaximumBuffers      uint32   `json:"maximumBuffers"`
	EventsOverwritten   uint64   `json:"eventsOverwritten"`
	BuffersOverwritten  uint64   `json:"buffersOverwritten"`
	BuffersPerProcessor []uint64 `json:"buffersPerProcessor"`
	LoggerBusy          float64  `json:"loggerBusy"`  // share of the run
	OutputShare         float64  `json:"outputShare"` // of the run, handing buffers to the sink and file
	LoggerLimited       bool     `json:"loggerLimited"`
	LogFiles            []string `json:"logFiles,omitempty"` // the first and, for NEWFILE, the last
	LogFileBytes        int64    `json:"logFileBytes,omitempty"`
	LogFileError        string   `json:"logFileError,omitempty"`
	Interrupted         string   `json:"interrupted,omitempty"` // the signal that stopped the writers early
	Conclusions         string   `json:"conclusions"`
}

// demoProvider is one of the demo's three providers and what the session asks of it.
type demoProvider struct {
	name     string
	level    uint8  // enabled level
	keywords uint64 // enabled any-keywords
}

var demoProviders = []demoProvider{
	{"Demo.Network", 5, 0},     // everything
	{"Demo.Storage", 4, 0x1},   // information and above, keyword 0x1
	{"Demo.Scheduler", 3, 0x4}, // warnings and above, keyword 0x4
}

func runDemo(args []string, stdout, stderr io.Writer) int {
	cfg := demoConfig{version: winver.Default}
	fs := flag.NewFlagSet("demo", flag.ContinueOnError)
	fs.DurationVar(&cfg.duration, "duration", 3*time.Second, "how long the writers run (1ms to 24h)")
	fs.Int64Var(&cfg.events, "events", 0, fmt.Sprintf("stop once this many events were written in all, 0 to %d (0: run for -duration); filtered and lost events do not count, so a -logfile holds this many unless the file lost buffers", maxDemoEvents))
	fs.IntVar(&cfg.payload, "payload", 64, fmt.Sprintf("payload bytes per event (0 to %d)", maxPayload))
	fs.UintVar(&cfg.bufferKB, "buffer-kb", 64, fmt.Sprintf("session BufferSize in KB (0: the default; 1 to %d, which StartTrace clamps to the version's range)", maxBufferKB))
	fs.UintVar(&cfg.minBuffers, "min-buffers", 0, "MinimumBuffers (0: two per processor)")
	fs.UintVar(&cfg.maxBuffers, "max-buffers", 0, "MaximumBuffers (0: MinimumBuffers + 22)")
	fs.IntVar(&cfg.procs, "processors", runtime.NumCPU(), "emulated processors, 1 to 2048; one writer goroutine each")
	fs.Var(&cfg.version, "version", "Windows version to emulate, 6.0 ... 6.3, 10.0, 1511 ... 2004 (EventRegister, which the demo's providers use, exists from 6.0)")
	fs.DurationVar(&cfg.slowSink, "slow-sink", 0, "time the sink spends on each buffer while the writers run, to model a slow disk (e.g. 2ms; 0 to 1s)")
	fs.DurationVar(&cfg.progress, "progress", 250*time.Millisecond, "progress line interval (10ms to 1h, or 0 to turn it off)")
	fs.StringVar(&cfg.logFile, "logfile", "", "record the events to this ETL file (read it with: etwemu dump FILE); an existing ETL file is replaced, saying so, other files and symbolic links only with -force")
	fs.StringVar(&cfg.mode, "mode", "", "LogFileMode flags, e.g. SEQUENTIAL or CIRCULAR,KBYTES_FOR_SIZE (default: SEQUENTIAL with -logfile, else REAL_TIME)")
	fs.BoolVar(&cfg.compress, "compress", false, "add EVENT_TRACE_COMPRESSED_MODE: buffers go to the -logfile XPRESS-compressed")
	fs.StringVar(&cfg.pmc, "pmc", "", "collect these profile sources (e.g. TotalCycles) on every event with id 1 (TracePmcCounterListInfo, then EventTraceProfileEventListInformation)")
	fs.StringVar(&cfg.pmcSource, "pmc-source", pmc.NameAuto, "counter source for -pmc: auto (see etwemu pmc), perf-rdpmc, perf-read, tsc, synthetic")
	fs.BoolVar(&cfg.force, "force", false, "with -logfile: "+forceHelp)
	fs.Uint64Var(&cfg.maxFileMB, "max-file-size", 0, "MaximumFileSize of the -logfile in MB (KB with KBYTES_FOR_SIZE in -mode); 64 unless given, 0 for none")
	asJSON := fs.Bool("json", false, "print the report as one JSON object when the run ends, and nothing while it runs")
	about := "Usage: etwemu demo [flags]\n\nStarts one session, registers three providers (one fully enabled, two filtered\nby level and keyword) and writes events from one goroutine per emulated processor,\nthen reports throughput and losses. With -logfile the session writes an ETL file:\n\n  etwemu demo -logfile /tmp/demo.etl -events 20000\n  etwemu dump -summary /tmp/demo.etl\n\nSIGINT or SIGTERM (Ctrl-C) stops the writers and the session cleanly: the file is\nfinalized and the report printed, and the exit status is 128 plus the signal's number.\nA second signal exits at once."
	if code := parseFlags(fs, about, "", args, stdout, stderr); code >= 0 {
		return code
	}
	b := bounds{fs: fs}
	b.duration("duration", cfg.duration, time.Millisecond, 24*time.Hour, "")
	b.int("payload", int64(cfg.payload), 0, maxPayload, "EVENT_HEADER.Size is 16 bits: header and payload are at most 0xFFFF bytes")
	b.uint("buffer-kb", uint64(cfg.bufferKB), 0, maxBufferKB, "")
	b.uint("min-buffers", uint64(cfg.minBuffers), 0, 1<<20, "")
	b.uint("max-buffers", uint64(cfg.maxBuffers), 0, 1<<20, "")
	b.int("processors", int64(cfg.procs), 1, 2048, "the emulator's limit")
	b.duration("slow-sink", cfg.slowSink, 0, time.Second, "")
	if cfg.progress != 0 { // 0 turns the lines off; a shorter interval would flood stdout
		b.duration("progress", cfg.progress, 10*time.Millisecond, time.Hour, "or 0 for no progress lines")
	}
	b.uint("max-file-size", cfg.maxFileMB, 0, 1<<32-1, "MaximumFileSize is a ULONG")
	b.int("events", cfg.events, 0, maxDemoEvents, "")
	if cfg.maxBuffers != 0 && cfg.minBuffers > cfg.maxBuffers {
		b.fail("-min-buffers %d is more than -max-buffers %d", cfg.minBuffers, cfg.maxBuffers)
	}
	b.needs("max-file-size", "logfile", cfg.logFile != "")
	b.needs("compress", "logfile", cfg.logFile != "")
	b.needs("pmc-source", "pmc", cfg.pmc != "")
	if !pmc.KnownSource(cfg.pmcSource) {
		b.fail("-pmc-source %s: not a counter source (auto, %s, %s, %s, %s)", quote.Short(cfg.pmcSource), pmc.NamePerfRDPMC, pmc.NamePerfRead, pmc.NameTSC, pmc.NameSynthetic)
	}
	b.needs("force", "logfile", cfg.logFile != "")
	b.eventRegister(cfg.version)
	mode, err := logmode.Parse(cfg.mode)
	if err != nil {
		b.fail("-mode %s: %v", quote.Short(cfg.mode), err)
	}
	if cfg.pmc != "" {
		if cfg.sources, err = parsePMCList(cfg.pmc); err != nil {
			b.fail("-pmc %s: %v", quote.Short(cfg.pmc), err)
		}
	}
	if code := b.done(stderr); code >= 0 {
		return code
	}
	if cfg.logFile != "" {
		names := []string{cfg.logFile}
		if mode&logmode.NewFile != 0 {
			// The first file, and every file already there that a later one would replace
			// as the session fills them.
			names = newFiles(cfg.logFile)
		}
		var notices bytes.Buffer // printed once the file is created: a refused StartTrace replaces nothing
		for _, name := range names {
			if err := checkOutput(&notices, "demo", "logfile", name, etlOutput, cfg.force, mode&logmode.Append != 0); err != nil {
				stderr.Write(notices.Bytes())
				fmt.Fprintf(stderr, "etwemu demo: %v\n", err)
				return 1
			}
		}
		cfg.started = func() { stderr.Write(notices.Bytes()) }
	}
	if cfg.logFile != "" && !b.given("max-file-size") {
		cfg.maxFileMB = 64 // keep a newcomer's first file small; 0 given explicitly means no limit
	}
	ctx, stop := interruptible(context.Background(), stderr, "the demo's writers and session")
	defer stop()
	out := stdout
	if *asJSON {
		cfg.result, out = &demoResult{}, io.Discard
	}
	err = demo(ctx, cfg, out)
	if err != nil {
		fmt.Fprintf(stderr, "etwemu demo: %v\n", err)
	}
	if *asJSON && cfg.result.Version != "" { // the run reached its report
		if code := writeJSON("demo", stdout, stderr, cfg.result); code != 0 {
			return code
		}
	}
	if code := interruptedCode(ctx); code != 0 {
		return code
	}
	if err != nil {
		return 1
	}
	return 0
}

// maxDemoEvents bounds -events.
const maxDemoEvents int64 = 1 << 40 // typed: an int holds 2^31 on 32-bit systems

// parsePMCList reads -pmc's comma-separated profile sources.
func parsePMCList(list string) ([]pmc.ProfileSource, error) {
	var out []pmc.ProfileSource
	for _, name := range strings.Split(list, ",") {
		s, err := pmc.ParseProfileSource(strings.TrimSpace(name))
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// demoFirstBuffer, when not nil, is called once, on the logger goroutine, with the
// demo's context and session when its sink receives its first buffer: the writers are
// running and events reached the session. Tests set it, before the demo starts, to send
// their signals from it.
var demoFirstBuffer func(ctx context.Context, s *emu.Session)

// slowSink counts the buffers and events it receives and sleeps on each buffer, like a
// sink writing to a slow disk.
type slowSink struct {
	delay time.Duration
	// done is set once the writers have stopped (by demo's goroutine; read by the logger
	// goroutine): the buffers left are then handed on at once, as after a signal (ctx),
	// so that a run ends when its -duration does however many buffers are queued.
	done  atomic.Bool
	ctx   context.Context             // the demo's, for demoFirstBuffer; immutable
	sess  atomic.Pointer[emu.Session] // for demoFirstBuffer; stored once StartTrace returned
	first sync.Once                   // calls demoFirstBuffer once
	session.Counter
}

func (s *slowSink) WriteBuffer(b []byte) error {
	if demoFirstBuffer != nil {
		if l := s.sess.Load(); l != nil {
			s.first.Do(func() { demoFirstBuffer(s.ctx, l) })
		}
	}
	if s.delay > 0 && !s.done.Load() && s.ctx.Err() == nil {
		time.Sleep(s.delay)
	}
	return s.Counter.WriteBuffer(b)
}

// demo runs the demo; ctx ending (the first SIGINT or SIGTERM) stops the writers early,
// after which the session is stopped, its file finalized and the report printed as at
// the end of -duration.
func demo(ctx context.Context, cfg demoConfig, out io.Writer) error {
	var src pmc.Source
	if cfg.pmc != "" {
		var err error
		if src, _, err = pmc.Choose(cfg.pmcSource); err != nil {
			return fmt.Errorf("%w; etwemu pmc says which counter sources this machine has, and -pmc-source synthetic counts every profile source with made-up, increasing values", err)
		}
	}
	k, err := emu.New(emu.Config{Version: cfg.version, Processors: cfg.procs, PMCSource: src})
	if err != nil {
		return err
	}
	defer k.Close()

	mode := logmode.Mode(logmode.RealTime) // the counting sink stands for a real-time consumer
	if cfg.logFile != "" {
		mode = logmode.Sequential
	}
	if cfg.mode != "" {
		if mode, err = logmode.Parse(cfg.mode); err != nil {
			return err
		}
	}
	if cfg.compress {
		mode |= logmode.Compressed
		if mode&logmode.PrivateLogger == 0 {
			// Compressed files are the user-mode logger's feature (Geoff Chappell,
			// "ETW_UM_LOGGER_CONTEXT"); for kernel loggers the mode table wants BUFFERING
			// with it.
			mode |= logmode.PrivateLogger | logmode.PrivateInProc
			fmt.Fprintln(out, "-compress: running a private (user-mode) logger, the kind that compresses its log file")
		}
	}
	sink := &slowSink{delay: cfg.slowSink, ctx: ctx}
	props := &emu.Properties{
		LogFileMode: uint32(mode), LogFileName: cfg.logFile, MaximumFileSize: uint32(cfg.maxFileMB),
		BufferSize: uint32(cfg.bufferKB), MinimumBuffers: uint32(cfg.minBuffers), MaximumBuffers: uint32(cfg.maxBuffers),
		Sink: sink,
	}
	if err := recordFits(cfg.version, cfg.procs, *props, cfg.payload); err != nil {
		return err
	}
	if cfg.pmc != "" {
		if err := pmcRefused(cfg, src); err != nil {
			return err
		}
	}
	record := uint64(abi.Align(abi.EventHeaderSize + cfg.payload))
	h, err := k.StartTrace("etwemu-demo", props)
	if err != nil {
		return fmt.Errorf("StartTrace: %w", err)
	}
	if cfg.started != nil {
		cfg.started()
	}
	if props.LogFileName != "" {
		fmt.Fprintf(out, "log file %q, mode %s\n", props.LogFileName, logmode.Mode(props.LogFileMode).Short())
	}
	logger := k.Session(h)
	if cfg.compress {
		if why := uncompressed(cfg.version, logger.Mode()); why != "" {
			fmt.Fprintf(out, "-compress: the log file is written uncompressed: %s\n", why)
		}
	}
	sink.sess.Store(logger)
	fmt.Fprintf(out, "Windows %s (%s), %d emulated processors, clock %s\n", cfg.version, cfg.version.Marketing(), cfg.procs, logger.ClockSource())
	fmt.Fprintf(out, "session %q: logger id %d, BufferSize %d KB, MinimumBuffers %d, MaximumBuffers %d (as adjusted by StartTrace)\n",
		"etwemu-demo", h.LoggerID(), props.BufferSize, props.MinimumBuffers, props.MaximumBuffers)

	if cfg.pmc != "" {
		if err := demoPMC(k, h, cfg.sources, out); err != nil {
			return err
		}
	}

	regs := make([]*emu.Registration, len(demoProviders))
	for i, p := range demoProviders {
		name := p.name
		cb := func(_ guid.GUID, code regentry.ControlCode, level uint8, any, all uint64, _ []byte, _ any) {
			fmt.Fprintf(out, "  callback %-15s %s level %d any %#x all %#x\n", name, code, level, any, all)
		}
		if regs[i], err = k.EventRegister(guid.FromName(name), cb, nil); err != nil {
			return fmt.Errorf("EventRegister %s: %w", name, err)
		}
	}
	for _, p := range demoProviders {
		if err := k.EnableTraceEx2(h, guid.FromName(p.name), regentry.ControlEnable, p.level, p.keywords, 0, nil); err != nil {
			return fmt.Errorf("EnableTraceEx2 %s: %w", p.name, err)
		}
	}

	var attempted, delivered, lost, filtered atomic.Uint64
	var live atomic.Uint64    // events accepted so far, published by writers every batch
	var claimed atomic.Uint64 // events of -events the writers have taken on, 64 at a time
	var stop atomic.Bool
	var wg sync.WaitGroup
	start := time.Now()
	for p := 0; p < cfg.procs; p++ {
		wg.Add(1)
		go func(p int) {
			defer wg.Done()
			tally := &emu.Tally{}
			opts := &emu.WriteOptions{Processor: p, ThreadID: uint32(0x100 + 4*p), Tally: tally}
			payload := make([]byte, cfg.payload)
			var n, f uint64
			seq := 0 // the writer's calls so far: which provider, id, level and keyword next
			for !stop.Load() {
				// A batch is 64 events to write: with -events, the writer's share of the
				// events left. Filtered and lost events do not count against it.
				batch := uint64(64)
				if cfg.events > 0 {
					end := claimed.Add(64)
					if end-64 >= uint64(cfg.events) {
						break
					}
					batch = min(64, uint64(cfg.events)-(end-64))
				}
				ok := uint64(0)
				for tries := 0; ok < batch; tries++ {
					if tries&63 == 63 && stop.Load() {
						break
					}
					// The providers take turns; each goes through every id, and through
					// the 15 pairs of level (1 to 5) and keyword (0x1, 0x2, 0x4).
					r, j := regs[seq%len(regs)], seq/len(regs)
					seq++
					d := emu.EventDescriptor{ID: uint16(j % 16), Level: uint8(1 + j%5), Keyword: uint64(1) << (j % 3)}
					if !k.EventEnabled(r, &d) {
						f++
						continue
					}
					n++
					if k.EventWriteEx(r, &d, opts, payload) == nil {
						ok++
					}
				}
				live.Add(ok)
			}
			attempted.Add(n)
			filtered.Add(f)
			delivered.Add(tally.Delivered[h.LoggerID()])
			lost.Add(tally.Lost[h.LoggerID()])
		}(p)
	}

	finished := make(chan struct{})
	var elapsed time.Duration
	go func() {
		wg.Wait()
		elapsed = time.Since(start)
		close(finished)
	}()
	progress(ctx, out, cfg, start, logger, &live, record, finished)
	stop.Store(true)
	<-finished
	sink.done.Store(true)

	// With the writers done, walk the live kernel for broken invariants; the session's
	// sink counts events, so conservation is checked too.
	checker := emu.NewChecker(k)
	checker.Accepted(logger, delivered.Load())
	if vs := checker.Check(); len(vs) > 0 {
		for _, v := range vs {
			fmt.Fprintf(out, "invariant broken: %v\n", v)
		}
		return fmt.Errorf("%d invariants broken", len(vs))
	}
	fmt.Fprintln(out, "invariant check: GUID table, registrations, logger table, buffers and event conservation all hold")
	var final emu.Properties
	if err := k.StopTrace(h, "", &final); err != nil {
		return fmt.Errorf("StopTrace: %w", err)
	}
	if cause := context.Cause(ctx); cause != nil {
		fmt.Fprintf(out, "\n%v: the writers stopped early, the session was stopped and its counters are final\n", cause)
	}
	// The report's losses are the session's counters after StopTrace, the numbers the
	// file's header was finalized with; the writers' own count is shown beside them.
	report(out, cfg.result, cfg.procs, elapsed, delivered.Load(), lost.Load(), filtered.Load(), record, &final, logger.Stats(), logger.FileErr())
	if r := cfg.result; r != nil {
		r.Version, r.Processors, r.LoggerMode, r.PayloadBytes = cfg.version.String(), cfg.procs, logmode.Mode(logger.Mode()).Short(), cfg.payload
		r.BufferSize = final.BufferSize
		if cause := context.Cause(ctx); cause != nil {
			r.Interrupted = cause.Error()
		}
		if err := logger.FileErr(); err != nil {
			r.LogFileError = err.Error()
		}
	}
	if cfg.logFile != "" {
		if err := logger.FileErr(); err != nil {
			fmt.Fprintf(out, "log file stopped taking buffers: %v\n", err)
		}
		files := logFiles(cfg.logFile, logger.LogFileName(), logmode.Mode(logger.Mode()), final.BuffersWritten)
		if r := cfg.result; r != nil && files.count > 0 {
			r.LogFiles, r.LogFileBytes = []string{files.first}, files.size
			if files.count > 1 {
				r.LogFiles = append(r.LogFiles, files.last)
			}
		}
		if files.count > 0 {
			what := "log file " + files.first
			if files.count > 1 {
				what = fmt.Sprintf("log files %s to %s (%d files)", files.first, files.last, files.count)
			}
			fmt.Fprintf(out, "%s: %d bytes, %d buffers written", what, files.size, final.BuffersWritten)
			if in, stored := logger.CompressionRatio(); in > 0 {
				fmt.Fprintf(out, ", compressed %d bytes of data to %d (%.1fx)", in, stored, float64(in)/float64(stored))
			}
			if files.count == 1 {
				fmt.Fprintf(out, "\nread it back with: etwemu dump -summary %s\n", files.first)
			} else {
				fmt.Fprintf(out, "\nread each back with: etwemu dump -summary %s (each file is a whole trace; dump reads one)\n", files.first)
			}
		}
	}
	if delivered.Load() == 0 {
		return fmt.Errorf("no event reached the session (%d attempted, %d lost): the settings leave no room for events", attempted.Load(), lost.Load())
	}
	return nil
}

// writtenFiles is what the demo's report says of the log files a session wrote.
type writtenFiles struct {
	first, last string // the first and the last file there
	count       int    // files there
	size        int64  // their bytes
}

// logFiles returns the files the session wrote: with NEWFILE, the series from pattern's
// number 1 up to last (the file the session ended in; a file a failed roll-over never
// created, or one removed since, is left out), otherwise last alone. A series has at
// most a file for each buffer written, the bound of the walk.
func logFiles(pattern, last string, mode logmode.Mode, buffersWritten uint32) writtenFiles {
	var w writtenFiles
	add := func(name string) {
		if st, err := os.Stat(name); err == nil {
			if w.count == 0 {
				w.first = name
			}
			w.last, w.count, w.size = name, w.count+1, w.size+st.Size()
		}
	}
	if mode&logmode.NewFile == 0 {
		add(last)
		return w
	}
	for i := 1; i <= int(buffersWritten)+1; i++ {
		name := etl.NewFileName(pattern, i)
		add(name)
		if name == last {
			break
		}
	}
	return w
}

// uncompressed says why a session asked to compress its log file (-compress) writes it
// uncompressed, or "" when it compresses: the version has no compressed files, or the
// file is circular, which the emulator writes uncompressed.
func uncompressed(v winver.Version, mode uint32) string {
	switch {
	case mode&logmode.Compressed == 0:
		return fmt.Sprintf("Windows %s has no EVENT_TRACE_COMPRESSED_MODE (StartTrace dropped it)", v)
	case mode&logmode.Circular != 0:
		return "etwemu writes circular files uncompressed (a compressed stream cannot wrap)"
	}
	return ""
}

// progress prints a live line until the duration is over: on a terminal one line
// rewritten in place, elsewhere a line per interval.
// ctx ending (a signal) ends it early.
func progress(ctx context.Context, out io.Writer, cfg demoConfig, start time.Time, l *emu.Session, live *atomic.Uint64, record uint64, finished <-chan struct{}) {
	deadline := time.NewTimer(time.Until(start.Add(cfg.duration)))
	defer deadline.Stop()
	if cfg.progress <= 0 {
		select {
		case <-deadline.C:
		case <-finished:
		case <-ctx.Done():
		}
		return
	}
	tty := false
	if f, ok := out.(interface{ Stat() (os.FileInfo, error) }); ok { // a file, or run's output
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	tick := time.NewTicker(cfg.progress)
	defer tick.Stop()
	for last := false; !last; {
		var now time.Time
		select {
		case now = <-tick.C:
		case now = <-deadline.C:
			last = true
		case <-finished:
			now, last = time.Now(), true
		case <-ctx.Done():
			now, last = time.Now(), true
		}
		s := l.Stats()
		el := now.Sub(start).Seconds()
		n := live.Load()
		line := fmt.Sprintf("  %5.1fs  %7.2f M events/s  %7.1f MB/s  lost %-9d buffers written %-7d free %d/%d",
			el, float64(n)/el/1e6, float64(n*record)/el/1e6, s.EventsLost, s.BuffersWritten, s.FreeBuffers, s.NumberOfBuffers)
		if tty {
			fmt.Fprintf(out, "\r%s", line)
		} else {
			fmt.Fprintln(out, line)
		}
	}
	if tty {
		fmt.Fprintln(out)
	}
}

// report prints the run's numbers. lost is what the session's EventsLost says after
// StopTrace (p.EventsLost, the figure the log file's header was finalized with);
// writersLost is what the writers' tallies counted, shown beside it as a check.
func report(out io.Writer, r *demoResult, writers int, elapsed time.Duration, delivered, writersLost, filtered, record uint64, p *emu.Properties, s session.Stats, fileErr error) {
	sec := elapsed.Seconds()
	lost := uint64(p.EventsLost)
	busy, output := share(s.LoggerBusy, elapsed), share(s.OutputTime, elapsed)
	said := conclusions(writers, runtime.GOMAXPROCS(0), delivered, lost, s.EventsOverwritten, sec, p, fileErr, busy, output)
	if r != nil {
		*r = demoResult{GOMAXPROCS: runtime.GOMAXPROCS(0), RecordBytes: record, Seconds: sec,
			EventsWritten: delivered, EventsPerSecond: float64(delivered) / sec, BytesPerSecond: float64(delivered*record) / sec,
			EventsLost: p.EventsLost, WritersCountedLost: writersLost, FilteredOut: filtered,
			BuffersWritten: p.BuffersWritten, LogBuffersLost: p.LogBuffersLost, NumberOfBuffers: p.NumberOfBuffers, MaximumBuffers: p.MaximumBuffers,
			EventsOverwritten: s.EventsOverwritten, BuffersOverwritten: s.BuffersOverwritten, BuffersPerProcessor: s.BuffersPerStream,
			LoggerBusy: busy, OutputShare: min(output, busy), LoggerLimited: lost > 0 && busy >= loggerBound, Conclusions: said}
	}
	fmt.Fprintf(out, "\nresult after %.2f s\n", sec)
	fmt.Fprintf(out, "  events written     %12d  (%.2f M events/s; accepted by the session, what -events counts)\n", delivered, float64(delivered)/sec/1e6)
	fmt.Fprintf(out, "  record bytes       %12d  (%.1f MB/s, %d bytes per record)\n", delivered*record, float64(delivered*record)/sec/1e6, record)
	fmt.Fprintf(out, "  events lost        %12d  (EventsLost of the session after StopTrace, as in the file's header; the writers counted %d)\n", lost, writersLost)
	fmt.Fprintf(out, "  filtered out       %12d  (EventEnabled said no: level or keyword not enabled)\n", filtered)
	fmt.Fprintf(out, "  buffers written    %12d  (LogBuffersLost %d, NumberOfBuffers %d of at most %d)\n", p.BuffersWritten, p.LogBuffersLost, p.NumberOfBuffers, p.MaximumBuffers)
	if s.EventsOverwritten > 0 || s.BuffersOverwritten > 0 {
		fmt.Fprintf(out, "  events overwritten %12d  (in %d buffers the in-memory ring wrote over: not lost in Windows' terms, but no longer anywhere)\n", s.EventsOverwritten, s.BuffersOverwritten)
	}
	fmt.Fprintf(out, "  buffers per processor  %s\n", perProcessor(s.BuffersPerStream))
	fmt.Fprintf(out, "  logger busy        %11.0f%%  (of the run: sealing, handing on and recycling buffers, %.0f%% of the run handing them to the sink and file; idle %.0f%%)\n\n", 100*busy, 100*min(output, busy), 100*(1-busy))
	fmt.Fprint(out, said)
}

// perProcessor lists the buffers each processor's stream wrote, cpuN=M. Past
// perProcessorAll processors it lists those that wrote any and counts the rest: a line
// of 2,048 entries, most of them 0, says less than one of a few.
func perProcessor(counts []uint64) string {
	var per []string
	idle := 0
	for i, n := range counts {
		if n == 0 && len(counts) > perProcessorAll {
			idle++
			continue
		}
		per = append(per, fmt.Sprintf("cpu%d=%d", i, n))
	}
	if idle > 0 {
		per = append(per, fmt.Sprintf("(the other %d processors wrote none)", idle))
	}
	return strings.Join(per, " ")
}

// perProcessorAll is how many processors perProcessor lists whole.
const perProcessorAll = 64

// perWriter gives the events a second each writer wrote, in M, or in k when under 0.01 M.
func perWriter(rate float64, writers int) string {
	r := rate / float64(writers)
	if r >= 0.01 || r == 0 {
		return fmt.Sprintf("%.2f M", r)
	}
	return fmt.Sprintf("%.2f k", 1000*r)
}

// share is d as a share of the run's elapsed time, at most 1 (the logger's time also
// runs on while the writers are being stopped).
func share(d, elapsed time.Duration) float64 {
	if elapsed <= 0 {
		return 0
	}
	return min(1, d.Seconds()/elapsed.Seconds())
}

// loggerBound is the logger's busy share of a run past which the demo says the logger,
// not the writers, limited the rate: one goroutine a session, as Windows has one logger
// thread a session, that had almost no time left to wait.
const loggerBound = 0.9

// conclusions says what the run's own numbers show, and nothing they do not: the
// per-writer rate (how it changes with -processors takes two runs to see), whether the
// writers had a processor each, and why events were lost, if they were. fileErr is the
// first error the log file met (Session.FileErr): it says why buffers could not be
// written, a full disk or a file at MaximumFileSize.
func conclusions(writers, procs int, delivered, lost, overwritten uint64, sec float64, p *emu.Properties, fileErr error, busy, output float64) string {
	var b strings.Builder
	rate := float64(delivered) / sec / 1e6
	fmt.Fprintf(&b, "%d writer goroutine(s) wrote %.2f M events/s, %s per writer. ", writers, rate, perWriter(rate, writers))
	bound := lost > 0 && busy >= loggerBound
	switch {
	case bound && output >= busy/2:
		fmt.Fprintf(&b, "The session's one logger goroutine was busy %.0f%% of the run, %.0f%% of it handing buffers to the sink and file: the sink, not the writers, limited the rate, as a slow disk limits Windows' logger thread; more processors would not help.\n", 100*busy, 100*output)
	case bound:
		fmt.Fprintf(&b, "The session's one logger goroutine was busy %.0f%% of the run, sealing and recycling buffers: it, not the writers, limited the rate, as Windows' one logger thread a session would; larger buffers (-buffer-kb) mean fewer to hand on, more processors would not help.\n", 100*busy)
	case writers > procs:
		fmt.Fprintf(&b, "They shared %d processor(s) (GOMAXPROCS), so more writers cannot add throughput here.\n", procs)
	default:
		fmt.Fprintf(&b, "Each had a processor of its own (GOMAXPROCS %d); run again with another -processors to see how the rate scales.\n", procs)
	}
	// why: why the log file took no more buffers, and what to do.
	why := "a SEQUENTIAL file stops at MaximumFileSize with ERROR_LOG_FILE_FULL: raise -max-file-size or write fewer events (-events)"
	switch {
	case errors.Is(fileErr, winerr.ErrDiskFull):
		why = fmt.Sprintf("writing the file failed (%v): if the disk is full, free space on it or name a -logfile on another disk", fileErr)
	case fileErr != nil && !errors.Is(fileErr, winerr.ErrLogFileFull):
		why = fmt.Sprintf("the log file failed: %v", fileErr)
	}
	switch {
	case delivered == 0:
		fmt.Fprintln(&b, "No event reached the session: see the losses above.")
	case lost > 0 && p.LogBuffersLost > 0:
		fmt.Fprintf(&b, "%d events were lost and %d full buffers could not be written to the log file (%s).\n", lost, p.LogBuffersLost, why)
	case lost > 0 && p.NumberOfBuffers < p.MaximumBuffers:
		// The session could have grown: writers outran the logger, which adds buffers as
		// it sees them run short, not the bound.
		fmt.Fprintf(&b, "%d of the %d events the writers tried (%.2f%%) were lost because writers found no free buffer (ERROR_NOT_ENOUGH_MEMORY) before the logger added more: the session ended with %d of at most %d buffers, so raise -min-buffers (allocated at start), or make the sink faster, as you would for a real ETW session.\n",
			lost, lost+delivered, 100*float64(lost)/float64(lost+delivered), p.NumberOfBuffers, p.MaximumBuffers)
	case lost > 0:
		fmt.Fprintf(&b, "%d of the %d events the writers tried (%.2f%%) were lost because writers found no free buffer (ERROR_NOT_ENOUGH_MEMORY), with all %d buffers in use: raise -max-buffers, or make the sink faster, as you would for a real ETW session.\n",
			lost, lost+delivered, 100*float64(lost)/float64(lost+delivered), p.MaximumBuffers)
	case p.LogBuffersLost > 0:
		fmt.Fprintf(&b, "No event was lost by a writer, but %d full buffers could not be written to the log file (%s).\n", p.LogBuffersLost, why)
	case overwritten > 0:
		fmt.Fprintf(&b, "No event was lost by a writer, but the in-memory ring (BUFFERING) wrote over %d of them (%.2f%%) and keeps only the newest: a ring holds the last moments before a snapshot (etwemu logsave saves one to a file), not every event.\n",
			overwritten, 100*float64(overwritten)/float64(delivered))
	default:
		fmt.Fprintln(&b, "No events were lost: the logger returned buffers to the free list faster than writers filled them; try -slow-sink 2ms to see ETW drop events when its buffers run out.")
	}
	return b.String()
}

// pmcRefused runs the -pmc settings on a scratch kernel of the demo's version, processors
// and counter source, in a real-time session without a file, and returns the refusal
// they meet there: the PMC rules do not depend on the session's log file, and so the
// demo refuses such settings before StartTrace creates (or replaces) its log file.
func pmcRefused(cfg demoConfig, src pmc.Source) error {
	k, err := emu.New(emu.Config{Version: cfg.version, Processors: cfg.procs, PMCSource: src})
	if err != nil {
		return nil // the demo's own kernel says why
	}
	defer k.Close()
	h, err := k.StartTrace("etwemu-demo-pmc-check", &emu.Properties{LogFileMode: uint32(logmode.RealTime), BufferSize: 4})
	if err != nil {
		return nil // the demo's own StartTrace says why
	}
	return demoPMC(k, h, cfg.sources, io.Discard)
}

// demoPMC configures the session's counters: the profile sources by TraceSetInformation,
// event id 1 by NtSetSystemInformation, the two ways in.
func demoPMC(k *emu.Kernel, h emu.TraceHandle, sources []pmc.ProfileSource, out io.Writer) error {
	srcs := make([]uint32, len(sources))
	names := make([]string, len(sources))
	for i, s := range sources {
		srcs[i], names[i] = uint32(s), s.String()
	}
	if err := k.TraceSetInformation(h, pmc.TracePmcCounterListInfo, pmc.ULONGs(srcs...)); err != nil {
		if r := (*pmc.Refusal)(nil); errors.As(err, &r) && r.Rule == pmc.RuleCannotCount {
			return fmt.Errorf("TraceSetInformation(TracePmcCounterListInfo): %w; etwemu pmc says what this machine's counter sources count, and -pmc-source synthetic counts every profile source with made-up, increasing values", err)
		}
		return fmt.Errorf("TraceSetInformation(TracePmcCounterListInfo): %w", err)
	}
	if err := k.SetSystemInformation(pmc.SystemPerformanceTraceInformation, pmc.EventInformation(uint64(h), 1)); err != nil {
		return fmt.Errorf("NtSetSystemInformation(EventTraceProfileEventListInformation): %w", err)
	}
	fmt.Fprintf(out, "PMC: %s from the %s source on every event with id 1 (ETW_PMC_SUPPORT as %s lays it out)\n",
		strings.Join(names, ", "), k.Session(h).PMC().SourceName(), k.Version())
	return nil
}

// newFiles returns the files an EVENT_TRACE_FILE_MODE_NEWFILE session of pattern (a
// name with one %d) may write over: its first file, and every file already in the
// pattern's folder whose name is the pattern with a number for the %d.
func newFiles(pattern string) []string {
	out := []string{etl.NewFileName(pattern, 1)}
	dir, base := filepath.Split(pattern)
	before, after, ok := strings.Cut(base, "%d")
	if !ok {
		return out
	}
	ents, err := os.ReadDir(filepath.Clean(dir + "."))
	if err != nil {
		return out // checkOutput says what is wrong with the folder
	}
	for _, e := range ents {
		n, pre := strings.CutPrefix(e.Name(), before)
		if n, suf := strings.CutSuffix(n, after); pre && suf && n != "" && n != "1" && strings.Trim(n, "0123456789") == "" {
			out = append(out, filepath.Join(dir, e.Name()))
		}
	}
	return out
}
