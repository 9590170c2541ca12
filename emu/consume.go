package emu

import (
	"context"

	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
)

// Consume attaches a real-time consumer to the session named name and calls fn with each
// buffer it delivers, decoded (OpenTrace and ProcessTrace in one Go call): first the
// buffers the session kept while no consumer was attached, then each buffer as the
// logger flushes it, in order per processor. backlog bounds the buffers waiting for fn
// (session.DefaultConsumerBacklog when 0); past it buffers are dropped and counted in
// RealTimeBuffersLost. Consume returns nil when the session stops and fn has seen every
// buffer delivered to it, ctx's error when ctx ends first, or fn's error.
//
// Errors: ERROR_WMI_INSTANCE_NOT_FOUND when no such session runs; ERROR_INVALID_PARAMETER
// for a session without EVENT_TRACE_REAL_TIME_MODE.
func (k *Kernel) Consume(ctx context.Context, name string, backlog int, fn func(*etl.Buffer) error) error {
	l, err := k.lookup(0, name)
	if err != nil {
		return err
	}
	err = l.Consume(ctx, backlog, func(b []byte) error {
		buf, err := etl.ParseBuffer(b)
		if err != nil {
			return err
		}
		return fn(buf)
	})
	if err == session.ErrStopped {
		return winerr.New(winerr.ErrWMIInstanceNotFound, "session %q stopped before the consumer attached", name)
	}
	return err
}

// SaveBuffers writes the in-memory ring of the EVENT_TRACE_BUFFERING_MODE session named
// name to a new ETL file at path (through Config.FileSystem), oldest buffer first, as
// xperf -flush does; the session keeps running and keeps its ring. It returns the trace
// buffers written after the header buffer.
//
// Errors: ERROR_WMI_INSTANCE_NOT_FOUND when no such session runs; ERROR_INVALID_PARAMETER
// for a session that is not in-memory; the file's errors.
func (k *Kernel) SaveBuffers(name, path string) (int, error) {
	l, err := k.lookup(0, name)
	if err != nil {
		return 0, err
	}
	n, err := l.SaveBuffers(path, k.fs)
	if err == session.ErrStopped {
		return 0, winerr.New(winerr.ErrWMIInstanceNotFound, "session %q stopped", name)
	}
	return n, err
}
