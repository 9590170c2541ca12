package session

import (
	"sync/atomic"

	"github.com/etwemu/etwemu/abi"
)

// Layout of Buffer.word: CurrentOffset in the low 32 bits, ReferenceCount in the high 32,
// as the two ULONGs at +0x08 and +0x0C of WMI_BUFFER_HEADER read as one little-endian
// 64-bit word.
const (
	refOne     = uint64(1) << 32            // one reference
	refRelease = uint64(0xFFFFFFFF00000000) // adding it drops one reference (-refOne mod 2^64)
	closedOff  = uint32(1) << 31            // set in CurrentOffset while the buffer is closed
	offMask    = uint64(0xFFFFFFFF)
)

// Buffer is the emulator's model of one trace buffer: WMI_BUFFER_HEADER followed by
// records, BufferSize bytes in all. The header's bytes are written when the buffer is
// sealed; until then CurrentOffset, ReferenceCount and SavedOffset live in atomics. Not
// modelled: the list links (SlistEntry, GlobalEntry), which Go slices replace.
type Buffer struct {
	// word is CurrentOffset | ReferenceCount<<32. Atomic; added to by writers, closed and
	// opened by the logger goroutine and by the switching writer.
	word atomic.Uint64
	// saved is SavedOffset. Atomic; stored by the one writer whose reservation crossed the
	// end, reset by the switching writer before the buffer opens.
	saved atomic.Uint32
	// state is the ETW_BUFFER_STATE. Atomic; written by whoever moves the buffer (see
	// invariant 1 of the package), read by views.
	state atomic.Uint32
	// stream is the processor stream the buffer was last current for. Written by the
	// switching writer before the buffer opens; read by the logger after it closes.
	stream atomic.Uint32
	// end is the end of data fixed when the buffer was closed. Atomic; written by the
	// closer, read by the logger goroutine.
	end atomic.Uint32

	data []byte // BufferSize bytes; immutable slice header
	id   int    // position in Logger.all; immutable
	// sealed: the header and tail are written (seal). Set by the logger, cleared by open;
	// the free and flush lists (under freeMu) order the two.
	sealed bool
}

func newBuffer(size uint32, id int) *Buffer {
	b := &Buffer{data: make([]byte, size), id: id}
	b.word.Store(uint64(closedOff | abi.BufferHeaderSize))
	b.state.Store(uint32(abi.BufferStateFree))
	return b
}

// open makes a closed buffer current for stream: empty (CurrentOffset 0x48) and accepting
// reservations. References held by writers that saw it closed are kept.
func (b *Buffer) open(stream int) {
	b.sealed = false
	b.saved.Store(0)
	b.end.Store(0)
	b.stream.Store(uint32(stream))
	b.state.Store(uint32(abi.BufferStateGeneralLogging))
	for {
		w := b.word.Load()
		if b.word.CompareAndSwap(w, w&^offMask|abi.BufferHeaderSize) {
			return
		}
	}
}

// tryClose closes the buffer when no writer holds a reference, so no reservation can
// succeed in it again, and returns the end of its data. It reports false while writers
// are still copying.
func (b *Buffer) tryClose(size uint32) (end uint32, ok bool) {
	w := b.word.Load()
	if w>>32 != 0 {
		return 0, false
	}
	if uint32(w)&closedOff != 0 {
		// Closed before (a switcher retired it); failed reservations since then have moved
		// CurrentOffset, so the end fixed at that close is the one that counts.
		return b.end.Load(), true
	}
	if !b.word.CompareAndSwap(w, w|uint64(closedOff)) {
		return 0, false
	}
	end = min(uint32(w), size)
	if s := b.saved.Load(); s != 0 {
		end = s
	}
	b.end.Store(end)
	return end, true
}

// BufferView is a snapshot of one buffer for views and invariant checks.
type BufferView struct {
	ID             int
	State          abi.BufferState
	Stream         int
	CurrentOffset  uint32
	ReferenceCount uint32
	SavedOffset    uint32
	Closed         bool
}

// View returns a snapshot of the buffer's live header fields.
func (b *Buffer) View() BufferView {
	w := b.word.Load()
	return BufferView{
		ID: b.id, State: abi.BufferState(b.state.Load()), Stream: int(b.stream.Load()),
		CurrentOffset: uint32(w) &^ closedOff, ReferenceCount: uint32(w >> 32),
		SavedOffset: b.saved.Load(), Closed: uint32(w)&closedOff != 0,
	}
}
