package emu

import (
	"fmt"
	"math/bits"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/internal/hw"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
)

// MaxDataDescriptors is MAX_EVENT_DATA_DESCRIPTORS, the most user-data blocks one event
// may have.
const MaxDataDescriptors = 128

// AnyProcessor asks the emulator to pick the processor the writing goroutine runs on.
const AnyProcessor = -1

// Tally counts, per logger id, what happened to the events one writer routed: delivered
// into a buffer, lost and counted in that session's EventsLost, or refused by a
// SECURE_MODE session and counted in its EventsDenied. A Tally belongs to one goroutine.
type Tally struct {
	Delivered [session.LoggerIDs]uint64
	Lost      [session.LoggerIDs]uint64
	Denied    [session.LoggerIDs]uint64
	// Cancelled counts a BLOCKING writer woken by the session's stop while it waited for
	// a buffer (ERROR_CANCELLED): the event was neither accepted nor lost, and the writer
	// was told.
	Cancelled [session.LoggerIDs]uint64
}

// WriteOptions are the optional parts of EventWriteEx.
type WriteOptions struct {
	// Processor is the emulated processor to write on, or AnyProcessor. A number past the
	// emulated processors wraps around.
	Processor int
	ThreadID  uint32
	// ActivityID is the event's activity id; nil means GUID_NULL (the emulator keeps no
	// per-thread activity id).
	ActivityID *guid.GUID
	// RelatedActivityID, if not nil, is added as an EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID
	// extended item.
	RelatedActivityID *guid.GUID
	// Tally, if not nil, receives the outcome per session.
	Tally *Tally

	// provMeta and evMeta are the TraceLogging metadata EventWriteDescriptors found in
	// typed data descriptors.
	provMeta, evMeta []byte
}

// EventWrite writes an event through registration r to every session that enables it at
// the event's level and keyword. With no such session it does nothing and returns nil.
// The data blocks are concatenated, unpadded, after the header.
//
// The disabled case is one load and one compare, and returns nil whichever kernel the
// handle is of. Errors: ERROR_INVALID_HANDLE for a nil or closed handle, or one of
// another kernel; ERROR_INVALID_PARAMETER for a nil descriptor or more than 128
// data blocks; ERROR_ARITHMETIC_OVERFLOW for an event over 64 KB; ERROR_MORE_DATA when it
// does not fit a session's buffer, or when the extended items a session's enablement asks
// for (EVENT_ENABLE_PROPERTY_SID and the others) take its record past 64 KB, which that
// session counts in EventsLost; ERROR_NOT_ENOUGH_MEMORY when a session has no free
// buffer. Without EVENT_TRACE_INDEPENDENT_SESSION_MODE, a failure in one session stops
// publication to the sessions after it, which count the event as lost. An
// EVENT_TRACE_SECURE_MODE session that does not permit the provider refuses the event
// and counts it in EventsDenied; the writer gets ERROR_ACCESS_DENIED if nothing else
// failed, and the other sessions are not affected.
func (k *Kernel) EventWrite(r *Registration, d *EventDescriptor, data ...[]byte) error {
	// Small enough to inline (.ci/run checks it with -gcflags=-m): the disabled case costs
	// the caller a nil check, a load and a compare.
	if r != nil && r.mask.Load() == 0 {
		return nil
	}
	return k.writePlain(r, d, data)
}

