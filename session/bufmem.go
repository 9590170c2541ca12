package session

import (
	"sync"

	"github.com/etwemu/etwemu/abi"
)

// [emulator choice] Buffer memory outlives its session: Windows returns a stopped
// logger's buffers to the nonpaged pool, and the emulator keeps their bytes and their
// records' completion flags in a pool by size for the next session's buffers, so that a
// program that starts and stops sessions by the thousand (a fuzz run, a benchmark's
// setup) does not allocate, fault in and clear them each time. Nothing needs the bytes
// cleared: a record is written whole, with its padding; a sealed buffer's tail is filled
// with 0xFF; and nothing reads a buffer past its filled bytes. The flags are cleared when
// they go back. The pools are sync.Pools: the garbage collector empties them.
var bufferMemory sync.Map // BufferSize (uint32) → *sync.Pool of *bufMem

// bufMem is the memory of one buffer: its BufferSize bytes and a completion flag for
// each record that can fit.
type bufMem struct {
	data   []byte
	commit []uint32
}

// takeMem returns the memory for a buffer of size bytes: a stopped session's, or new.
func takeMem(size uint32) *bufMem {
	if p, ok := bufferMemory.Load(size); ok {
		if m, ok := p.(*sync.Pool).Get().(*bufMem); ok {
			return m
		}
	}
	return &bufMem{data: make([]byte, size), commit: newFlags((size-abi.BufferHeaderSize)/minRecord + 1)}
}

// releaseData gives the memory of the logger's buffers to the pool. Stop calls it once
// the session has stopped: every buffer is free, and no writer or reader touches a free
// buffer's bytes or flags (a writer's reservation in a free buffer fails; Peek, Check and
// the sinks read only buffers in use or sealed). The buffers keep their slices, never to
// read or write them again.
func (l *Logger) releaseData() {
	p, _ := bufferMemory.LoadOrStore(l.bufSize, &sync.Pool{})
	pool := p.(*sync.Pool)
	l.freeMu.Lock()
	defer l.freeMu.Unlock()
	for _, b := range l.all {
		if m := b.mem; m != nil {
			b.mem = nil
			clear(m.commit) // clear already where the buffer was closed; clear for certain
			pool.Put(m)
		}
	}
}
