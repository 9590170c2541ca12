package emu

import (
	"context"
	"errors"
	"testing"

	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/winerr"
)

// realTimeSession returns a synchronous kernel of one processor running the real-time
// session "rt", both closed when the test ends.
func realTimeSession(t *testing.T) (*Kernel, TraceHandle) {
	t.Helper()
	k, err := New(Config{Processors: 1, Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	h, err := k.StartTrace("rt", &Properties{LogFileMode: RealTimeMode})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.StopTrace(h, "", nil) })
	return k, h
}

// TestTraceCloseEndsProcess: Close (CloseTrace) ends a Process waiting for buffers of a
// session that goes on, with nil, after the buffers queued before it were processed; the
// session delivers the trace nothing written afterwards.
func TestTraceCloseEndsProcess(t *testing.T) {
	k, h := realTimeSession(t)
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

// Consume and Process refuse a nil context or callback with ERROR_INVALID_PARAMETER
// (they dereferenced them: a panic in the caller's goroutine, or in Process once a
// buffer came); Consume refuses before it attaches, and a refused Process leaves its
// trace attached, to process or close.
func TestConsumeNilArguments(t *testing.T) {
	k, _ := realTimeSession(t)
	fn := func(*etl.Buffer) error { return nil }
	var nilCtx context.Context
	if err := k.Consume(nilCtx, "rt", 0, fn); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("Consume with a nil context: %v", err)
	}
	if err := k.Consume(context.Background(), "rt", 0, nil); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("Consume with a nil callback: %v", err)
	}
	tr, err := k.OpenTrace("rt", 0)
	if err != nil {
		t.Fatalf("OpenTrace after the refused Consumes: %v", err)
	}
	if err := tr.Process(nilCtx, fn); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("Process with a nil context: %v", err)
	}
	if err := tr.Process(context.Background(), nil); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("Process with a nil callback: %v", err)
	}
	tr.Close()
	if err := tr.Process(context.Background(), fn); err != nil {
		t.Errorf("Process after the refusals and Close: %v", err)
	}
}
