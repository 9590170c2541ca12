package session

import (
	"context"
	"errors"
	"math"
	"testing"

	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/winerr"
)

// rtProps are a small real-time session's properties: 4 KB buffers, so that a few dozen
// test events fill one.
func rtProps() Properties {
	return Properties{LogFileMode: logmode.RealTime, BufferSize: 4, MinimumBuffers: 8, MaximumBuffers: 8}
}

// writeN writes n test events on processor 0 and flushes, so that every one of them is in
// a buffer delivered to the attached consumers when it returns (the session is
// synchronous).
func writeN(t *testing.T, l *Logger, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		if err := l.Write(0, testEvent(0x40, byte(i))); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	l.Flush()
}

// TestDetachDeliversWhatIsQueued: Detach (CloseTrace) ends delivery but lets Process
// finish every buffer queued before it, then return nil; events written afterwards go
// to no consumer.
func TestDetachDeliversWhatIsQueued(t *testing.T) {
	l := startSynchronous(t, "rt", 1, rtProps())
	defer l.Stop()
	a, err := l.Attach(64)
	if err != nil {
		t.Fatal(err)
	}
	const n = 100 // several buffers
	writeN(t, l, n)
	a.Detach()
	if l.Consumers() != 0 {
		t.Fatalf("%d consumers after Detach", l.Consumers())
	}
	writeN(t, l, 10) // kept for a later consumer, not this one
	got, buffers := 0, 0
	err = a.Process(context.Background(), func(b []byte) error {
		got += recordsIn(t, b)
		buffers++
		return nil
	})
	if err != nil || got != n || buffers < 2 {
		t.Errorf("Process after Detach: %v, %d events in %d buffers; want nil, %d in several", err, got, buffers, n)
	}
	a.Detach() // twice: nothing
	a.Close()
}

// TestCloseEndsProcess: Close ends a Process blocked waiting for buffers, as
// ringbuf.Reader.Close ends a Read, and a Process called after Close processes nothing
// of what was queued.
func TestCloseEndsProcess(t *testing.T) {
	l := startSynchronous(t, "rt", 1, rtProps())
	defer l.Stop()
	a, err := l.Attach(0)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- a.Process(context.Background(), func([]byte) error { return nil }) }()
	a.Close()
	if err := <-done; !errors.Is(err, ErrClosed) || !errors.Is(err, winerr.ErrCancelled) {
		t.Errorf("Process after Close: %v, want ErrClosed (ERROR_CANCELLED)", err)
	}

	b, err := l.Attach(64)
	if err != nil {
		t.Fatal(err)
	}
	writeN(t, l, 100)
	b.Close()
	b.Close()
	seen := 0
	if err := b.Process(context.Background(), func([]byte) error { seen++; return nil }); !errors.Is(err, ErrClosed) || seen != 0 {
		t.Errorf("Process after Close with buffers queued: %v, %d buffers processed; want ErrClosed and none", err, seen)
	}
	if l.Consumers() != 0 {
		t.Errorf("%d consumers attached after Close", l.Consumers())
	}
}

// TestCloseFromInsideProcess: Close called from fn ends Process before the next buffer.
func TestCloseFromInsideProcess(t *testing.T) {
	l := startSynchronous(t, "rt", 1, rtProps())
	defer l.Stop()
	a, err := l.Attach(64)
	if err != nil {
		t.Fatal(err)
	}
	writeN(t, l, 100)
	seen := 0
	err = a.Process(context.Background(), func([]byte) error { seen++; a.Close(); return nil })
	if !errors.Is(err, ErrClosed) || seen != 1 {
		t.Errorf("Close from fn: %v after %d buffers; want ErrClosed after 1", err, seen)
	}
}