// writePlain is write for EventWrite's events, which carry no options, with the common
// case on a frame of its own: one data block, and a registration whose events go to one
// session, found in the route the registration cached (reroute) rather than through its
// GUID entry's enable slot on every event. Anything else goes to write, which answers
// every error. Where the session allows (Logger.Plain), the event is written here with
// Logger.Write's pieces, Reserve to CopyPublish (CopyPublishLong for a block longer than
// hw.CopyReleaseMax), so that one frame separates the caller from the buffer; otherwise
// Logger.Write writes it (writeEvent). Sent to Logger.Write, a 512-byte event took about
// 20 ns more (bench/RESULTS.md). write keeps its options, tally and loop state across
// the calls into the clock and the session, spilling and reloading about nine registers
// around each (BenchmarkWrite, bench/RESULTS.md). The event is filtered before the
// processor and the clock are read, so one that the session's level or keyword filters
// out costs no clock read.
func (k *Kernel) writePlain(h *Registration, d *EventDescriptor, data [][]byte) error {
	if h == nil || d == nil || len(data) != 1 {
		return k.write(h, d, nil, data)
	}
	rt := h.route.Load()
	if rt == nil || rt.routing != k.routing.Load() {
		return k.reroute(h, d, data)
	}
	size := abi.EventHeaderSize + len(data[0])
	if rt.l == nil || size > abi.MaxEventSize {
		return k.write(h, d, nil, data)
	}
	if !rt.filter.Passes(d.Level, d.Keyword) {
		return nil
	}
	l, need := rt.l, abi.Align(uint32(size))
	if !l.Plain(need) {
		return k.writeEvent(l, rt, d, data, size)
	}
	// Logger.Write's pieces, in this frame: a frame less an event (bench/RESULTS.md).
	proc, tsc := hw.CPUAndTSC()
	proc = k.emulated(proc)
	/*A*/ b, w, ok := l.Reserve(proc, need)
	if !ok {
		var err error
		if b, w, err = l.ReserveSlow(proc, b, w, need); err != nil {
			return writeError(err)
		}
	}
	rec := b.Record(w, need)
	session.PutHeader((*[abi.EventHeaderSize]byte)(rec), uint32(size), 0, rt.pid, tsc, rt.provider, d)
	if len(data[0]) <= hw.CopyReleaseMax {
		/*B*/ b.CopyPublish(w, rec[abi.EventHeaderSize:], data[0])
	} else {
		/*B*/ b.CopyPublishLong(w, rec[abi.EventHeaderSize:], data[0])
	}
	return nil
}

// writeEvent is writePlain's way for a plain event that session l writes itself
// (Logger.Write): its clock is not the time-stamp counter, its PMC configuration may
// select the event, or the record is too large for its buffers.
func (k *Kernel) writeEvent(l *session.Logger, rt *plainRoute, d *EventDescriptor, data [][]byte, size int) error {
	// The event is described before the clock is read: values stored into it need not be
	// spilled around the assembly call, which keeps no register.
	var ev session.Event
	ev.Descriptor, ev.Provider, ev.Data = d, rt.provider, data
	ev.Size, ev.ProcessID = uint32(size), rt.pid
	proc, tsc := hw.CPUAndTSC()
	proc, ev.TSC = k.emulated(proc), tsc
	return writeError(l.Write(proc, &ev))
}

// EventWriteTransfer is EventWrite with an activity id and a related activity id (either
// may be nil).
func (k *Kernel) EventWriteTransfer(r *Registration, d *EventDescriptor, activity, related *guid.GUID, data ...[]byte) error {
	if r.entry().Quiet() {
		return nil
	}
	o := WriteOptions{Processor: AnyProcessor, ActivityID: activity, RelatedActivityID: related}
	return k.write(r, d, &o, data)
}

// EventWriteEx is EventWrite with explicit options: the processor (for deterministic
// runs), thread and activity ids, and a Tally of per-session outcomes.
func (k *Kernel) EventWriteEx(r *Registration, d *EventDescriptor, o *WriteOptions, data ...[]byte) error {
	if r.entry().Quiet() {
		return nil
	}
	return k.write(r, d, o, data)
}

// DataDescriptor is EVENT_DATA_DESCRIPTOR: one block of an event's data and the Type
// byte of its Reserved field. It leaves out the pointer and size, which Data carries.
type DataDescriptor struct {
	Data []byte
	Type uint8
}

