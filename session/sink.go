package session

import (
	"sync"
	"sync/atomic"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/etl"
)

// Sink receives sealed buffers from a session's logger goroutine, in flush order. The
// slice is valid only during the call; a sink that keeps it must copy it. An error costs
// the buffer (LogBuffersLost), never the session. The logger waits for the Sink: a flush
// or stop of its own session called from it would wait for ever, and the kernel refuses
// them (ERROR_POSSIBLE_DEADLOCK; Logger.CalledFromSink); what reads or changes the
// session with its logger paused (a query's LogFileName, an update, INCREMENT_FILE) runs
// at once, on the Sink's goroutine, which is the logger's. A Sink of a BLOCKING session
// that writes to it may wait for a buffer only its own return frees.
type Sink interface {
	WriteBuffer(buf []byte) error
}

// Discard is a Sink that drops every buffer after counting it as written.
type Discard struct{}

// WriteBuffer implements Sink.
func (Discard) WriteBuffer([]byte) error { return nil }

// MemorySink keeps a copy of every sealed buffer, for inspection and tests.
type MemorySink struct {
	mu      sync.Mutex
	buffers [][]byte // protected by mu
	Counter
}

// WriteBuffer implements Sink.
func (m *MemorySink) WriteBuffer(buf []byte) error {
	if err := m.Counter.WriteBuffer(buf); err != nil {
		return err
	}
	c := append([]byte(nil), buf...)
	m.mu.Lock()
	m.buffers = append(m.buffers, c)
	m.mu.Unlock()
	return nil
}

// Counter is a Sink that keeps no bytes: it counts the buffers and the events in them,
// and refuses (the session counts LogBuffersLost) a buffer whose records do not walk
// cleanly, remembering the first such error.
type Counter struct {
	buffers, events atomic.Uint64 // atomic; added to by the logger goroutine
	mu              sync.Mutex
	bad             error // first malformed buffer; protected by mu
}

// WriteBuffer implements Sink.
func (c *Counter) WriteBuffer(buf []byte) error {
	h, _ := abi.DecodeBufferHeader(buf)
	n, err := etl.CountRecords(buf, int(h.Offset))
	if err != nil {
		c.mu.Lock()
		if c.bad == nil {
			c.bad = err
		}
		c.mu.Unlock()
		return err
	}
	c.buffers.Add(1)
	c.events.Add(uint64(n))
	return nil
}

// EventsWritten returns the events in the buffers received.
func (c *Counter) EventsWritten() uint64 { return c.events.Load() }

// BuffersReceived returns the buffers received.
func (c *Counter) BuffersReceived() uint64 { return c.buffers.Load() }

// Err returns the error of the first malformed buffer received, or nil.
func (c *Counter) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.bad
}

// Buffers returns the buffers received so far, oldest first.
func (m *MemorySink) Buffers() [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([][]byte(nil), m.buffers...)
}

// Events walks every record of every buffer received and calls fn for each, stopping at
// the first error (a malformed buffer, or fn's own).
func (m *MemorySink) Events(fn func(buf []byte, r etl.Record) error) error {
	for _, b := range m.Buffers() {
		if err := etl.SealedRecords(b, func(r etl.Record) error { return fn(b, r) }); err != nil {
			return err
		}
	}
	return nil
}

// CountEvents returns the number of records in the buffers received so far.
func (m *MemorySink) CountEvents() (int, error) {
	n := 0
	err := m.Events(func([]byte, etl.Record) error { n++; return nil })
	return n, err
}
