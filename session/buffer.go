package session

import (
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/internal/hw"
)

// Layout of Buffer.word: CurrentOffset in the low 32 bits and, in the high 32, how many
// reservations were made since the buffer opened, so that one LOCK XADD gives a writer
// both its record's place and its ordinal.
const (
	oneRecord = uint64(1) << 32 // one more reservation
	closedOff = uint32(1) << 31 // set in CurrentOffset while the buffer is closed
	offMask   = uint64(0xFFFFFFFF)
	// settledBit is set in Buffer.saved's offset half when the crossing writer found every
	// record before its reservation complete and cleared their flags (Buffer.settle).
	settledBit = uint64(1) << 31
)

// minRecord is the smallest aligned record a reservation takes (a SYSTEM_TRACE_HEADER);
// it bounds how many records one buffer holds, and so the length of Buffer.commit.
const minRecord = abi.SystemHeaderSize

// Buffer is the emulator's model of one trace buffer: WMI_BUFFER_HEADER followed by
// records, BufferSize bytes in all. The header's bytes are written when the buffer is
// sealed; until then CurrentOffset, the writers in flight and SavedOffset live in
// atomics. Not modelled: the list links (SlistEntry, GlobalEntry), which Go slices
// replace.
//
// [emulator choice] Windows counts the writers still copying in ReferenceCount: one
// interlocked increment with the reservation and one decrement after the copy. The
// emulator takes the reservation and an ordinal in one atomic add (word) and publishes the
// finished record with a flag in commit, a plain store (hw.StoreRelease), so a writer pays
// one locked instruction instead of two (bench/RESULTS.md, the ladder of floors);
// ReferenceCount is derived from the flags for views (View).
type Buffer struct {
	bufferFields
	// The padding makes a Buffer bufferBytes long, a size class of its own, so that each
	// buffer starts on its own pair of cache lines: a processor's reservations (the
	// LOCK XADD on word) then share no line with the fields of the buffer next to it in
	// memory, which another processor's writers read on every event. At 136 bytes, in the
	// 144-byte class, a buffer's word could share its line with its neighbour's slice
	// headers; padded, two writers took 10.07 ns an event instead of 10.95 (medians of five
	// paired rounds, bench/HISTORY.md, "Buffers on lines of their own").
	_ [bufferBytes - unsafe.Sizeof(bufferFields{})]byte
}

// bufferBytes is the size of a Buffer: a Go size class whose objects start 256 bytes
// apart, aligned, and so never share a pair of 64-byte lines (the unit the processors'
// adjacent-line prefetch fetches) with another object.
const bufferBytes = 256

// bufferFields are the fields of a Buffer, without its padding.
type bufferFields struct {
	// word is CurrentOffset | reservations<<32. Atomic; added to by writers, closed by
	// tryClose, reset by open.
	word atomic.Uint64
	// saved is SavedOffset | fit<<32, where fit is how many reservations fit before the
	// one that crossed the end, with settledBit. Atomic; stored by the one writer
	// whose reservation crossed the end, reset by open before the buffer opens.
	saved atomic.Uint64
	// state is the ETW_BUFFER_STATE. Atomic; written by whoever moves the buffer (see
	// invariant 1 of the package), read by views.
	state atomic.Uint32
	// opens counts the times the buffer opened. Atomic; added to by open, read by a
	// switching writer (switchBuffer) to tell the buffer it found full from the same
	// buffer opened again meanwhile.
	opens atomic.Uint32
	// stream is the processor stream the buffer was last current for. Written by the
	// switching writer before the buffer opens; read by the logger after it closes.
	stream atomic.Uint32
	// end is the end of data, known once the buffer is closed and, if a reservation
	// crossed the end before that, its writer has stored saved. Atomic; written by
	// tryClose and open, read by Check.
	end atomic.Uint32
	// commit holds a flag per reservation that fits, by ordinal: set to 1 by its writer
	// (hw.StoreRelease) after the record's last byte, read with atomic loads by settle
	// and tryClose (through firstUnset, two flags a load where hw.WideLoads allows) and
	// by View, and cleared, once every flag before the close or the crossing is set, by
	// settle (the crossing writer, before it stores saved) or else by tryClose, before
	// the buffer can open again.
	commit []uint32

	// closeMu serialises tryClose, open and View over the close state below.
	closeMu sync.Mutex
	// closing: the buffer was closed with word closeWord. done: every record reserved
	// before the close is complete, its flags are cleared, and end is final. checked:
	// flags below it were seen set. All under closeMu.
	closing, done bool
	closeWord     uint64
	checked       uint32

	data []byte // BufferSize bytes; immutable slice header
	// mem is where data and commit came from, until Stop gives it back to the pool
	// (releaseData, under the logger's freeMu).
	mem *bufMem
	id  int // position in Logger.all; immutable
	// sealed: the header and tail are written (seal). Set by the logger, cleared by open;
	// the free and flush lists (under freeMu) order the two.
	sealed bool
	// snapshot: a BUFFERING session's snapshot holds the buffer (ring), so writers short
	// of a buffer must not take it back (recycle). Under freeMu.
	snapshot bool
}

