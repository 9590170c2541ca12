package emu

import (
	"context"
	"testing"

	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
)

// TestTraceCloseEndsProcess: Close (CloseTrace) ends a Process waiting for buffers of a
// session that goes on, with nil, after the buffers queued before it were processed; the
// session delivers the trace nothing written afterwards.
func TestTraceCloseEndsProcess(t *testing.T) {
	k, err := New(Config{Processors: 1, Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	h, err := k.StartTrace("rt", &Properties{LogFileMode: RealTimeMode})
	if err != nil {
		t.Fatal(err)
	}
	defer k.StopTrace(h, "", nil)
	r, err := k.EventRegister(guid.FromName("Etwemu.Test.TraceClose"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer k.EventUnregister(r)
	if err := k.EnableTraceEx2(h, guid.FromName("Etwemu.Test.TraceClose"), EnableProvider, 5, 0, 0, nil); err != nil {
		t.Fatal(err)
	}
	tr, err := k.OpenTrace("rt", 0)
	if err != nil {
		t.Fatal(err)
	}
	write := func(n int) {
		for i := 0; i < n; i++ {
			if err := k.EventWrite(r, &EventDescriptor{ID: 1, Level: 4}, []byte{1}); err != nil {
				t.Fatal(err)
			}
		}
		if err := k.FlushTrace(h, "", &Properties{}); err != nil {
			t.Fatal(err)
		}
	}
	write(10)
	events := 0
	first := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- tr.Process(context.Background(), func(b *etl.Buffer) error {
			if events == 0 {
				close(first)
			}
			return b.Records(func(rec etl.Record) error {
				if rec.Kind == etl.KindEventHeader {
					events++
				}
				return nil
			})
		})
	}()
	<-first // Process runs
	tr.Close()
	write(5) // after Close: not this trace's
	if err := <-done; err != nil || events != 10 || tr.BuffersLost() != 0 {
		t.Errorf("Process after Close: %v, %d events, %d buffers lost; want nil, 10, 0", err, events, tr.BuffersLost())
	}
	tr.Close()
}
