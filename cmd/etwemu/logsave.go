package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/internal/quote"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/winver"
)

func runLogsave(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("logsave", flag.ContinueOnError)
	events := fs.Int("events", 20000, "events to write into the ring (1 to 100000000)")
	buffers := fs.Uint("buffers", 8, "MinimumBuffers: the size of the ring (0: two per processor; at most 100000)")
	bufferKB := fs.Uint("buffer-kb", 4, fmt.Sprintf("BufferSize in KB (1 to %d, which StartTrace clamps to the version's range)", maxBufferKB))
	payload := fs.Int("payload", 100, fmt.Sprintf("payload bytes per event (0 to %d, and the record must fit a buffer)", maxPayload))
	out := fs.String("o", filepath.Join(os.TempDir(), "etwemu-ring.etl"), "the ETL file to save the ring to (an existing ETL file is replaced, with a line saying so; other files need -force)")
	force := fs.Bool("force", false, forceHelp)
	asJSON := fs.Bool("json", false, "print the report as one JSON object, and nothing while it runs")
	version := winver.Default
	fs.Var(&version, "version", "Windows version to emulate, 6.0 ... 6.3, 10.0, 1511 ... 2004 (EventRegister exists from 6.0)")
	about := "Usage: etwemu logsave [flags]\n\nStarts an in-memory session (EVENT_TRACE_BUFFERING_MODE), writes events until its\nring of buffers has recycled its oldest ones many times, then saves the ring to an\nETL file, as xperf -flush does for an in-memory logger. The file holds the newest\nevents; etwemu dump shows them.\n\nSIGINT or SIGTERM (Ctrl-C) stops the writing early: the ring as it stands is saved,\nthe report printed, and the exit status is 128 plus the signal's number. A second\nsignal exits at once."
	if code := parseFlags(fs, about, "", args, stdout, stderr); code >= 0 {
		return code
	}
	b := bounds{fs: fs}
	b.int("events", int64(*events), 1, 100_000_000, "")
	b.uint("buffers", uint64(*buffers), 0, 100_000, "")
	b.uint("buffer-kb", uint64(*bufferKB), 1, maxBufferKB, "")
	b.int("payload", int64(*payload), 0, maxPayload, "EVENT_HEADER.Size is 16 bits: header and payload are at most 0xFFFF bytes")
	if *out == "" {
		b.fail("-o: name the file to save the ring to")
	}
	b.eventRegister(version)
	if code := b.done(stderr); code >= 0 {
		return code
	}
	var notices bytes.Buffer // printed when the file is written: a refused session replaces nothing
	if err := checkOutput(&notices, "logsave", "o", *out, etlOutput, *force, false); err != nil {
		stderr.Write(notices.Bytes())
		fmt.Fprintf(stderr, "etwemu logsave: %v\n", err)
		return 1
	}
	ctx, stop := interruptible(context.Background(), stderr, "writing the ring")
	defer stop()
	text, res := io.Writer(stdout), (*logsaveResult)(nil)
	if *asJSON {
		text, res = io.Discard, &logsaveResult{}
	}
	err := logsave(ctx, version, *events, uint32(*buffers), uint32(*bufferKB), *payload, *out, text, func() { stderr.Write(notices.Bytes()) }, res)
	if err != nil {
		fmt.Fprintf(stderr, "etwemu logsave: %v\n", err)
	}
	if res != nil && res.File != "" { // the ring was saved
		if code := writeJSON("logsave", stdout, stderr, res); code != 0 {
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

// logsaveWriting, when not nil, is called with logsave's context once the writer has
// written its first batch of events (logsaveBatch). Tests set it, before logsave starts,
// to send their signals from it.
var logsaveWriting func(ctx context.Context)

// logsaveBatch is how many events logsave writes between two looks at its context.
const logsaveBatch = 1024

// logsaveResult is logsave's report for a script (-json).
type logsaveResult struct {
	RingBuffers       uint32 `json:"ringBuffers"`
	BufferSizeKB      uint32 `json:"bufferSizeKB"`
	EventsWritten     int    `json:"eventsWritten"`
	EventsOverwritten uint64 `json:"eventsOverwritten"`
	BuffersRecycled   uint64 `json:"buffersRecycled"`
	EventsRefused     int    `json:"eventsRefused"`
	EventsLost        uint64 `json:"eventsLost"`
	BuffersSaved      int    `json:"buffersSaved"`
	EventsKept        uint64 `json:"eventsKept"` // the newest, in the saved ring
	File              string `json:"file"`
	Interrupted       string `json:"interrupted,omitempty"` // the signal that stopped the writing early
}

// logsave writes events into a BUFFERING session's ring and saves the ring to path,
// calling saving just before it writes the file, and fills res, if not nil. ctx ending
// (a signal) stops the writing early; the ring as it stands is saved.
func logsave(ctx context.Context, v winver.Version, events int, buffers, bufferKB uint32, payload int, path string, out io.Writer, saving func(), res *logsaveResult) error {
	k, err := emu.New(emu.Config{Version: v, Processors: 2})
	if err != nil {
		return err
	}
	defer k.Close()
	p := &emu.Properties{LogFileMode: logmode.Buffering, BufferSize: bufferKB, MinimumBuffers: buffers}
	if err := recordFits(v, k.Processors(), *p, payload); err != nil {
		return err
	}
	h, err := k.StartTrace("etwemu-ring", p)
	if err != nil {
		return fmt.Errorf("StartTrace: %w", err)
	}
	defer k.StopTrace(h, "", nil)
	g := guid.FromName("Demo.Ring")
	r, err := k.EventRegister(g, nil, nil)
	if err != nil {
		return err
	}
	if err := k.EnableTraceEx2(h, g, regentry.ControlEnable, 5, 0, 0, nil); err != nil {
		return err
	}
	data := make([]byte, payload)
	refused := 0
	wanted := events
	start, shown := time.Now(), time.Now()
	for i := 0; i < wanted; i++ {
		if i > 0 && i%logsaveBatch == 0 {
			if i == logsaveBatch && logsaveWriting != nil {
				logsaveWriting(ctx)
			}
			if ctx.Err() != nil {
				events = i
				break
			}
			if now := time.Now(); now.Sub(shown) >= time.Second { // a line a second on a long run
				shown = now
				fmt.Fprintf(out, "  %5.1fs  wrote %d of %d events (%.0f%%)\n", now.Sub(start).Seconds(), i, wanted, 100*float64(i)/float64(wanted))
			}
		}
		if payload >= 4 {
			data[0], data[1], data[2], data[3] = byte(i), byte(i>>8), byte(i>>16), byte(i>>24)
		}
		if k.EventWriteEx(r, &emu.EventDescriptor{ID: uint16(i), Level: 4}, &emu.WriteOptions{Processor: i % 2}, data) != nil {
			refused++
		}
	}
	saving()
	n, err := k.SaveBuffers("etwemu-ring", path)
	if err != nil {
		return fmt.Errorf("SaveBuffers: %w", err)
	}
	if cause := context.Cause(ctx); cause != nil && events < wanted {
		fmt.Fprintf(out, "%v: stopped writing after %d of %d events; saving the ring as it stands\n", cause, events, wanted)
	}
	s := k.Session(h).Stats()
	fmt.Fprintf(out, "in-memory session: a ring of %d buffers of %d KB (MaximumBuffers ignored in BUFFERING mode)\n", p.MinimumBuffers, p.BufferSize)
	fmt.Fprintf(out, "wrote %s: %d overwritten in %d recycled buffer%s, %d refused (EventsLost %d)\n",
		quote.Count(events, "event"), s.EventsOverwritten, s.BuffersOverwritten, quote.S(s.BuffersOverwritten), refused, s.EventsLost)
	kept := uint64(events-refused) - s.EventsOverwritten
	if res != nil {
		*res = logsaveResult{RingBuffers: p.MinimumBuffers, BufferSizeKB: p.BufferSize, EventsWritten: events, EventsOverwritten: s.EventsOverwritten,
			BuffersRecycled: s.BuffersOverwritten, EventsRefused: refused, EventsLost: s.EventsLost, BuffersSaved: n, EventsKept: kept, File: path}
		if cause := context.Cause(ctx); cause != nil && events < wanted {
			res.Interrupted = cause.Error()
		}
	}
	fmt.Fprintf(out, "saved %s holding the newest %s to %s\nread it with: etwemu dump %s\n",
		quote.Count(n, "buffer"), quote.Count(kept, "event"), path, path)
	if kept == 0 {
		return fmt.Errorf("the saved ring holds no event (%d written, %d refused, %d overwritten)", events, refused, s.EventsOverwritten)
	}
	return nil
}
