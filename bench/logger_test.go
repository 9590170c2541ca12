package bench

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/bench/benchbase"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/session"
)

// BenchmarkLogger measures the logger's capacity: how many buffers one session's logger
// goroutine seals, hands on and recycles a second, with the discard sink, the counting
// sink and a file, at buffer sizes of 4 KB, 64 KB and 1 MB. Writers on every processor
// write events of a quarter of a buffer (at most ETW's 64 KB), so that filling a buffer
// costs them little beside what the logger does with it; the session is in
// EVENT_TRACE_BLOCKING_MODE, so a writer that finds no free buffer waits for the logger
// instead of losing its event, and the rate is what the logger lets through. Besides
// events/s it reports buffers/s and logger-busy, the share of the run the logger
// goroutine worked rather than waited: near 1, buffers/s is the logger's capacity; well
// below it, the writers (or the machine) held the rate down and buffers/s is a lower
// bound.
func BenchmarkLogger(b *testing.B) {
	sinks := []struct {
		name string
		set  func(b *testing.B, p *emu.Properties)
	}{
		{"discard", func(b *testing.B, p *emu.Properties) { p.Sink = session.Discard{} }},
		{"counter", func(b *testing.B, p *emu.Properties) { p.Sink = &session.Counter{} }},
		// A circular file of 64 MB: real writes to the file system, bounded on disk.
		{"file", func(b *testing.B, p *emu.Properties) {
			p.LogFileName = filepath.Join(b.TempDir(), "logger.etl")
			p.LogFileMode |= logmode.Circular
			p.MaximumFileSize = 64
		}},
	}
	for _, kb := range []uint32{4, 64, 1024} {
		for _, sink := range sinks {
			b.Run(fmt.Sprintf("buffer=%dKB/sink=%s", kb, sink.name), func(b *testing.B) {
				loggerCapacity(b, kb, sink.set)
			})
		}
	}
}

// loggerCapacity is one case of BenchmarkLogger.
func loggerCapacity(b *testing.B, kb uint32, sink func(*testing.B, *emu.Properties)) {
	k, err := emu.New(emu.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(k.Close)
	prov := guid.FromName("etwemu.bench.logger")
	r, err := k.EventRegister(prov, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	p := &emu.Properties{BufferSize: kb, MinimumBuffers: 8, MaximumBuffers: 8,
		LogFileMode: logmode.PrivateLogger | logmode.PrivateInProc | logmode.Blocking}
	sink(b, p)
	if p.LogFileName == "" {
		p.LogFileMode |= logmode.RealTime
	}
	h, err := k.StartTrace("logger-capacity", p)
	if err != nil {
		b.Fatal(err)
	}
	if err := k.EnableTraceEx2(h, prov, emu.EnableProvider, 5, 0, 0, nil); err != nil {
		b.Fatal(err)
	}
	size := int(kb)*1024/4 - abi.EventHeaderSize - 0x48
	size = min(size, abi.MaxEventSize-abi.EventHeaderSize-8) &^ 7
	payload := make([]byte, size)
	desc := &emu.EventDescriptor{ID: 1, Level: 4}
	l := k.Session(h)
	before := l.Stats()
	benchbase.Run(b, size, true, func() { k.EventWrite(r, desc, payload) })
	after := l.Stats()
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(after.BuffersWritten-before.BuffersWritten)/s, "buffers/s")
		b.ReportMetric(min(1, (after.LoggerBusy-before.LoggerBusy).Seconds()/s), "logger-busy")
	}
	b.ReportMetric(float64(after.EventsLost-before.EventsLost)/float64(b.N), "lost/op")
}