// EVENT_DATA_DESCRIPTOR_TYPE_* values (evntprov.h).
const (
	DescriptorUserData         = 0 // EVENT_DATA_DESCRIPTOR_TYPE_NONE: the event's payload
	DescriptorEventMetadata    = 1 // EVENT_DATA_DESCRIPTOR_TYPE_EVENT_METADATA: a TraceLogging event schema
	DescriptorProviderMetadata = 2 // EVENT_DATA_DESCRIPTOR_TYPE_PROVIDER_METADATA: TraceLogging provider traits
)

// EventWriteDescriptors is EventWriteEx with typed data descriptors, as TraceLogging
// writes (go-winio's etw package passes the provider metadata, the event metadata, then
// the user data). ETW honours the Type only for a registration that called
// EventSetInformation with EventProviderSetTraits or EventProviderUseDescriptorType;
// otherwise every block is user data. Honoured, the provider-metadata blocks become the
// event's EVENT_HEADER_EXT_TYPE_PROV_TRAITS item and the event-metadata blocks its
// EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL item (blocks of one type concatenated), and only
// user-data blocks are the payload. o may be nil.
//
// [UNCERTAIN] That the PROV_TRAITS item holds the descriptor's bytes rather than the
// traits the registration set: TraceLogging passes the same blob to both.
//
// Errors: those of EventWrite; ERROR_INVALID_PARAMETER for more than 128 descriptors or
// an honoured Type above 2 (TIMESTAMP_OVERRIDE and later types are not emulated).
func (k *Kernel) EventWriteDescriptors(r *Registration, d *EventDescriptor, o *WriteOptions, descs ...DataDescriptor) error {
	if r.entry().Quiet() {
		return nil
	}
	if r == nil {
		return errNilRegistration
	}
	if len(descs) > MaxDataDescriptors {
		return winerr.ErrInvalidParameter
	}
	opts := WriteOptions{Processor: AnyProcessor}
	if o != nil {
		opts = *o
	}
	honoured := r.e.Traits() != nil || r.e.Flags()&regentry.FlagUseDescriptorType != 0
	// The user-data blocks, on the stack for the usual few: a full array of 128 would be
	// cleared on every call (BenchmarkWriteEvent).
	var few [4][]byte
	blocks := few[:0]
	if len(descs) > len(few) {
		blocks = make([][]byte, 0, len(descs))
	}
	for _, dd := range descs {
		t := dd.Type
		if !honoured {
			t = DescriptorUserData
		}
		switch t {
		case DescriptorUserData:
			blocks = append(blocks, dd.Data)
		case DescriptorEventMetadata:
			opts.evMeta = appendBlock(opts.evMeta, dd.Data)
		case DescriptorProviderMetadata:
			opts.provMeta = appendBlock(opts.provMeta, dd.Data)
		default:
			return winerr.New(winerr.ErrInvalidParameter, "EVENT_DATA_DESCRIPTOR Type %d is not emulated", t)
		}
	}
	return k.write(r, d, &opts, blocks)
}

// appendBlock adds block to the metadata acc holds, copying only when there are two.
func appendBlock(acc, block []byte) []byte {
	if len(acc) == 0 {
		return block
	}
	return append(append([]byte(nil), acc...), block...)
}

