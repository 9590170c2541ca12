package session

import (
	"encoding/binary"
	"errors"
	"sync/atomic"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/internal/hw"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/winerr"
)

// Event is one record to be written into buffers: the EVENT_HEADER fields, the encoded
// extended data items and the user data blocks. Size is the record's unaligned size. The
// same Event is written to every session a provider routes it to; each session encodes
// the header straight into its reserved space and stamps it on its own clock (sessions
// whose clock is the time-stamp counter share the kernel's reading, Event.TSC).
type Event struct {
	Descriptor *abi.EventDescriptor
	Provider   *[16]byte // provider GUID in Windows byte order
	Data       [][]byte
	Size       uint32 // header, extended items and data, unaligned
	ThreadID   uint32
	ProcessID  uint32
	Extra      *EventExtra // nil for a plain event: no activity ids
	// TSC, if not 0, is a reading of the time-stamp counter the kernel took together with
	// the writer's processor number, for the sessions whose clock reads that counter; see
	// Logger.stamp.
	TSC int64
}

// EventExtra holds the parts of an event that plain EventWrite calls do not have, kept
// behind a pointer so the common Event stays small.
type EventExtra struct {
	Activity *guid.GUID // nil for GUID_NULL
	Related  *guid.GUID // if not nil, written as a RELATED_ACTIVITYID extended item
	// ProviderMeta and EventMeta are a TraceLogging event's metadata (the blocks of
	// EVENT_DATA_DESCRIPTOR_TYPE_PROVIDER_METADATA and _EVENT_METADATA), written as a
	// PROV_TRAITS and an EVENT_SCHEMA_TL extended item when not empty.
	ProviderMeta, EventMeta []byte

	// Props are the EVENT_ENABLE_PROPERTY_* bits of the enablement through which the
	// event reaches the session being written: the kernel sets them before each Write,
	// for the sessions of one event may differ. Those in PropItems each add an extended
	// item, whose data are the fields below, which the kernel fills once per event.
	Props uint32
	// SID is the writer's security identifier, binary (EVENT_HEADER_EXT_TYPE_SID).
	SID []byte
	// TSID is the writer's terminal session (EVENT_HEADER_EXT_TYPE_TS_ID).
	TSID uint32
	// Stack is an EVENT_EXTENDED_ITEM_STACK_TRACE64: MatchId, then the return addresses
	// (EVENT_HEADER_EXT_TYPE_STACK_TRACE64).
	Stack []byte
	// EventKey is the event's key, the same in every session
	// (EVENT_HEADER_EXT_TYPE_EVENT_KEY); ProcessStartKey the writing process's
	// (EVENT_HEADER_EXT_TYPE_PROCESS_START_KEY).
	EventKey, ProcessStartKey uint64
}

// PropItems are the EVENT_ENABLE_PROPERTY_* bits that add an extended item to each event
// the enablement passes: SID, TS_ID, STACK_TRACE, PROCESS_START_KEY and EVENT_KEY.
const PropItems = guidtable.PropertySID | guidtable.PropertyTSID | guidtable.PropertyStackTrace |
	guidtable.PropertyProcessStartKey | guidtable.PropertyEventKey

// propItemsSize is the in-buffer size of the extended items x's Props add, as putItems
// writes them.
func (x *EventExtra) propItemsSize() uint32 {
	have, n := propItemBits(x.Props), 0
	if have&hasSID != 0 {
		n += abi.ExtItemSize(len(x.SID))
	}
	if have&hasTSID != 0 {
		n += abi.ExtItemSize(4)
	}
	if have&hasStack != 0 {
		n += abi.ExtItemSize(len(x.Stack))
	}
	if have&hasKey != 0 {
		n += abi.ExtItemSize(8)
	}
	if have&hasStart != 0 {
		n += abi.ExtItemSize(8)
	}
	return uint32(n)
}

// RelatedItemSize is the in-buffer size of the RELATED_ACTIVITYID extended item.
const RelatedItemSize = abi.ExtItemHeaderSize + 16

// ErrStopped is returned by Write when the session no longer collects events. It is not
// counted anywhere: the event was never the session's, as in WmipReserveTraceBuffer.
var ErrStopped = errors.New("session: logger is not collecting")