func newBuffer(size uint32, id int) *Buffer {
	m := takeMem(size)
	b := &Buffer{bufferFields: bufferFields{data: m.data, id: id, commit: m.commit, mem: m}}
	b.word.Store(uint64(closedOff | abi.BufferHeaderSize))
	b.state.Store(uint32(abi.BufferStateFree))
	b.done = true
	b.end.Store(abi.BufferHeaderSize)
	return b
}

// open makes a closed, complete buffer current for stream: empty (CurrentOffset 0x48, no
// reservations) and accepting them. Reservations that writers holding a stale pointer
// made while it was closed failed, and are forgotten.
func (b *Buffer) open(stream int) {
	b.closeMu.Lock()
	b.closing, b.done, b.checked = false, false, 0
	b.closeMu.Unlock()
	b.sealed = false
	b.saved.Store(0)
	b.end.Store(0)
	b.stream.Store(uint32(stream))
	b.state.Store(uint32(abi.BufferStateGeneralLogging))
	b.opens.Add(1)
	b.word.Store(abi.BufferHeaderSize)
}

// tryClose closes the buffer, so that no reservation can succeed in it again, and
// returns the end of its data once every record reserved before the close is complete.
// It reports false while writers are still copying (or the writer whose reservation
// crossed the end has not yet stored SavedOffset); a later call goes on from there.
// Closing an already complete buffer returns its end again.
func (b *Buffer) tryClose(size uint32) (end uint32, ok bool) {
	b.closeMu.Lock()
	defer b.closeMu.Unlock()
	if b.done {
		return b.end.Load(), true
	}
	if !b.closing {
		b.closing, b.closeWord = true, b.word.Or(uint64(closedOff))
	}
	end, fit, settled, ok := b.fitted(b.closeWord, size)
	if !ok {
		return 0, false
	}
	b.end.Store(end)
	if !settled {
		if b.checked = b.firstUnset(b.checked, fit); b.checked < fit {
			return 0, false
		}
		clear(b.commit[:fit])
	}
	b.done = true
	return end, true
}

// firstUnset returns the ordinal of the first record in [from, fit) whose completion
// flag is not set, or fit when all are.
//
// Where hw.WideLoads allows, it reads the flags eight at a time, as four 8-byte words
// whose AND still has both halves set only if every flag is, and looks for an unset flag
// one by one only in the block that has one. A flag at a time, the settling writer's
// scan of a 64 KB buffer's 480 flags cost about 0.5 ns an event in BenchmarkWrite.
func (b *Buffer) firstUnset(from, fit uint32) uint32 {
	if hw.WideLoads {
		const all = 1 | 1<<32 // two set flags, as one word
		for ; from&7 != 0 && from < fit; from++ {
			if atomic.LoadUint32(&b.commit[from]) == 0 {
				return from
			}
		}
		for ; from+8 <= fit; from += 8 {
			w := (*[4]uint64)(unsafe.Pointer(&b.commit[from]))
			if atomic.LoadUint64(&w[0])&atomic.LoadUint64(&w[1])&atomic.LoadUint64(&w[2])&atomic.LoadUint64(&w[3]) != all {
				break
			}
		}
	}
	for ; from < fit; from++ {
		if atomic.LoadUint32(&b.commit[from]) == 0 {
			break
		}
	}
	return from
}

// newFlags allocates n completion flags, 8-byte aligned: firstUnset reads them as 8-byte
// words.
func newFlags(n uint32) []uint32 {
	if n == 0 {
		return nil
	}
	words := make([]uint64, (n+1)/2)
	return unsafe.Slice((*uint32)(unsafe.Pointer(&words[0])), n)
}

// ordinal returns the index of the commit flag of the reservation whose add returned w;
// for the reservation that crossed the end, it is how many fitted before it.
func ordinal(w uint64) uint32 { return uint32(w>>32) - 1 }