// write is the enabled path, in three parts: check the handle and arguments and describe
// the record once; the one-session path, for an event enabled by one session with
// nothing to count per session; and the general path, each set bit of the registration's
// EnableMask, then the provider group's (writeGroup), every session through deliver.
// State lives in locals rather than a struct passed around, so it stays in registers
// (BenchmarkWrite).
func (k *Kernel) write(h *Registration, d *EventDescriptor, o *WriteOptions, data [][]byte) error {
	if h == nil {
		return errNilRegistration
	}
	if h.k != k {
		if h.k == nil {
			return errZeroRegistration
		}
		return errForeign()
	}
	r := &h.e
	w := h.mask.Load()
	if w == 0 {
		return nil
	}
	if regentry.IsClosedWord(w) {
		return errClosedRegistration
	}
	if d == nil {
		return errNilDescriptor
	}
	if len(data) > MaxDataDescriptors {
		return errTooManyBlocks
	}
	size := abi.EventHeaderSize
	if len(data) == 1 { // the common case, without the loop
		size += len(data[0])
	} else {
		for _, b := range data {
			size += len(b)
		}
	}
	// Fields are set one by one: a composite literal is built in a temporary and copied,
	// and the copy's wide loads stall on the temporary's narrow stores.
	var ev session.Event
	var extra session.EventExtra
	var hold *stackItemBytes
	proc := AnyProcessor
	var tally *Tally
	if o != nil {
		proc, tally = o.Processor, o.Tally
		ev.ThreadID = o.ThreadID
		if o.ActivityID != nil || o.RelatedActivityID != nil || o.provMeta != nil || o.evMeta != nil {
			extra.Activity, extra.Related = o.ActivityID, o.RelatedActivityID
			extra.ProviderMeta, extra.EventMeta = o.provMeta, o.evMeta
			ev.Extra = &extra
			if o.RelatedActivityID != nil {
				size += session.RelatedItemSize
			}
			if len(o.provMeta) != 0 {
				size += abi.ExtItemSize(len(o.provMeta))
			}
			if len(o.evMeta) != 0 {
				size += abi.ExtItemSize(len(o.evMeta))
			}
		}
	}
	if proc < 0 {
		// CurrentProcessor, and where sessions may stamp with the time-stamp counter a
		// reading of it from the same assembly call: the registers are spilled around one
		// call instead of two, and the sessions of an event share one RDTSC.
		if k.tsc {
			proc, ev.TSC = hw.CPUAndTSC()
		} else {
			proc = hw.CPU()
		}
		proc = k.emulated(proc)
	}
	ge := r.GuidEntry()
	ev.Descriptor, ev.Provider, ev.Data = d, ge.GUIDBytes(), data
	ev.Size, ev.ProcessID = uint32(size), r.ProcessID()
	tooBig := size > abi.MaxEventSize

	enable, group := regentry.RoutingMasks(w)
	if enable != 0 && enable&(enable-1) == 0 && group == 0 && tally == nil && !tooBig {
		// One session and nothing to count per session, the common case, on a path of its
		// own: the general loop keeps its state across the call into the session, saving
		// and restoring about ten registers per event.
		l, info := route(ge, bits.TrailingZeros8(enable), d.Level, d.Keyword)
		if l == nil {
			return nil
		}
		if !l.Secure() {
			if info.Special {
				if !k.ready(&ev, &extra, info, &hold) {
					return nil // its filters drop it
				}
				ev.Extra = &extra
				err := l.Write(proc, &ev)
				releaseStack(hold)
				return writeError(err)
			}
			return writeError(l.Write(proc, &ev))
		}
	}
	// seen holds the logger ids written, so that no session is written twice: through the
	// group's entry after the provider's, or through a second slot of the provider's own.
	// The slots are read as the loop reaches them, and a disable and an enable beside the
	// write can move a session from a slot already passed to one still ahead.
	var seen [(session.LoggerIDs + 63) / 64]uint64
	var errIdx uint8
	for mask := enable; mask != 0; mask &= mask - 1 {
		l, info := route(ge, bits.TrailingZeros8(mask), d.Level, d.Keyword)
		if l == nil || seen[info.LoggerID>>6]&(1<<(info.LoggerID&63)) != 0 {
			continue
		}
		if info.Special || extra.Props != 0 {
			if !k.ready(&ev, &extra, info, &hold) {
				continue // its filters drop it
			}
			ev.Extra = &extra
		}
		seen[info.LoggerID>>6] |= 1 << (info.LoggerID & 63)
		errIdx = deliver(l, info, proc, &ev, tooBig, errIdx, tally)
	}
	if group != 0 {
		ev.Extra = &extra // for the group's sessions' items, which writeGroup readies
		errIdx = k.writeGroup(r.GroupEntry(), group, proc, &ev, &extra, tooBig, errIdx, &seen, tally, &hold)
	}
	releaseStack(hold)
	if tooBig {
		return errTooBig
	}
	if errIdx == 0 {
		return nil
	}
	return writeErrors[errIdx&^denied]
}

