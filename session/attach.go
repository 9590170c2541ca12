package session

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/etwemu/etwemu/winerr"
)

// ErrClosed is what Attachment.Process returns when Close ended it: the consumer gave
// up the buffers still queued for it. It carries ERROR_CANCELLED, ProcessTrace's code
// for a consumer that cancelled processing (a BufferCallback returning FALSE).
var ErrClosed = winerr.New(winerr.ErrCancelled, "the real-time consumer was closed")

// Consume attaches a real-time consumer and processes what it receives: Attach, then
// Attachment.Process.
func (l *Logger) Consume(ctx context.Context, backlog int, fn func(buf []byte) error) error {
	a, err := l.Attach(backlog)
	if err != nil {
		return err
	}
	return a.Process(ctx, fn)
}

// Attachment is one real-time consumer attached to a session, what OpenTrace holds for a
// real-time trace (the PROCESSTRACE_HANDLE's delivery queue); it leaves out the
// EVENT_TRACE_LOGFILE the handle was opened with. From Attach on, the session delivers
// its buffers to it until Detach (CloseTrace's graceful end), Close (an immediate end)
// or the session's stop.
type Attachment struct {
	l       *Logger
	c       *consumer
	pending [][]byte // the buffers kept while no consumer was attached; Process's goroutine only

	closeOnce sync.Once
	closed    chan struct{} // closed once, by Close (under closeOnce): Process returns ErrClosed

	processing atomic.Bool      // set by the one Process call; a second is refused
	onDrop     func(buf []byte) // set by OnDrop before Process; called by Process's goroutine
	dropped    atomic.Uint64    // buffers Process gave up unread; Process's goroutine adds
}

// Attach attaches a real-time consumer: it receives the buffers the session kept while no
// consumer was attached, then every buffer the session delivers from now on, in flush
// order (so in order per processor). backlog bounds the buffers waiting to be processed
// (DefaultConsumerBacklog when 0, and never more than MaxRealTimeBacklogBytes of them, one
// at least, as a session's own backlog); past it buffers are dropped for this consumer,
// counted in its BuffersLost and in the session's RealTimeBuffersLost. Process reads them; Detach
// ends delivery and lets Process finish what is queued; Close ends it at once.
//
// Errors: ERROR_INVALID_PARAMETER for a session without EVENT_TRACE_REAL_TIME_MODE;
// ErrStopped for a session that has stopped.
func (l *Logger) Attach(backlog int) (*Attachment, error) {
	if l.rt == nil {
		return nil, winerr.New(winerr.ErrInvalidParameter, "session %q has no EVENT_TRACE_REAL_TIME_MODE", l.name)
	}
	if backlog <= 0 {
		backlog = DefaultConsumerBacklog
	}
	backlog = min(backlog, max(1, MaxRealTimeBacklogBytes/int(l.bufSize))) // a queue of 1<<40 was made whole
	c := &consumer{ch: make(chan []byte, backlog)}
	rt := l.rt
	rt.mu.Lock()
	if rt.closed {
		rt.mu.Unlock()
		return nil, ErrStopped
	}
	pending := rt.backlog
	rt.backlog = nil
	rt.consumers = append(rt.consumers, c)
	l.rtFull.Store(false)
	rt.mu.Unlock()
	return &Attachment{l: l, c: c, pending: pending, closed: make(chan struct{})}, nil
}