// Write copies ev into the current buffer of processor stream proc.
//
// It is the hot path: one atomic load of the stream's buffer, one atomic add that reserves
// the aligned size and numbers the reservation (/*A*/), the EVENT_HEADER with the
// session's timestamp, the copy of the user data, and a plain store that marks the record
// complete (/*B*/). It takes no lock, pays one locked instruction and allocates nothing.
// A record that does not fit sends the writer to ReserveSlow, full and switchBuffer, the
// slow path, out of line. The header is PutHeader's, in line, as word stores: a call to
// an encoder and byte and 2-byte stores each showed in BenchmarkWrite.
// TestWriteHeaderMatchesEncode holds these bytes to abi.EventHeader.Encode, the readable
// encoder. Reserve, ReserveSlow, Record, PutHeader and CopyPublish (CopyPublishLong)
// are the pieces of this path; the kernel's EventWrite composes them in its own frame
// for plain events (Plain).
//
// Extended data items (putItems) are written out of line: a related activity id, the
// writing processor's counters when the logger's PMC configuration selects the event's
// id, and a TraceLogging event's metadata. The checks cost one atomic load while no
// counters are configured and one nil test for an event without Extra.
//
// Errors: ERROR_MORE_DATA when the record cannot fit in any buffer of this session, or
// with its counters exceeds ETW's 64 KB, and ERROR_NOT_ENOUGH_MEMORY when no free buffer
// is left (both counted in EventsLost), and ErrStopped (not counted) once the session
// stops.
func (l *Logger) Write(proc int, ev *Event) error {
	size := ev.Size // ev.Size counts the metadata items but not the counters, nor Props' items
	x := ev.Extra
	if x != nil && x.Props&PropItems != 0 {
		size += x.propItemsSize()
	}
	p := l.pmcData.Load()
	if p != nil {
		if !p.Selects(ev.Descriptor.ID) {
			p = nil
		} else {
			size += uint32(abi.ExtItemSize(8 * p.CountersCount()))
		}
	}
	need := abi.Align(size)
	if need > l.maxRecord || size > abi.MaxEventSize || ev.Size < abi.EventHeaderSize {
		return l.refuseRecord()
	}
	/*A*/ b, w, ok := l.Reserve(proc, need)
	if !ok {
		var err error
		if b, w, err = l.ReserveSlow(proc, b, w, need); err != nil {
			return err
		}
	}
	rec := b.Record(w, need)
	h := (*[abi.EventHeaderSize]byte)(rec)
	PutHeader(h, size, ev.ThreadID, ev.ProcessID, l.stamp(ev), ev.Provider, ev.Descriptor)
	if x != nil && x.Activity != nil {
		x.Activity.Put(h[abi.OffEventActivityID:])
	}

	body := rec[abi.EventHeaderSize:]
	if x != nil || p != nil {
		body = l.putItems(rec, proc, x, p)
	}
	if len(ev.Data) == 1 && len(ev.Data[0]) <= hw.CopyReleaseMax { // the common case: one call
		/*B*/ b.CopyPublish(w, body, ev.Data[0])
	} else if len(ev.Data) == 1 {
		/*B*/ b.CopyPublishLong(w, body, ev.Data[0])
	} else {
		/*B*/ complete(b, w, body, ev.Data)
	}
	// The logger may now seal the buffer; our bytes are complete.
	return nil
}

// Plain reports whether a plain event (one data block, no extended items) whose record
// takes need bytes, aligned, may be written by its caller with Write's own pieces, in
// line: Reserve (then ReserveSlow if it did not fit), Record, PutHeader with a
// time-stamp counter reading, and CopyPublish, or CopyPublishLong for a block longer
// than hw.CopyReleaseMax. That is so while the session stamps events with the counter,
// has no PMC configuration, and a buffer can hold the record; otherwise Write takes the
// event. The kernel's EventWrite path does this to spare a frame an event
// (bench/RESULTS.md).
func (l *Logger) Plain(need uint32) bool {
	return l.tsc && need <= l.maxRecord && l.pmcData.Load() == nil
}

