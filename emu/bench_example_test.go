package emu_test

import (
	"testing"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/guid"
)

// BenchmarkYourOwnWrite is a benchmark of the write path as a user would write one
// (docs/benchmarks.md, "A benchmark of your own"): a real-time session whose buffers
// the logger drops (DiscardSink), a provider it enables, EventWrite from every writer
// goroutine, and the events/s and events lost per event written.
func BenchmarkYourOwnWrite(b *testing.B) {
	k, err := emu.New(emu.Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	h, err := k.StartTrace("Bench", &emu.Properties{LogFileMode: emu.RealTimeMode, BufferSize: 64, Sink: emu.DiscardSink{}})
	if err != nil {
		b.Fatal(err)
	}
	prov := guid.FromName("Bench.Provider")
	reg, err := k.EventRegister(prov, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := k.EnableTraceEx2(h, prov, emu.EnableProvider, 5, 0, 0, nil); err != nil {
		b.Fatal(err)
	}
	d := &emu.EventDescriptor{ID: 1, Level: 4}
	payload := make([]byte, 64)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			k.EventWrite(reg, d, payload) // an error is a lost event, counted in EventsLost
		}
	})
	b.StopTimer()
	var p emu.Properties
	if err := k.StopTrace(h, "", &p); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(p.EventsLost)/float64(b.N), "lost/op")
}
