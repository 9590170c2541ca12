package emu

import (
	"context"

	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/internal/quote"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
)

// Consume attaches a real-time consumer to the session named name and calls fn with each
// buffer it delivers, decoded (OpenTrace and ProcessTrace in one Go call): first the
// buffers the session kept while no consumer was attached, then each buffer as the
// logger flushes it, in order per processor. backlog bounds the buffers waiting for fn
// (session.DefaultConsumerBacklog when 0, at most session.MaxRealTimeBacklogBytes of
// them); past it buffers are dropped and counted in
// RealTimeBuffersLost. Consume returns nil when the session stops and fn has seen every
// buffer delivered to it, ctx's error when ctx ends first, or fn's error.
//
// Errors: ERROR_WMI_INSTANCE_NOT_FOUND when no such session runs; ERROR_INVALID_PARAMETER
// for a session without EVENT_TRACE_REAL_TIME_MODE, and for a nil ctx or fn.
func (k *Kernel) Consume(ctx context.Context, name string, backlog int, fn func(*etl.Buffer) error) error {
	if err := processArgs(ctx, fn); err != nil {
		return err // before the consumer attaches
	}
	t, err := k.OpenTrace(name, backlog)
	if err != nil {
		return err
	}
	return t.Process(ctx, fn)
}

// Trace is a real-time consumer attached to a session: what OpenTrace returns for a
// real-time logger name. It leaves out EVENT_TRACE_LOGFILE's callbacks, which Process
// takes as a function.
type Trace struct {
	a *session.Attachment
	l *session.Logger // the session attached to
}

// OpenTrace attaches a real-time consumer to the session named name (OpenTrace with
// PROCESS_TRACE_MODE_REAL_TIME). From its return on, the session delivers every buffer
// it flushes to the consumer, after the buffers it kept while none was attached; Process
// reads them, CloseTrace (Trace.Close) detaches. backlog is as in Consume.
//
// Errors: ERROR_WMI_INSTANCE_NOT_FOUND when no such session runs; ERROR_INVALID_PARAMETER
// for a session without EVENT_TRACE_REAL_TIME_MODE.
func (k *Kernel) OpenTrace(name string, backlog int) (*Trace, error) {
	l, err := k.lookup(0, name)
	if err != nil {
		return nil, err
	}
	a, err := l.Attach(backlog)
	if err == session.ErrStopped {
		return nil, winerr.New(winerr.ErrWMIInstanceNotFound, "session %s stopped before the consumer attached", quote.Short(name))
	}
	if err != nil {
		return nil, err
	}
	return &Trace{a: a, l: l}, nil
}

// Session is the session the trace is attached to: the one OpenTrace found by its name,
// which is compared without regard to case, as Windows compares logger names.
func (t *Trace) Session() *Session { return &Session{t.l} }

// Process is ProcessTrace: it calls fn with each buffer, decoded, until the session
// stops or Close ran and every buffer delivered was seen (nil), ctx ends (its error; no
// buffer is processed after that) or fn fails (its error), then detaches; after an error
// the buffers still queued are given up, counted in BuffersDropped (OnDrop). Call it
// once: another call returns ERROR_BUSY. A nil ctx or fn is ERROR_INVALID_PARAMETER, and
// the trace stays attached, as ProcessTrace leaves the handle it refuses.
func (t *Trace) Process(ctx context.Context, fn func(*etl.Buffer) error) error {
	if err := processArgs(ctx, fn); err != nil {
		return err
	}
	return t.a.Process(ctx, func(b []byte) error {
		buf, err := etl.ParseBuffer(b)
		if err != nil {
			return err
		}
		return fn(buf)
	})
}

// Close is CloseTrace on a real-time trace: the session delivers the consumer no new
// buffer, and Process returns nil once it has processed the buffers already queued for
// it (where CloseTrace returns ERROR_CTX_CLOSE_PENDING). It may be called from any
// goroutine, before, during or after Process, and more than once. To end Process without
// the queued buffers, cancel its context.
func (t *Trace) Close() { t.a.Detach() }

// OnDrop sets the function Process calls with each buffer it gives up unread when it
// ends with an error (ctx's or fn's): delivered to this consumer, then dropped by it.
// Call it before Process.
func (t *Trace) OnDrop(fn func(*etl.Buffer)) {
	t.a.OnDrop(func(b []byte) {
		if buf, err := etl.ParseBuffer(b); err == nil {
			fn(buf)
		}
	})
}

// BuffersDropped returns the buffers Process gave up unread (OnDrop).
func (t *Trace) BuffersDropped() uint64 { return t.a.BuffersDropped() }

// BuffersLost returns the buffers the session dropped for this consumer because it had
// backlog buffers unprocessed (an etwemu addition): what this consumer lost, where the
// session's RealTimeBuffersLost counts what any consumer lost.
func (t *Trace) BuffersLost() uint64 { return t.a.BuffersLost() }

// EventsInBuffersLost returns the events in the buffers BuffersLost counts (an etwemu
// addition).
func (t *Trace) EventsInBuffersLost() uint64 { return t.a.EventsInBuffersLost() }

// SaveBuffers writes the in-memory ring of the EVENT_TRACE_BUFFERING_MODE session named
// name to a new ETL file at path (through Config.FileSystem), oldest buffer first, as
// xperf -flush does; the session keeps running and keeps its ring. It returns the trace
// buffers written after the header buffer. While it writes, the ring's buffers are held:
// a writer that needs a buffer then loses its event, counted in EventsLost, rather than
// overwrite a buffer being saved.
//
// Errors: ERROR_WMI_INSTANCE_NOT_FOUND when no such session runs; ERROR_INVALID_PARAMETER
// for a session that is not in-memory; the file's errors.
func (k *Kernel) SaveBuffers(name, path string) (int, error) {
	l, err := k.lookup(0, name)
	if err != nil {
		return 0, err
	}
	n, err := l.SaveBuffers(path, k.files)
	if err == session.ErrStopped {
		return 0, winerr.New(winerr.ErrWMIInstanceNotFound, "session %s stopped", quote.Short(name))
	}
	return n, err
}

// processArgs refuses what Process cannot run with.
func processArgs(ctx context.Context, fn func(*etl.Buffer) error) error {
	switch {
	case ctx == nil:
		return winerr.New(winerr.ErrInvalidParameter, "a nil context: pass context.Background() to consume until the session stops")
	case fn == nil:
		return winerr.New(winerr.ErrInvalidParameter, "a nil buffer callback")
	}
	return nil
}