// Reserve is Write's reservation on processor stream proc's current buffer: one atomic
// add of need bytes and one record (/*A*/). It returns the buffer and the word the add
// returned, and whether the record fit; if not, the caller goes on with ReserveSlow.
// Other writers now see CurrentOffset past the record, and the logger will not seal the
// buffer until its flag is set (CopyPublish).
func (l *Logger) Reserve(proc int, need uint32) (b *Buffer, w uint64, ok bool) {
	s := &l.streams[l.streamOf(proc)]
	if b = s.cur.Load(); b == nil {
		return nil, 0, false
	}
	w = b.word.Add(uint64(need) | oneRecord)
	return b, w, uint32(w) <= uint32(len(b.data)) // as uint32s: closedOff is the sign bit of a 32-bit int
}

// ReserveSlow is the rest of a reservation that Reserve could not make in buffer b (nil
// if the stream had none), whose word it left at w: it switches buffers (full) and
// reserves again until the record fits, and returns the buffer and the word its add
// returned (the record's end and ordinal), whose commit flag the writer sets when done.
// Out of line: in line, the compiler saved every register before the retry loop for the
// call in it, on every event. An error means the event is lost (counted) or the session
// stopped (not counted).
func (l *Logger) ReserveSlow(proc int, b *Buffer, w uint64, need uint32) (*Buffer, uint64, error) {
	idx := l.streamOf(proc)
	s := &l.streams[idx]
	for {
		if err := l.full(s, int(idx), b, w, need); err != nil {
			return nil, 0, err
		}
		if b = s.cur.Load(); b != nil {
			w = b.word.Add(uint64(need) | oneRecord)
			if uint32(w) <= uint32(len(b.data)) {
				return b, w, nil
			}
		}
	}
}

// Record returns the need bytes of the record that reservation word w numbers in b,
// with the last 8 zeroed: the alignment padding after the data, which the header and
// the data then write over where they reach.
func (b *Buffer) Record(w uint64, need uint32) []byte {
	end := uint32(w)
	rec := b.data[int(end)-int(need) : int(end)]
	binary.LittleEndian.PutUint64(rec[len(rec)-8:], 0)
	return rec
}

// putItems writes the extended data items of an event with extras x (nil for none) into
// record rec, after its header: the related activity id; the items x.Props asks for
// (SID, TS_ID, STACK_TRACE64, EVENT_KEY, PROCESS_START_KEY); the counters of processor
// proc, read now, when the logger's PMC configuration p selects the event
// (EVENT_HEADER_EXT_TYPE_PMC_COUNTERS; p is nil otherwise); a TraceLogging event's
// metadata (PROV_TRAITS, then EVENT_SCHEMA_TL, the order of the real files in the
// parsers' test data). It sets EVENT_HEADER_FLAG_EXTENDED_INFO when it writes any item,
// and returns the bytes after the items.
//
// [UNCERTAIN] Where RELATED_ACTIVITYID, the enable properties' items and PMC_COUNTERS
// stand relative to each other and to the TraceLogging items: no real file with several
// of them was found; they are written first, in type order.
func (l *Logger) putItems(rec []byte, proc int, x *EventExtra, p *pmc.Support) []byte {
	var related *guid.GUID
	var traits, schema []byte
	var props uint32
	if x != nil {
		related, traits, schema, props = x.Related, x.ProviderMeta, x.EventMeta, x.Props&PropItems
	}
	var have uint // the items to write (hasRelated, ...)
	if related != nil {
		have |= hasRelated
	}
	if props != 0 {
		have |= propItemBits(props)
	}
	if p != nil {
		have |= hasPMC
	}
	if len(traits) != 0 {
		have |= hasTraits
	}
	if len(schema) != 0 {
		have |= hasSchema
	}
	body := rec[abi.EventHeaderSize:]
	if have == 0 {
		return body // an activity id alone lives in the header
	}
	rec[abi.OffEventFlags] |= abi.EventFlagExtendedInfo
	if have&hasRelated != 0 {
		body = putRelatedItem(body, related, have >= 2*hasRelated)
	}
	if have&hasSID != 0 {
		body = body[abi.PutExtItem(body, abi.ExtTypeSID, have >= 2*hasSID, x.SID):]
	}
	if have&hasTSID != 0 {
		var v [4]byte
		binary.LittleEndian.PutUint32(v[:], x.TSID)
		body = body[abi.PutExtItem(body, abi.ExtTypeTSID, have >= 2*hasTSID, v[:]):]
	}
	if have&hasStack != 0 {
		body = body[abi.PutExtItem(body, abi.ExtTypeStackTrace64, have >= 2*hasStack, x.Stack):]
	}
	if have&hasPMC != 0 {
		var ctr [pmc.MaxPlatformCounters]uint64
		var data [8 * pmc.MaxPlatformCounters]byte
		n := p.Read(proc, ctr[:])
		for i := 0; i < n; i++ {
			binary.LittleEndian.PutUint64(data[8*i:], ctr[i])
		}
		body = body[abi.PutExtItem(body, abi.ExtTypePMCCounters, have >= 2*hasPMC, data[:8*n]):]
	}
	if have&hasKey != 0 {
		var v [8]byte
		binary.LittleEndian.PutUint64(v[:], x.EventKey)
		body = body[abi.PutExtItem(body, abi.ExtTypeEventKey, have >= 2*hasKey, v[:]):]
	}
	if have&hasStart != 0 {
		var v [8]byte
		binary.LittleEndian.PutUint64(v[:], x.ProcessStartKey)
		body = body[abi.PutExtItem(body, abi.ExtTypeProcessStartKey, have >= 2*hasStart, v[:]):]
	}
	if have&hasTraits != 0 {
		body = body[abi.PutExtItem(body, abi.ExtTypeProvTraits, have >= 2*hasTraits, traits):]
	}
	if have&hasSchema != 0 {
		body = body[abi.PutExtItem(body, abi.ExtTypeEventSchemaTL, false, schema):]
	}
	return body
}

