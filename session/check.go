package session

import (
	"fmt"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/etl"
)

// Check walks the logger's buffers and reports every broken rule through report. It must
// be called while no writer is inside Write (between writes, or after writers joined);
// the logger's own work is paused for the walk, so buffers in the logger's hands are
// seen where they are. For the caller's conservation rule (events accepted == events
// sealed + events pending) it returns the events in buffers not yet sealed and, when the
// sink is an EventCounter, the events the sink has received, both read in the same pause
// (sealed is -1 for other sinks).
//
// The rules:
//   - buffer-place: every buffer of the GlobalList is in exactly one place: the free
//     list, one stream's spare slot, one stream's current slot, the flush queue, or the
//     batch being sealed.
//   - buffer-count: MinimumBuffers <= NumberOfBuffers <= MaximumBuffers, and the
//     counters NumberOfBuffers and BuffersAvailable match the lists.
//   - buffer-state: a free or spare buffer is closed with state Free; a current buffer is open
//     with state GeneralLogging; a queued buffer has state Flush.
//   - buffer-refs: with no writer inside Write, no buffer holds a reference.
//   - buffer-records: the records of a buffer not yet sealed walk cleanly to the end of
//     its data.
func (l *Logger) Check(report func(rule, detail string)) (pending int, sealed int64) {
	sealed = -1
	l.paused(func() {
		pending = l.checkLocked(report)
		if c, ok := l.sink.(EventCounter); ok {
			sealed = int64(c.EventsWritten())
		}
	})
	return pending, sealed
}

// EventCounter is a sink that counts the events in the buffers it received (Counter,
// MemorySink); Check reports its count.
type EventCounter interface {
	EventsWritten() uint64
}

// paused runs fn while the logger does no work: in the logger goroutine, or under syncMu
// for a synchronous session, or directly once the logger has exited. Called from the
// session's Sink, it runs fn at once: the caller is the logger goroutine, whose work
// waits for the Sink (a request would wait for itself).
func (l *Logger) paused(fn func()) {
	if l.CalledFromSink() {
		fn()
		return
	}
	if l.synchronous {
		l.syncMu.Lock()
		defer l.syncMu.Unlock()
		fn()
		return
	}
	r := request{kind: reqRun, run: fn, reply: make(chan struct{})}
	select {
	case l.reqs <- r:
		<-r.reply
	case <-l.done:
		fn()
	}
}

// place is where Check found a buffer.
type place uint8

const (
	nowhere place = iota
	onFree
	onStream
	onFlush
	inFlight
	onSpare
)

func (p place) String() string {
	return [...]string{"nowhere", "free list", "a stream", "flush queue", "the batch being sealed", "a stream's spare slot"}[p]
}

func (l *Logger) checkLocked(report func(rule, detail string)) int {
	bad := func(rule, format string, args ...any) {
		report(rule, fmt.Sprintf("session %q (id %d): ", l.name, l.id)+fmt.Sprintf(format, args...))
	}
	// Copies of the lists, on the stack for a session of up to 64 buffers: Check runs
	// after every control call of a fuzz run.
	var allBuf, freeBuf, flushBuf [64]*Buffer
	var whereBuf [64]place
	l.freeMu.Lock()
	all := append(allBuf[:0], l.all...)
	free := append(freeBuf[:0], l.free...)
	flushQ := append(flushBuf[:0], l.flushQ...)
	var flight []*Buffer
	if l.drained < len(l.drainQ) {
		flight = append(flight, l.drainQ[l.drained:]...)
	}
	l.freeMu.Unlock()

	// where[i] is the place of all[i]: a buffer's id is its index in the GlobalList,
	// which only grows. A buffer found in a place but not in the GlobalList is reported
	// where it is found.
	where := whereBuf[:0]
	where = append(where, make([]place, len(all))...)
	put := func(b *Buffer, p place) {
		if b.id < 0 || b.id >= len(all) || all[b.id] != b {
			bad("buffer-place", "a buffer on %v is not in the GlobalList", p)
			return
		}
		if old := where[b.id]; old != nowhere {
			bad("buffer-place", "buffer %d is both on %v and on %v", b.id, old, p)
			return
		}
		where[b.id] = p
	}
	for _, b := range free {
		put(b, onFree)
	}
	for i := range l.streams {
		if b := l.streams[i].cur.Load(); b != nil {
			put(b, onStream)
		}
		if b := l.streams[i].spare.Load(); b != nil {
			if !l.spares {
				bad("buffer-place", "buffer %d is in stream %d's spare slot of a session without spares", b.id, i)
			}
			put(b, onSpare)
		}
	}
	for _, b := range flushQ {
		put(b, onFlush)
	}
	for _, b := range flight {
		put(b, inFlight)
	}
	for i, b := range all {
		if where[i] == nowhere {
			bad("buffer-place", "buffer %d is on no list and in no stream", b.id)
		}
	}

	n := int64(len(all))
	if maxB := int64(l.maxBuffers.Load()); n < int64(l.minBuffers) || n > maxB {
		bad("buffer-count", "%d buffers, outside [MinimumBuffers %d, MaximumBuffers %d]", n, l.minBuffers, maxB)
	}
	if got := l.numberOfBuffers.Load(); got != n {
		bad("buffer-count", "NumberOfBuffers says %d, the GlobalList holds %d", got, n)
	}
	if got := l.freeBuffers.Load(); got != int64(len(free)) {
		bad("buffer-count", "BuffersAvailable says %d, the free list holds %d", got, len(free))
	}

	pending := 0
	for i, b := range all {
		v := b.View()
		if v.ReferenceCount != 0 {
			bad("buffer-refs", "buffer %d holds %d references with no writer active", b.id, v.ReferenceCount)
		}
		switch where[i] {
		case onFree, onSpare:
			if v.State != abi.BufferStateFree || !v.Closed {
				bad("buffer-state", "free buffer %d has state %v, closed %v", b.id, v.State, v.Closed)
			}
		case onFlush:
			if v.State != abi.BufferStateFlush {
				bad("buffer-state", "queued buffer %d has state %v", b.id, v.State)
			}
			pending += l.countRecords(b, v, bad)
		case onStream:
			if v.State != abi.BufferStateGeneralLogging || v.Closed {
				bad("buffer-state", "current buffer %d has state %v, closed %v", b.id, v.State, v.Closed)
			}
			pending += l.countRecords(b, v, bad)
		case inFlight:
			pending += l.countRecords(b, v, bad)
		}
	}
	return pending
}

// countRecords counts the records of a buffer not yet sealed, up to where its data ends.
func (l *Logger) countRecords(b *Buffer, v BufferView, bad func(rule, format string, args ...any)) int {
	n, err := etl.CountRecords(b.data, int(b.filled(v)))
	if err != nil {
		bad("buffer-records", "unsealed buffer %d: %v", b.id, err)
	}
	return n
}
