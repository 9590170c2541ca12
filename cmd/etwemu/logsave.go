package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/winver"
)

func runLogsave(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("logsave", flag.ContinueOnError)
	events := fs.Int("events", 20000, "events to write into the ring")
	buffers := fs.Uint("buffers", 8, "MinimumBuffers: the size of the ring")
	bufferKB := fs.Uint("buffer-kb", 4, "BufferSize in KB")
	payload := fs.Int("payload", 100, "payload bytes per event")
	out := fs.String("o", "ring.etl", "the ETL file to save the ring to")
	version := winver.Default
	fs.Var(&version, "version", "Windows version to emulate")
	about := "Usage: etwemu logsave [flags]\n\nStarts an in-memory session (EVENT_TRACE_BUFFERING_MODE), writes events until its\nring of buffers has recycled its oldest ones many times, then saves the ring to an\nETL file, as xperf -flush does for an in-memory logger. The file holds the newest\nevents; etwemu dump shows them."
	if code := parseFlags(fs, about, args, stderr); code >= 0 {
		return code
	}
	if *events < 0 || *payload < 0 || *payload > 60000 {
		fmt.Fprintln(stderr, "etwemu logsave: -events must be positive, -payload 0..60000")
		return 2
	}
	if err := logsave(version, *events, uint32(*buffers), uint32(*bufferKB), *payload, *out, stdout); err != nil {
		fmt.Fprintf(stderr, "etwemu logsave: %v\n", err)
		return 1
	}
	return 0
}

func logsave(v winver.Version, events int, buffers, bufferKB uint32, payload int, path string, out io.Writer) error {
	k, err := emu.New(emu.Config{Version: v, Processors: 2})
	if err != nil {
		return err
	}
	defer k.Close()
	p := &emu.Properties{LogFileMode: logmode.Buffering, BufferSize: bufferKB, MinimumBuffers: buffers}
	h, err := k.StartTrace("etwemu-ring", p)
	if err != nil {
		return fmt.Errorf("StartTrace: %w", err)
	}
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
	for i := 0; i < events; i++ {
		if payload >= 4 {
			data[0], data[1], data[2], data[3] = byte(i), byte(i>>8), byte(i>>16), byte(i>>24)
		}
		if k.EventWriteEx(r, &emu.EventDescriptor{ID: uint16(i), Level: 4}, &emu.WriteOptions{Processor: i % 2}, data) != nil {
			refused++
		}
	}
	n, err := k.SaveBuffers("etwemu-ring", path)
	if err != nil {
		return fmt.Errorf("SaveBuffers: %w", err)
	}
	s := k.Session(h).Stats()
	fmt.Fprintf(out, "in-memory session: a ring of %d buffers of %d KB (MaximumBuffers ignored in BUFFERING mode)\n", p.MinimumBuffers, p.BufferSize)
	fmt.Fprintf(out, "wrote %d events: %d overwritten in %d recycled buffers, %d refused (EventsLost %d)\n",
		events, s.EventsOverwritten, s.BuffersOverwritten, refused, s.EventsLost)
	fmt.Fprintf(out, "saved %d buffers holding the newest %d events to %s\nread it with: etwemu dump %s\n",
		n, uint64(events-refused)-s.EventsOverwritten, path, path)
	return k.StopTrace(h, "", nil)
}
