package emu

import (
	"testing"

	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/internal/callstack"
)

// BenchmarkStackItem writes 64-byte events to a real-time session whose enablement asks
// for a STACK_TRACE item, from callstack.Frames frames down, so that each item holds the
// most return addresses; the logger drops the buffers (DiscardSink).
func BenchmarkStackItem(b *testing.B) {
	k, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	h, err := k.StartTrace("Stacks", &Properties{LogFileMode: RealTimeMode, BufferSize: 64, Sink: DiscardSink{}})
	if err != nil {
		b.Fatal(err)
	}
	prov := guid.FromName("Bench.Stacks")
	r, err := k.EventRegister(prov, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	if err := k.EnableTraceEx2(h, prov, EnableProvider, 5, 0, 0, &EnableParameters{EnableProperty: guidtable.PropertyStackTrace}); err != nil {
		b.Fatal(err)
	}
	d := &EventDescriptor{ID: 1, Level: 4}
	payload := make([]byte, 64)
	b.SetBytes(int64(len(payload)))
	b.ReportAllocs()
	callstack.Deep(callstack.Frames, func() {
		for b.Loop() {
			k.EventWrite(r, d, payload)
		}
	})
	var p Properties
	if err := k.StopTrace(h, "", &p); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(p.EventsLost)/float64(b.N), "lost/op")
}