// Process calls fn with every buffer the attachment receives, then detaches. It returns
// nil once the session has stopped or Detach ran and every buffer queued before was
// processed; ErrClosed once Close ran (before the next buffer, if fn was running);
// ctx's error when ctx ends first; or fn's error. When it returns an error, the buffers
// still queued for the attachment are given up: counted in BuffersDropped and handed to
// the OnDrop function. Call it once: a second call, while the first runs or after,
// returns ERROR_BUSY.
func (a *Attachment) Process(ctx context.Context, fn func(buf []byte) error) (err error) {
	if !a.processing.CompareAndSwap(false, true) {
		return winerr.New(winerr.ErrBusy, "the real-time consumer is already being processed: call Process once")
	}
	defer func() {
		a.Close()
		if err != nil {
			a.dropQueued()
		}
	}()
	pending := a.pending
	a.pending = nil
	for i, b := range pending {
		if err := a.ended(ctx); err != nil {
			a.drop(pending[i:]...)
			return err
		}
		if err := fn(b); err != nil {
			a.drop(pending[i+1:]...)
			return err
		}
	}
	for {
		// Close and ctx win over a buffer that is ready, so that nothing is processed
		// after either; select alone picks at random among ready cases.
		if err := a.ended(ctx); err != nil {
			return err
		}
		select {
		case <-a.closed:
			return ErrClosed
		case <-ctx.Done():
			return ctx.Err()
		case b, ok := <-a.c.ch:
			if !ok {
				return nil // stopped or detached, and everything queued was processed
			}
			if err := a.ended(ctx); err != nil {
				a.drop(b)
				return err
			}
			if err := fn(b); err != nil {
				return err
			}
		}
	}
}

// OnDrop sets the function Process calls, on its goroutine, with each buffer it gives
// up unread. Call it before Process.
func (a *Attachment) OnDrop(fn func(buf []byte)) { a.onDrop = fn }

// BuffersDropped returns the buffers Process gave up unread when it ended with an error
// (Close, its context, fn's error): delivered to this consumer, then dropped by it.
func (a *Attachment) BuffersDropped() uint64 { return a.dropped.Load() }

// drop gives up bufs: counted, and handed to the OnDrop function.
func (a *Attachment) drop(bufs ...[]byte) {
	for _, b := range bufs {
		a.dropped.Add(1)
		if a.onDrop != nil {
			a.onDrop(b)
		}
	}
}

// dropQueued gives up what is left in the queue once Close has detached the attachment
// (which closes the queue; a queue the session's stop closed is closed too).
func (a *Attachment) dropQueued() {
	for {
		select {
		case b, ok := <-a.c.ch:
			if !ok {
				return
			}
			a.drop(b)
		default:
			return
		}
	}
}

// ended returns ErrClosed after Close, ctx's error after ctx ends, else nil.
func (a *Attachment) ended(ctx context.Context) error {
	select {
	case <-a.closed:
		return ErrClosed
	default:
		return ctx.Err()
	}
}

// Detach ends delivery gracefully, as CloseTrace does for a real-time trace: the session
// delivers the attachment nothing more, and Process returns nil once it has processed
// the buffers already queued for it. Detaching twice, or after the session stopped, does
// nothing.
func (a *Attachment) Detach() {
	rt := a.l.rt
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for i, x := range rt.consumers {
		if x == a.c {
			rt.consumers = append(rt.consumers[:i], rt.consumers[i+1:]...)
			close(x.ch) // under rt.mu, as deliver's sends and closeRealtime's close
			return
		}
	}
}

// Close ends delivery at once, as ringbuf.Reader.Close in cilium/ebpf ends a Read: the
// attachment detaches, the buffers queued for it are dropped, and a Process in progress
// returns ErrClosed as soon as the fn call it is in (if any) returns. Closing twice does
// nothing.
func (a *Attachment) Close() {
	a.closeOnce.Do(func() { close(a.closed) })
	a.Detach()
}

// BuffersLost returns the buffers the session dropped for this consumer because its
// queue was full: what this consumer lost, where the session's RealTimeBuffersLost
// counts what any consumer lost.
func (a *Attachment) BuffersLost() uint64 { return a.c.lost.Load() }

// EventsInBuffersLost returns the events (EVENT_HEADER records) in the buffers
// BuffersLost counts, which no consumer notice carries (RT_LostBuffer gives the buffers).
func (a *Attachment) EventsInBuffersLost() uint64 { return a.c.lostEvents.Load() }