// writeError is the error the writer gets for what the one session's Write returned
// (see outcome).
func writeError(err error) error {
	if err == nil {
		return nil
	}
	idx, _, _ := outcome(err)
	return writeErrors[idx]
}

// route returns the session that enable slot i of entry e sends an event of the given
// level and keyword to, and the slot's enablement, which holds its logger id and
// EVENT_ENABLE_PROPERTY_* bits: a nil session when the slot is off, filters the event
// out, or holds no session. The id comes from the logger table, so it is below
// session.LoggerIDs. Small enough to inline (.ci/run checks it): it runs once per slot.
func route(e *guidtable.Entry, i int, level uint8, keyword uint64) (*session.Logger, *guidtable.EnableInfo) {
	info := e.Slot(i)
	if info == nil || !info.Passes(level, keyword) {
		return nil, nil
	}
	l, _ := info.Target.(*session.Logger)
	return l, info
}

// denied marks an error index whose session refused the event for lack of permission:
// reported to the writer only if nothing else failed, and no failure for the sessions
// after it.
const denied = 0x80

// deliver writes ev into one session, l, which enablement info routed it to, and returns
// the error index of the first failure so far (0: none). Once an earlier session failed,
// a session without EVENT_TRACE_INDEPENDENT_SESSION_MODE is not published to and counts
// the event lost. A SECURE_MODE session that does not permit the provider counts the
// event denied.
func deliver(l *session.Logger, info *guidtable.EnableInfo, proc int, ev *session.Event, tooBig bool, errIdx uint8, tally *Tally) uint8 {
	id := info.LoggerID
	if l.Secure() && !l.Permits(guid.FromBytes(ev.Provider[:])) {
		if l.Deny() && tally != nil {
			tally.Denied[id]++
		}
		if errIdx == 0 {
			errIdx = denied | accessDenied
		}
		return errIdx
	}
	if tooBig || (errIdx != 0 && errIdx&denied == 0 && !l.Independent()) {
		if l.Lose() {
			tally.count(id, false)
		}
		return errIdx
	}
	idx, counted, ok := outcome(l.Write(proc, ev))
	if counted {
		tally.count(id, ok)
	} else if idx == cancelled && tally != nil {
		tally.Cancelled[id]++
	}
	if idx != 0 && (errIdx == 0 || errIdx&denied != 0) {
		errIdx = idx
	}
	return errIdx
}

// outcome sorts what a session's Write returned: the writer's error index (0: none), and
// whether the session counted the event (ok: accepted, else lost). A stale slot of a
// stopped session refuses with ErrStopped: not its event, nothing counted (invariant 2).
// A BLOCKING writer woken by stop gets ERROR_CANCELLED: not accepted, not lost.
func outcome(err error) (idx uint8, counted, ok bool) {
	switch err {
	case nil:
		return 0, true, true
	case session.ErrStopped:
		return 0, false, false
	case session.ErrCancelled:
		return cancelled, false, false
	}
	return errIndex(err), true, false
}

// writeGroup routes ev through the provider group's entry (GroupEnableMask), skipping
// sessions already written through the provider's own entry (seen).
func (k *Kernel) writeGroup(g *guidtable.Entry, mask uint8, proc int, ev *session.Event, extra *session.EventExtra, tooBig bool, errIdx uint8, seen *[(session.LoggerIDs + 63) / 64]uint64, tally *Tally, hold **stackItemBytes) uint8 {
	if g == nil {
		return errIdx
	}
	d := ev.Descriptor
	for ; mask != 0; mask &= mask - 1 {
		l, info := route(g, bits.TrailingZeros8(mask), d.Level, d.Keyword)
		if l == nil || seen[info.LoggerID>>6]&(1<<(info.LoggerID&63)) != 0 || (info.Special || extra.Props != 0) && !k.ready(ev, extra, info, hold) { // ev carries extra
			continue
		}
		seen[info.LoggerID>>6] |= 1 << (info.LoggerID & 63)
		errIdx = deliver(l, info, proc, ev, tooBig, errIdx, tally)
	}
	return errIdx
}

