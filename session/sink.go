package session

import (
	"sync"

	"github.com/etwemu/etwemu/abi"
)

// Sink receives sealed buffers from a session's logger goroutine, in flush order. The
// slice is valid only during the call; a sink that keeps it must copy it. An error costs
// the buffer (LogBuffersLost), never the session.
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
}

// WriteBuffer implements Sink.
func (m *MemorySink) WriteBuffer(buf []byte) error {
	c := append([]byte(nil), buf...)
	m.mu.Lock()
	m.buffers = append(m.buffers, c)
	m.mu.Unlock()
	return nil
}

// Buffers returns the buffers received so far, oldest first.
func (m *MemorySink) Buffers() [][]byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([][]byte(nil), m.buffers...)
}

// Events walks every record of every buffer received and calls fn for each, stopping at
// the first error (a malformed buffer, or fn's own).
func (m *MemorySink) Events(fn func(buf []byte, r abi.Record) error) error {
	for _, b := range m.Buffers() {
		if err := abi.Records(b, func(r abi.Record) error { return fn(b, r) }); err != nil {
			return err
		}
	}
	return nil
}

// CountEvents returns the number of records in the buffers received so far.
func (m *MemorySink) CountEvents() (int, error) {
	n := 0
	err := m.Events(func([]byte, abi.Record) error { n++; return nil })
	return n, err
}
