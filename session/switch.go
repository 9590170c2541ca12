package session

import (
	"runtime"

	"github.com/etwemu/etwemu/winerr"
)

// switchBuffer is the slow path of Write (WmipSwitchBuffer): stream s's buffer old is
// full (or s has none), so put a free buffer in its place with a compare-and-swap on the
// stream's slot and queue old for the logger. It returns nil when the writer should try
// again, which includes losing the race to another writer that switched first.
//
// With no free buffer it takes old out of the slot, queues it, asks the logger goroutine
// for more buffers and returns ERROR_NOT_ENOUGH_MEMORY: the event is lost. Writers never
// allocate (invariant 4). A REAL_TIME session without consumers whose backlog is full
// refuses the writer with ERROR_LOG_FILE_FULL, and it too takes old out of the slot.
//
// Every refusal takes old out because every writer that finds a full buffer has already
// added its record's size to CurrentOffset: a buffer left in its slot while writers are
// refused grows by one record per refusal, and once 4 GB have been refused the offset
// carries into the count of reservations in the high half of the word.
func (l *Logger) switchBuffer(s *stream, idx int, old *Buffer) error {
	if !l.collecting.Load() {
		return ErrStopped // Stop takes every buffer out of its slot
	}
	if l.rtFull.Load() {
		l.unhook(s, old) // the logger drops it, counting it in RealTimeBuffersLost
		return winerr.ErrLogFileFull
	}
	var opens uint32
	if old != nil {
		opens = old.opens.Load()
	}
	nb := s.takeSpare()
	if nb == nil {
		nb = l.popFree()
	}
	if nb == nil {
		nb = l.stealSpare(idx)
	}
	if nb == nil {
		l.unhook(s, old)
		switch {
		case l.buffering:
			if l.recycle() {
				return nil // the oldest buffer of the ring is free again: try again
			}
		case l.blocking && !l.synchronous:
			return l.waitFree()
		default:
			l.noteShortage()
		}
		return winerr.ErrNotEnoughMemory
	}
	nb.open(idx)
	if l.switchHook.Load() != nil { // a test hook (SetSwitchHook): one load on this slow path
		if fn := l.switchHook.Swap(nil); fn != nil {
			(*fn)()
		}
	}
	// [emulator choice] A writer that finds its full buffer back in the slot, emptied by
	// the logger and opened again by another writer while it switched (the stream's spare
	// comes back round), does not install over it: its compare-and-swap would succeed on
	// the pointer and flush the reopened buffer early. The opens count, read as the switch
	// begins, tells the two apart; a reopening before that (the writer preempted between
	// its reservation and the switch) still costs that early flush, nothing more.
	if old != nil && old.opens.Load() != opens || !s.cur.CompareAndSwap(old, nb) {
		// Another writer switched first, or a flush emptied the slot: use theirs.
		l.retire(nb)
		return nil
	}
	if old != nil {
		l.queueFlush(old)
	}
	return nil
}

// unhook takes old, if still stream s's current buffer, out of the slot and queues it
// for the logger.
func (l *Logger) unhook(s *stream, old *Buffer) {
	if old != nil && s.cur.CompareAndSwap(old, nil) {
		l.queueFlush(old)
	}
}

// retire takes back a buffer that was opened but never installed. A writer holding a
// stale pointer may have reserved space in it meanwhile; then it holds events and goes to
// the flush queue instead of the free list.
func (l *Logger) retire(b *Buffer) {
	if end, ok := b.tryClose(l.bufSize); ok && end <= headerEnd {
		l.pushFree(b)
		return
	}
	l.queueFlush(b)
}

const headerEnd = 0x48 // abi.BufferHeaderSize, as an untyped constant for comparisons

// popFree takes the buffer on top of the free list, or returns nil if the list is empty.
// An empty list is seen without the lock (BuffersAvailable, stored under freeMu with every
// change to the list), so writers refused in a shortage do not queue on freeMu in front
// of the logger that is refilling it.
func (l *Logger) popFree() *Buffer {
	if l.freeBuffers.Load() == 0 {
		return nil
	}
	l.freeMu.Lock()
	n := len(l.free)
	if n == 0 {
		l.freeMu.Unlock()
		return nil
	}
	b := l.free[n-1]
	l.free = l.free[:n-1]
	l.freeBuffers.Store(int64(n - 1))
	l.freeMu.Unlock()
	return b
}

// takeSpare takes the stream's spare buffer, or returns nil if it has none: a load, and a
// swap only when there is one.
func (s *stream) takeSpare() *Buffer {
	if s.spare.Load() == nil {
		return nil
	}
	return s.spare.Swap(nil)
}