// The extended items putItems writes, a bit each, in the order it writes them, so that
// an item is followed by another (its linkage bit) when a higher bit is set.
const (
	hasRelated = 1 << iota
	hasSID
	hasTSID
	hasStack
	hasPMC
	hasKey
	hasStart
	hasTraits
	hasSchema
)

// propItems pairs each EVENT_ENABLE_PROPERTY_* bit that adds an extended item with
// putItems' bit for that item: the one table of which property writes which item.
var propItems = [...]struct {
	prop uint32
	item uint
}{
	{guidtable.PropertySID, hasSID}, {guidtable.PropertyTSID, hasTSID}, {guidtable.PropertyStackTrace, hasStack},
	{guidtable.PropertyEventKey, hasKey}, {guidtable.PropertyProcessStartKey, hasStart},
}

// propItemBits maps the EVENT_ENABLE_PROPERTY_* bits props onto putItems' item bits.
func propItemBits(props uint32) uint {
	var have uint
	for _, p := range propItems {
		if props&p.prop != 0 {
			have |= p.item
		}
	}
	return have
}

// putRelatedItem writes the RELATED_ACTIVITYID extended item carrying related at the
// start of body, with the linkage bit when another item follows, and returns the bytes
// after it. The item's head goes in as one 8-byte word in abi.PutExtItem's layout (size,
// type, linkage, data size), which TestPutRelatedItemMatchesPutExtItem holds it to: the
// general encoder's stores showed in BenchmarkWrite.
func putRelatedItem(body []byte, related *guid.GUID, more bool) []byte {
	head := uint64(RelatedItemSize) | abi.ExtTypeRelatedActivityID<<16 | 16<<48
	if more {
		head |= 1 << 32
	}
	binary.LittleEndian.PutUint64(body, head)
	related.Put(body[abi.ExtItemHeaderSize:])
	return body[RelatedItemSize:]
}

// full is the slow path of Write: b (nil if the stream had none) could not take the
// record; w is the word the writer's add returned. If this writer's reservation moved
// CurrentOffset from inside the buffer past its end, it alone saw that, and records where
// the data really ends (SavedOffset) and how many reservations fit before its own, and
// settles their flags if it can. A reservation that did not fit has no commit flag to
// set. It switches buffers; an error means the event is lost (counted) or the session
// stopped (not counted).
func (l *Logger) full(s *stream, idx int, b *Buffer, w uint64, need uint32) error {
	if b != nil {
		if off := uint32(w) - need; off <= l.bufSize {
			fit := ordinal(w)
			b.saved.Store(b.settle(fit) | uint64(off) | uint64(fit)<<32)
		}
	}
	l.slow.Add(1)
	defer l.slow.Add(-1)
	err := l.switchBuffer(s, idx, b)
	if err != nil && err != ErrStopped && err != ErrCancelled {
		l.eventsLost.Add(1)
	}
	return err
}