// TestLossesPerAttachment: a consumer with a short queue loses buffers that a consumer
// beside it receives; each attachment counts only its own, the session counts each
// buffer once.
func TestLossesPerAttachment(t *testing.T) {
	l := startSynchronous(t, "rt", 1, rtProps())
	defer l.Stop()
	short, err := l.Attach(1)
	if err != nil {
		t.Fatal(err)
	}
	long, err := l.Attach(64)
	if err != nil {
		t.Fatal(err)
	}
	writeN(t, l, 100)
	short.Detach()
	long.Detach()
	count := func(a *Attachment) (events, buffers int) {
		if err := a.Process(context.Background(), func(b []byte) error { events += recordsIn(t, b); buffers++; return nil }); err != nil {
			t.Fatal(err)
		}
		return
	}
	se, sb := count(short)
	le, lb := count(long)
	if le != 100 || sb != 1 || se >= le {
		t.Fatalf("the long queue got %d events in %d buffers, the short one %d in %d; want 100, and 1 buffer", le, lb, se, sb)
	}
	if short.BuffersLost() != uint64(lb-1) || long.BuffersLost() != 0 || l.Stats().RealTimeBuffersLost != uint64(lb-1) {
		t.Errorf("BuffersLost: short %d, long %d, session %d; want %d, 0, %d", short.BuffersLost(), long.BuffersLost(),
			l.Stats().RealTimeBuffersLost, lb-1, lb-1)
	}
	if got, want := l.Stats().RealTimeEventsLost, uint64(le-se); short.EventsInBuffersLost() != want || got != want {
		t.Errorf("events in the lost buffers: short %d, session %d; want %d (what the long queue got beyond the short one)", short.EventsInBuffersLost(), got, want)
	}
}

// A consumer's backlog is bounded as the session's own: a count past
// MaxRealTimeBacklogBytes of buffers is taken as that many, not made (a backlog of 1<<40
// ran the process out of memory), and a small one as given.
func TestAttachBacklogBounded(t *testing.T) {
	l := startSynchronous(t, "rt", 1, rtProps())
	defer l.Stop()
	for _, c := range []struct{ asked, want int }{
		{0, DefaultConsumerBacklog}, {-1, DefaultConsumerBacklog}, {3, 3},
		{math.MaxInt, MaxRealTimeBacklogBytes / 4096}, {MaxRealTimeBacklogBytes / 4096, MaxRealTimeBacklogBytes / 4096},
	} {
		a, err := l.Attach(c.asked)
		if err != nil {
			t.Fatal(err)
		}
		if got := cap(a.c.ch); got != c.want {
			t.Errorf("Attach(%d): a queue of %d buffers, want %d", c.asked, got, c.want)
		}
		a.Close()
	}
}

// A REAL_TIME session stopped while no consumer is attached loses the buffers it held
// for one: RealTimeBuffersLost counts them and RealTimeEventsLost their events, every
// event written.
func TestStopWithoutConsumerCountsEvents(t *testing.T) {
	l := startSynchronous(t, "rt", 1, rtProps())
	writeN(t, l, 100)
	l.Stop()
	if st := l.Stats(); st.RealTimeEventsLost != 100 || st.RealTimeBuffersLost == 0 || st.EventsLost != 0 {
		t.Errorf("RealTimeEventsLost %d, RealTimeBuffersLost %d, EventsLost %d; want 100, at least 1, 0", st.RealTimeEventsLost, st.RealTimeBuffersLost, st.EventsLost)
	}
}

// TestProcessGivesUpCounted: a Process that ends by Close, by its context or by fn's
// error gives up the buffers still queued, each counted in BuffersDropped and handed to
// OnDrop, so that processed plus dropped is every buffer delivered; a second Process is
// refused with ERROR_BUSY.
func TestProcessGivesUpCounted(t *testing.T) {
	for _, end := range []string{"close", "context", "fn"} {
		t.Run(end, func(t *testing.T) {
			l := startSynchronous(t, "rt", 1, rtProps())
			defer l.Stop()
			a, err := l.Attach(64)
			if err != nil {
				t.Fatal(err)
			}
			const n = 200 // several buffers
			writeN(t, l, n)
			got, dropped := 0, 0
			a.OnDrop(func(b []byte) { dropped += recordsIn(t, b) })
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			failed := errors.New("fn failed")
			err = a.Process(ctx, func(b []byte) error {
				got += recordsIn(t, b)
				switch end { // after the first buffer
				case "close":
					a.Close()
				case "context":
					cancel()
				case "fn":
					return failed
				}
				return nil
			})
			if err == nil || got == 0 || got+dropped != n || a.BuffersDropped() == 0 {
				t.Errorf("Process: %v, %d events processed, %d dropped in %d buffers; want an error and %d in all", err, got, dropped, a.BuffersDropped(), n)
			}
			if err := a.Process(ctx, func([]byte) error { return nil }); !errors.Is(err, winerr.ErrBusy) {
				t.Errorf("a second Process: %v, want ERROR_BUSY", err)
			}
		})
	}
}