// ready readies the event ev for the session that enablement info routes it to, when
// info is Special or a session before it asked for extended items (extra.Props, which
// this session's must replace): it reports false when info's filters drop the event,
// and otherwise sets in extra the extended items that session asks for
// (EventExtra.Props; the first session that asks for any has their values made, once for
// all, by itemValues, and the first that asks for a stack has it taken, by stackItem).
// The caller points ev at extra: stored here, through a pointer, extra would move to
// the heap.
func (k *Kernel) ready(ev *session.Event, extra *session.EventExtra, info *guidtable.EnableInfo, hold **stackItemBytes) bool {
	if info.Filter != nil && !info.Filter.Admits(ev.ProcessID, k.exe, ev.Descriptor.ID) {
		return false
	}
	props := info.EnableProperty & session.PropItems
	if props != 0 && extra.SID == nil {
		k.itemValues(extra)
	}
	if props&guidtable.PropertyStackTrace != 0 && extra.Stack == nil {
		k.stackItem(extra, hold)
	}
	extra.Props = props
	return true
}

// writeErrors are the errors a session's Write can return, by index; write keeps an
// index, not an error, so that returning it does not make its locals escape.
var writeErrors = [...]error{nil, winerr.ErrMoreData, winerr.ErrNotEnoughMemory, winerr.ErrInvalidParameter, winerr.ErrAccessDenied,
	winerr.ErrLogFileFull, winerr.ErrCancelled}

// Indices into writeErrors; 0 is no error.
const (
	moreData         = 1 // ERROR_MORE_DATA
	notEnoughMemory  = 2 // ERROR_NOT_ENOUGH_MEMORY
	invalidParameter = 3 // ERROR_INVALID_PARAMETER
	accessDenied     = 4 // ERROR_ACCESS_DENIED
	logFileFull      = 5 // ERROR_LOG_FILE_FULL
	cancelled        = 6 // ERROR_CANCELLED
)

// errIndex is the index of an error a session's Write returned; one it does not know
// reads as ERROR_INVALID_PARAMETER.
func errIndex(err error) uint8 {
	switch err {
	case winerr.ErrMoreData:
		return moreData
	case winerr.ErrNotEnoughMemory:
		return notEnoughMemory
	case winerr.ErrLogFileFull:
		return logFileFull
	}
	return invalidParameter
}

func (t *Tally) count(id uint16, ok bool) {
	if t == nil {
		return
	}
	if ok {
		t.Delivered[id]++
	} else {
		t.Lost[id]++
	}
}

// The refusals of a write to a handle that is no registration: made once, so that a
// writer that races EventUnregister allocates nothing, and with the reason.
var (
	errNilRegistration    = winerr.Because(winerr.ErrInvalidHandle, "the registration handle is nil")
	errZeroRegistration   = winerr.Because(winerr.ErrInvalidHandle, "the registration is a zero Registration, not one EventRegister made")
	errClosedRegistration = winerr.Because(winerr.ErrInvalidHandle, "the registration is closed (EventUnregister ran)")
)

// The refusals of a write's arguments and of a record too large, made once for the same
// reason, each with what it refuses.
var (
	errNilDescriptor = winerr.Because(winerr.ErrInvalidParameter, "the EVENT_DESCRIPTOR is nil")
	errTooManyBlocks = winerr.Because(winerr.ErrInvalidParameter, fmt.Sprintf("more than %d data blocks (EVENT_DATA_DESCRIPTORs)", MaxDataDescriptors))
	errTooBig        = winerr.Because(winerr.ErrArithmeticOverflow, fmt.Sprintf("the record would pass %d bytes, the most a 16-bit header Size holds (header, extended items and data together): every session that takes the event counts it lost", abi.MaxEventSize))
)
