package session

import (
	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/winerr"
)

// Peek calls fn for each of the session's buffers, in the order of Buffers, with its view
// and its bytes up to the end of its records (Buffer.filled: CurrentOffset, or where a
// full buffer's records end), as a debugger reads a logger's buffers from kernel memory
// (`!wmitrace.bufdump`). The bytes are a copy, so that fn cannot change the buffer, made
// into one scratch buffer that each call reuses: they are valid until fn returns, and a
// caller that keeps any of them copies them. (A fresh copy of every buffer made each view
// cost twice the session's buffer memory, by the collector's pacing.) The first 0x48 bytes of a buffer not yet sealed are not
// its header, which the seal writes: they hold whatever an earlier fill left. A buffer
// holding a reservation whose record is still being written (ReferenceCount, as View
// derives it, above 0), and a free buffer, come with nil bytes.
//
// Peek is for synchronous sessions (Config.Synchronous), where it runs under the lock
// that stands in for the logger: no buffer is sealed, recycled or reopened meanwhile, and
// a buffer whose reference count reads 0 holds only complete records below its offset
// (View's loads of their completion flags order the reads of their bytes).
// Other sessions return ERROR_NOT_SUPPORTED, since their logger goroutine moves buffers
// while they are read. Writers are never blocked by Peek beyond a buffer switch.
func (l *Logger) Peek(fn func(v BufferView, data []byte)) error {
	if !l.synchronous {
		return winerr.New(winerr.ErrNotSupported, "session %q has a logger goroutine; buffer contents can be read from a synchronous kernel", l.name)
	}
	l.paused(func() {
		l.freeMu.Lock()
		all := append([]*Buffer(nil), l.all...)
		l.freeMu.Unlock()
		var scratch []byte
		for _, b := range all {
			v := b.View() // loads the completion flags: the acquires that order the records below
			var data []byte
			if v.ReferenceCount == 0 && v.State != abi.BufferStateFree {
				if scratch == nil {
					scratch = make([]byte, l.bufSize)
				}
				n := b.filled(v)
				data = scratch[:n:n] // capped: an append by fn copies
				copy(data, b.data[:n])
			}
			fn(v, data)
		}
	})
	return nil
}