// publish marks the record that reservation word w numbers complete: its commit flag,
// stored after every byte the writer put in the record (hw.StoreRelease).
func (b *Buffer) publish(w uint64) { hw.StoreRelease(&b.commit[ordinal(w)], 1) }

// CopyPublish copies data into body and then publishes the record that reservation
// word w numbers, in one call (hw.CopyRelease): a writer's last step (/*B*/).
func (b *Buffer) CopyPublish(w uint64, body, data []byte) {
	hw.CopyRelease(body, data, &b.commit[ordinal(w)])
}

// CopyPublishLong is CopyPublish for data longer than hw.CopyReleaseMax: the copy
// (runtime.memmove, whose aligned wide moves outrun CopyRelease's 16-byte ones there),
// then publish. Like CopyPublish it leaves the padding after data to Record, which
// zeroed the record's last 8 bytes.
func (b *Buffer) CopyPublishLong(w uint64, body, data []byte) {
	copy(body, data)
	b.publish(w)
}

// fitted returns, for reservation word w, where the data ends and how many reservations
// fit below that: all of them while CurrentOffset is within size, else those before the
// one that crossed the end, as its writer stored in saved (ok is false until it has),
// and whether that writer settled them.
func (b *Buffer) fitted(w uint64, size uint32) (end, fit uint32, settled, ok bool) {
	if off := uint32(w) &^ closedOff; off <= size {
		return off, uint32(w >> 32), false, true
	}
	s := b.saved.Load()
	return uint32(s &^ settledBit), uint32(s >> 32), s&settledBit != 0, s != 0
}

// settle is the check the writer whose reservation crossed the end makes before it
// stores saved: if the fit records before its own are all complete, it clears their flags
// and returns settledBit, so the logger need not read them. The flags were written
// on this writer's processor, most often by this goroutine, and are in its cache; read and
// cleared by the logger goroutine on another processor, each line of them would have to
// come back before the buffer's next use. A record still in flight leaves it all to
// tryClose. It runs before saved is stored, so tryClose, which needs saved, never clears
// or completes the buffer under it.
func (b *Buffer) settle(fit uint32) uint64 {
	if b.firstUnset(0, fit) < fit {
		return 0
	}
	clear(b.commit[:fit])
	return settledBit
}

// BufferView is a snapshot of one buffer for views and invariant checks.
type BufferView struct {
	ID             int             `json:"id"`
	State          abi.BufferState `json:"state"`
	Stream         int             `json:"stream"`
	CurrentOffset  uint32          `json:"currentOffset"`
	ReferenceCount uint32          `json:"referenceCount"`
	SavedOffset    uint32          `json:"savedOffset"`
	Closed         bool            `json:"closed"`
}

// filled returns where the records of an unsealed buffer end, from its view v: a closed
// buffer's end once tryClose has found it, else the SavedOffset the writer whose
// reservation crossed the end stored, else CurrentOffset within the buffer. The bytes
// past it are a previous fill's, or another session's (bufmem.go).
func (b *Buffer) filled(v BufferView) uint32 {
	if v.Closed {
		if end := b.end.Load(); end != 0 { // 0: closed, but not yet complete (tryClose)
			return end
		}
	}
	if v.SavedOffset != 0 {
		return v.SavedOffset
	}
	return min(v.CurrentOffset, uint32(len(b.data)))
}

// View returns a snapshot of the buffer's live header fields. ReferenceCount is the
// number of reservations that fit and whose records are not yet complete, with the
// writer whose reservation crossed the end counted until it stores SavedOffset: what
// Windows' ReferenceCount would read, taken from the completion flags.
func (b *Buffer) View() BufferView {
	b.closeMu.Lock()
	defer b.closeMu.Unlock()
	w := b.word.Load()
	s := b.saved.Load()
	v := BufferView{
		ID: b.id, State: abi.BufferState(b.state.Load()), Stream: int(b.stream.Load()),
		CurrentOffset: uint32(w) &^ closedOff, SavedOffset: uint32(s &^ settledBit), Closed: uint32(w)&closedOff != 0,
	}
	if b.done {
		return v
	}
	if b.closing {
		w = b.closeWord
	}
	_, fit, settled, ok := b.fitted(w, uint32(len(b.data)))
	if settled {
		return v
	}
	if !ok {
		fit = min(uint32(w>>32), uint32(len(b.commit)))
	}
	for i := b.checked; i < fit; i++ {
		if atomic.LoadUint32(&b.commit[i]) == 0 {
			v.ReferenceCount++
		}
	}
	return v
}