// stealSpare takes another stream's spare than stream own's (whose spare the writer has
// just found empty) when the free list is empty: a free buffer is free for every
// processor, as in Windows' one free list per logger, so a writer loses its event only
// when no buffer is free anywhere. A scan of the streams, on the way to a shortage only.
func (l *Logger) stealSpare(own int) *Buffer {
	if !l.spares {
		return nil
	}
	for i := range l.streams {
		if i == own {
			continue
		}
		if b := l.streams[i].takeSpare(); b != nil {
			return b
		}
	}
	return nil
}

// spareCount counts the buffers in the streams' spare slots. Exact while no writer is
// switching (Check, the logger between its own steps); a snapshot otherwise.
func (l *Logger) spareCount() int {
	n := 0
	if l.spares {
		for i := range l.streams {
			if l.streams[i].spare.Load() != nil {
				n++
			}
		}
	}
	return n
}

// pushFree makes b free: into the spare slot of the stream it was last current for, if
// the session keeps spares and that slot is empty, else onto the free list.
func (l *Logger) pushFree(b *Buffer) {
	b.state.Store(0) // EtwBufferStateFree
	l.freeMu.Lock()
	if l.drained < len(l.drainQ) && l.drainQ[l.drained] == b {
		l.drained++
	}
	if l.spares {
		if s := &l.streams[b.stream.Load()%uint32(len(l.streams))]; s.spare.Load() == nil {
			s.spare.Store(b) // spares are filled only here, under freeMu; writers only take
			l.freeMu.Unlock()
			return
		}
	}
	l.free = append(l.free, b)
	l.freeBuffers.Store(int64(len(l.free)))
	if l.blocking {
		l.freed.Broadcast()
	}
	l.freeMu.Unlock()
}

// flushBatch is how many full buffers wait before a writer wakes the logger goroutine.
//
// The kernel wakes its logger thread on every buffer switch. Here a wake costs the writer
// a futex call whenever the logger goroutine is parked (about 5 ns per event in
// BenchmarkWrite), while waiting too long makes writers cycle through more buffers than
// the cache holds (the free list is LIFO, so promptly recycled buffers are still hot).
// A small batch, or any shortage, balances the two.
const flushBatch = 4

// queueFlush puts a buffer that left its stream on the flush queue, and wakes the logger
// when flushBatch buffers wait or buffers run short (fewer free than one per stream).
func (l *Logger) queueFlush(b *Buffer) {
	b.state.Store(3) // EtwBufferStateFlush
	l.freeMu.Lock()
	l.flushQ = append(l.flushQ, b)
	queued := len(l.flushQ)
	if l.buffering {
		l.freeMu.Unlock()
		return // the ring waits for a snapshot or a recycle
	}
	if l.synchronous {
		l.freeMu.Unlock()
		if !l.held.Load() {
			l.service()
		}
		return
	}
	wake := queued >= l.wakeAt || len(l.free) <= len(l.streams)
	l.freeMu.Unlock()
	if wake {
		l.signal()
	}
	if queued >= 4*l.wakeAt {
		// The logger was woken batches ago and has not drained: every processor is busy
		// writing. The kernel's logger thread outranks the writers and would have run, so
		// give it this processor, as noteShortage does. With a processor to spare the
		// logger drains before the queue gets here, and writers never yield.
		runtime.Gosched()
	}
}

// noteShortage tells the logger goroutine that a writer found no free buffer: the first
// writer to see a shortage sets the flag and wakes the logger; writers refused after it,
// until the logger tops up, only read the flag. With many processors out of buffers
// together, a lock taken for every lost event made each loss cost about a microsecond
// and kept the logger itself from the free list (bench/RESULTS.md, the 16-CPU sweep).
//
// Every refused writer then yields its processor: the kernel's logger thread runs at a
// higher priority than the threads writing events and would run at once, while a Go
// goroutine woken by a busy writer waits for a time slice to end, and every event
// written meanwhile is lost. Yielding only once per shortage, writers that no longer
// queued on the lock lost ten times as many events (buffers=4KBx16/parallel: 0.95
// lost/op, against 0.02 with a yield per refusal).
func (l *Logger) noteShortage() {
	if !l.shortage.Load() && !l.shortage.Swap(true) {
		l.signal()
	}
	runtime.Gosched()
}

// signal wakes the logger goroutine without blocking; in a synchronous session the caller
// does the logger's work itself.
func (l *Logger) signal() {
	if l.synchronous {
		if !l.held.Load() {
			l.loggerWakeups.Add(1)
			l.service()
		}
		return
	}
	select {
	case l.wake <- struct{}{}:
		l.loggerWakeups.Add(1)
	default:
	}
}

// service does, on the caller, what a wake does in the logger goroutine: seal and write
// the queued buffers, then top up the free list. Synchronous sessions only.
func (l *Logger) service() {
	l.syncMu.Lock()
	defer l.syncMu.Unlock()
	l.drain(false)
	l.grow()
}
