package session

import "sync"

// [emulator choice] Buffer memory outlives its session: Windows returns a stopped
// logger's buffers to the nonpaged pool, and the emulator keeps their bytes in a pool by
// size for the next session's buffers, so that a program that starts and stops sessions
// by the thousand (a fuzz run, a benchmark's setup) does not allocate, fault in and clear
// them each time. Nothing needs the bytes cleared: a record is written whole, with its
// padding; a sealed buffer's tail is filled with 0xFF; and nothing reads a buffer past
// its filled bytes. The pools are sync.Pools: the garbage collector empties them.
var bufferMemory sync.Map // BufferSize (uint32) → *sync.Pool of *[]byte

// takeData returns size bytes for a buffer's data: a stopped session's, or new ones.
func takeData(size uint32) []byte {
	if p, ok := bufferMemory.Load(size); ok {
		if b, ok := p.(*sync.Pool).Get().(*[]byte); ok {
			return *b
		}
	}
	return make([]byte, size)
}

// releaseData gives the data of the logger's buffers to the pool. Stop calls it once the
// session has stopped: every buffer is free, and no writer or reader touches a free
// buffer's bytes (a writer's reservation in a free buffer fails; Peek, Check and the
// sinks read only buffers in use or sealed). The buffers keep their slices, never to
// read or write them again.
func (l *Logger) releaseData() {
	p, _ := bufferMemory.LoadOrStore(l.bufSize, &sync.Pool{})
	pool := p.(*sync.Pool)
	l.freeMu.Lock()
	defer l.freeMu.Unlock()
	for _, b := range l.all {
		d := b.data
		pool.Put(&d)
	}
}
