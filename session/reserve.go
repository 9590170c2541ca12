package session

import (
	"encoding/binary"
	"errors"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/winerr"
)

// Event is one record ready to be copied into buffers: the EVENT_HEADER bytes with
// everything but the timestamp filled in, the encoded extended data items and the user
// data blocks. Size is the record's unaligned size. The same Event is written to every
// session a provider routes it to; each session stamps its own clock.
type Event struct {
	Header [abi.EventHeaderSize]byte
	Ext    []byte
	Data   [][]byte
	Size   uint32
}

// ErrStopped is returned by Write when the session no longer collects events. It is not
// counted anywhere: the event was never the session's, as in WmipReserveTraceBuffer.
var ErrStopped = errors.New("session: logger is not collecting")

// Write copies ev into the current buffer of processor stream proc.
//
// It is the hot path: one atomic load of the stream's buffer, one atomic add that reserves
// the aligned size and takes a reference (/*A*/), the copy, one atomic add that drops the
// reference (/*B*/). It takes no lock and allocates nothing. A record that does not fit
// sends the writer to switchBuffer, the slow path.
//
// Errors: ERROR_MORE_DATA when the record cannot fit in any buffer of this session,
// ERROR_NOT_ENOUGH_MEMORY when no free buffer is left (both counted in EventsLost), and
// ErrStopped (not counted) once the session stops.
func (l *Logger) Write(proc int, ev *Event) error {
	need := (ev.Size + abi.TraceAlignment - 1) &^ (abi.TraceAlignment - 1)
	if need > l.maxRecord || ev.Size < abi.EventHeaderSize {
		l.eventsLost.Add(1)
		return winerr.ErrMoreData
	}
	idx := l.streamOf(proc)
	s := &l.streams[idx]
	for {
		b := s.cur.Load()
		if b != nil {
			/*A*/ end := uint32(b.word.Add(uint64(need) | refOne))
			// Other writers now see CurrentOffset past our record, and the logger will not
			// close the buffer until our reference is gone.
			if end <= l.bufSize {
				b.fill(end-need, ev, l.clock.Now())
				/*B*/ b.word.Add(refRelease)
				// The logger may now close the buffer; our bytes are complete.
				return nil
			}
			if off := end - need; off <= l.bufSize {
				// We moved CurrentOffset from inside the buffer to past its end: we are
				// the only writer to see this, so we record where the data really ends.
				b.saved.Store(off)
			}
			b.word.Add(refRelease)
		}
		if err := l.switchBuffer(s, idx, b); err != nil {
			if err != ErrStopped {
				l.eventsLost.Add(1)
			}
			return err
		}
	}
}

// streamOf maps a processor number onto a stream index: 0 for every processor with
// NO_PER_PROCESSOR_BUFFERING, else the processor's own, wrapping out-of-range numbers.
func (l *Logger) streamOf(proc int) int {
	p := uint(proc)
	if l.shared {
		return 0
	}
	if p >= uint(len(l.streams)) {
		p %= uint(len(l.streams))
	}
	return int(p)
}

// fill copies ev into the buffer at off and stamps the session's timestamp. The bytes
// between the record's size and its aligned end are zeroed.
func (b *Buffer) fill(off uint32, ev *Event, ts int64) {
	need := (ev.Size + abi.TraceAlignment - 1) &^ (abi.TraceAlignment - 1)
	dst := b.data[off : off+need]
	copy(dst, ev.Header[:])
	binary.LittleEndian.PutUint64(dst[abi.OffEventTimeStamp:], uint64(ts))
	p := abi.EventHeaderSize + copy(dst[abi.EventHeaderSize:], ev.Ext)
	for _, d := range ev.Data {
		p += copy(dst[p:], d)
	}
	clear(dst[p:])
}