// streamOf maps a processor number onto a stream index: the processor's own, wrapping
// out-of-range numbers. A session with NO_PER_PROCESSOR_BUFFERING has one stream, which
// every processor wraps onto. A negative number wraps as the large unsigned number it
// converts to.
func (l *Logger) streamOf(proc int) uint {
	p, n := uint(proc), uint(len(l.streams))
	if p >= n {
		p %= n
	}
	return p
}

// Lose counts one event in EventsLost that the caller dropped before reserving: too large
// for ETW, or not published because another session failed (the write-path rule without
// EVENT_TRACE_INDEPENDENT_SESSION_MODE). It reports false, counting nothing, once the
// session has stopped collecting: the event was never the session's (as ErrStopped).
//
// A loss is counted inside the slow-path guard, so Stop, which waits for the guard to
// empty after collection stops, returns final counters no writer changes afterwards.
func (l *Logger) Lose() bool { return l.countRefused(&l.eventsLost) }

// Deny counts an event refused for lack of permission (SECURE_MODE) in EventsDenied, by
// the same rule as Lose: nothing once the session has stopped collecting, and inside the
// slow-path guard so that Stop's counters are final.
func (l *Logger) Deny() bool { return l.countRefused(&l.eventsDenied) }

// countRefused adds one to c for an event the caller did not reserve space for, unless
// collection is off; see Lose.
func (l *Logger) countRefused(c *atomic.Uint64) bool {
	l.slow.Add(1)
	defer l.slow.Add(-1)
	if !l.collecting.Load() {
		return false
	}
	c.Add(1)
	return true
}

// reserveRecord takes the space of a record of size bytes (unaligned) on processor
// proc's stream, as Write does (Reserve, ReserveSlow, Record), and returns the buffer,
// the word the reservation's add returned (which complete needs to mark the record
// done) and the record's bytes. A record that is malformed (!wellFormed), over ETW's
// 64 KB or larger than the session's buffers take is refused and counted lost
// (refuseRecord), as Write refuses it.
func (l *Logger) reserveRecord(proc int, size uint32, wellFormed bool) (*Buffer, uint64, []byte, error) {
	need := abi.Align(size)
	if need > l.maxRecord || size > abi.MaxEventSize || !wellFormed {
		return nil, 0, nil, l.refuseRecord()
	}
	b, w, ok := l.Reserve(proc, need)
	if !ok {
		var err error
		if b, w, err = l.ReserveSlow(proc, b, w, need); err != nil {
			return nil, 0, nil, err
		}
	}
	return b, w, b.Record(w, need), nil
}

// stamp returns ev's timestamp on the session clock. A clock that reads the time-stamp
// counter takes the reading the kernel made with the processor number (Event.TSC), so
// the sessions an event goes to share one RDTSC; without one it reads the counter itself.
func (l *Logger) stamp(ev *Event) int64 {
	if l.tsc && ev.TSC != 0 {
		return ev.TSC
	}
	return l.now()
}

// now reads the session clock.
func (l *Logger) now() int64 {
	if l.tsc {
		return hw.TSC()
	}
	return l.clock.Now()
}

// refuseRecord handles a record that cannot fit any buffer of the session: counted lost
// (ERROR_MORE_DATA) unless the session stopped.
func (l *Logger) refuseRecord() error {
	if !l.Lose() {
		return ErrStopped
	}
	return winerr.ErrMoreData
}

// complete copies the data blocks into body, zeroes the alignment padding after them,
// and sets the commit flag of the record that reservation word w numbers in b: the
// record is done.
func complete(b *Buffer, w uint64, body []byte, data [][]byte) {
	p := 0
	for _, d := range data {
		p += copy(body[p:], d)
	}
	clear(body[p:])
	b.publish(w)
}
