package session

import (
	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/winerr"
)

// ErrCancelled is what a writer waiting for a buffer in EVENT_TRACE_BLOCKING_MODE gets
// when the session stops under it. The event was never accepted and is not counted.
// [UNCERTAIN] no public source names the code; ERROR_CANCELLED reads as what happened.
var ErrCancelled = winerr.ErrCancelled

// waitFree is BLOCKING mode's answer to an empty free list (Geoff Chappell,
// "ETW_UM_LOGGER_CONTEXT": the user-mode logger's condition variable): wake the logger and
// wait until it frees a buffer, then let the writer try again. Stop wakes every waiter with
// ErrCancelled.
func (l *Logger) waitFree() error {
	l.waiters.Add(1)
	defer l.waiters.Add(-1)
	l.freeMu.Lock()
	for len(l.free) == 0 && l.collecting.Load() {
		// Ask again each round: another writer may have taken the buffer the logger
		// freed, and the logger's flush of every stream frees one for certain.
		l.signal()
		l.freed.Wait()
	}
	l.freeMu.Unlock()
	if !l.collecting.Load() {
		return ErrCancelled
	}
	return nil
}

// recycle moves the oldest buffer of a BUFFERING session's ring (the flush list) back to
// the free list, counting the events it overwrites, and reports whether there was one
// (a buffer a writer still holds, or a snapshot, is passed over: while SaveBuffers
// writes the ring, a writer short of a buffer loses its event, counted, rather than
// overwrite a buffer being saved).
//
// [emulator choice] WRK's WmipGetFreeBuffer (5.2) moved the whole flush list back and
// failed the attempt, losing the event; the emulator keeps a ring that gives up only its
// oldest buffer, and the writer goes on.
func (l *Logger) recycle() bool {
	l.freeMu.Lock()
	defer l.freeMu.Unlock()
	for i, b := range l.flushQ {
		if b.snapshot {
			continue
		}
		end, ok := b.tryClose(l.bufSize)
		if !ok {
			continue
		}
		l.eventsOverwritten.Add(countRecords(b.data, int(end)))
		l.buffersOverwritten.Add(1)
		b.state.Store(uint32(abi.BufferStateFree))
		l.free = append(l.free, b)
		l.flushQ = append(l.flushQ[:i], l.flushQ[i+1:]...)
		l.freeBuffers.Store(int64(len(l.free)))
		return true
	}
	return false
}

// ring swaps every stream's buffer into a BUFFERING session's ring and returns the ring,
// oldest first, each buffer closed and sealed (once: a buffer a snapshot sealed keeps its
// sequence number). The buffers stay in the ring, held from writers (recycle) until
// release. Logger goroutine (or syncMu) only.
func (l *Logger) ring() []*Buffer {
	l.swapStreams()
	l.freeMu.Lock()
	q := append([]*Buffer(nil), l.flushQ...)
	for _, b := range q {
		b.snapshot = true
	}
	l.freeMu.Unlock()
	out := q[:0]
	for _, b := range q {
		end := l.waitClose(b)
		if end <= abi.BufferHeaderSize {
			continue
		}
		if !b.sealed {
			l.seal(b, end, 0)
		}
		out = append(out, b)
	}
	return out
}

// release gives the buffers ring held back to the ring, for writers to recycle.
func (l *Logger) release() {
	l.freeMu.Lock()
	for _, b := range l.all {
		b.snapshot = false
	}
	l.freeMu.Unlock()
}

// dropRing ends a BUFFERING session at stop: the ring's buffers go to the Sink, the
// emulator's observer, and back to the free list; nothing is written or counted, since
// an in-memory session keeps its events only until a snapshot.
func (l *Logger) dropRing() {
	for _, b := range l.ring() {
		if l.sink != nil {
			l.toSink(b.data)
		}
	}
	l.release()
	l.freeMu.Lock()
	q := l.flushQ
	l.flushQ = nil
	l.freeMu.Unlock()
	for _, b := range q {
		l.waitClose(b)
		l.pushFree(b)
	}
}

// SaveBuffers writes a BUFFERING session's ring to a new ETL file, oldest buffer first,
// as xperf -flush or tracelog -flush with a file name do for in-memory loggers. The ring
// keeps its buffers, so a later snapshot writes them again. It returns how many trace
// buffers the file holds after its header.
//
// Errors: ERROR_INVALID_PARAMETER for a session without EVENT_TRACE_BUFFERING_MODE;
// the file's errors with their codes.
func (l *Logger) SaveBuffers(path string, fs etl.FileSystem) (int, error) {
	if !l.buffering {
		return 0, winerr.New(winerr.ErrInvalidParameter, "session %q is not an in-memory (EVENT_TRACE_BUFFERING_MODE) session", l.name)
	}
	var n int
	var err error
	l.paused(func() {
		if !l.collecting.Load() {
			err = ErrStopped
			return
		}
		info := l.headerInfo()
		var w *etl.Writer
		if w, err = etl.Create(etl.Options{Path: path, BufferSize: l.bufSize, Info: info, FS: fs}); err != nil {
			return
		}
		for _, b := range l.ring() {
			r := w.WriteBuffer(b.data)
			if r.Err != nil {
				err = r.Err
				break
			}
			n++
		}
		l.release()
		if e := w.Close(etl.Counters{EventsLost: uint32(l.eventsLost.Load()), EndTime: nowFileTime()}); err == nil {
			err = e
		}
	})
	return n, err
}
