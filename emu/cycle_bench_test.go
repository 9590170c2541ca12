package emu

import (
	"testing"

	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/logmode"
)

// BenchmarkSessionCycle is what a fuzzer or a test that builds its own kernel pays
// around its events: a synchronous kernel of four processors with an in-memory disk, a
// provider registered, a SEQUENTIAL file session and a real-time one started and
// enabled, 20 events of 64 bytes, both sessions stopped, the provider unregistered and
// the kernel closed.
func BenchmarkSessionCycle(b *testing.B) {
	prov := guid.FromName("Bench.Cycle")
	d := &EventDescriptor{ID: 1, Level: 4}
	payload := make([]byte, 64)
	b.ReportAllocs()
	for b.Loop() {
		k, err := New(Config{Processors: 4, FileSystem: &etl.MemFS{}, Synchronous: true})
		if err != nil {
			b.Fatal(err)
		}
		r, err := k.EventRegister(prov, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		file, err := k.StartTrace("File", &Properties{LogFileMode: logmode.Sequential, BufferSize: 4, LogFileName: "cycle.etl"})
		if err != nil {
			b.Fatal(err)
		}
		rt, err := k.StartTrace("RealTime", &Properties{LogFileMode: RealTimeMode, BufferSize: 4, Sink: DiscardSink{}})
		if err != nil {
			b.Fatal(err)
		}
		for _, h := range []TraceHandle{file, rt} {
			if err := k.EnableTraceEx2(h, prov, EnableProvider, 5, 0, 0, nil); err != nil {
				b.Fatal(err)
			}
		}
		for range 20 {
			if err := k.EventWrite(r, d, payload); err != nil {
				b.Fatal(err)
			}
		}
		for _, h := range []TraceHandle{file, rt} {
			if err := k.StopTrace(h, "", &Properties{}); err != nil {
				b.Fatal(err)
			}
		}
		if err := k.EventUnregister(r); err != nil {
			b.Fatal(err)
		}
		k.Close()
	}
}
