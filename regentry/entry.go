package regentry

import (
	"sync"
	"sync/atomic"

	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/winver"
)

// ControlCode is EVENT_CONTROL_CODE, what an enable callback is told.
type ControlCode uint32

// EVENT_CONTROL_CODE_* values.
const (
	ControlDisable      ControlCode = 0 // EVENT_CONTROL_CODE_DISABLE_PROVIDER
	ControlEnable       ControlCode = 1 // EVENT_CONTROL_CODE_ENABLE_PROVIDER
	ControlCaptureState ControlCode = 2 // EVENT_CONTROL_CODE_CAPTURE_STATE
)

func (c ControlCode) String() string {
	switch c {
	case ControlDisable:
		return "DISABLE_PROVIDER"
	case ControlEnable:
		return "ENABLE_PROVIDER"
	case ControlCaptureState:
		return "CAPTURE_STATE"
	}
	return "ControlCode(?)"
}

// EnableCallback is PENABLECALLBACK: called when a session enables, disables or asks for
// the state of the provider. Level and keywords are the aggregate over all sessions.
// The emulator does not model filter data, so FilterData is always nil.
type EnableCallback func(sourceID guid.GUID, code ControlCode, level uint8, matchAny, matchAll uint64, filterData []byte, context any)

// Bit positions of the masks word.
const (
	shiftEnable    = 0
	shiftGroup     = 8
	shiftHost      = 16
	shiftHostGroup = 24
	closedBit      = uint64(1) << 32
	enableMaskBits = 0xFF
)

// Options describe a registration being created.
type Options struct {
	Flags           Flags          // registration kind: FlagUser|FlagModern for EventRegister
	Callback        EnableCallback // may be nil
	CallbackContext any
	ProcessID       uint32  // the owning process (EPROCESS *Process) of user registrations
	Caller          uintptr // kernel registrations: the caller's address
	SessionID       uint32  // kernel registrations: the session id
	Index           uint16
	// Mask is the word the Entry keeps its masks in (see Entry.mask), for a holder that
	// keeps it where its writers read it without a pointer (emu.Registration); nil for
	// a word of the Entry's own.
	Mask *atomic.Uint64
}

// Entry is the emulator's model of ETW_REG_ENTRY (undocumented; fields per Chappell's
// symbol-derived notes). Not modelled: the object header and handle table, and the silo
// host entries (no server silos exist in the emulator, so HostEnableMask and
// HostGroupEnableMask stay zero).
type Entry struct {
	// mask points at the word holding EnableMask (bits 0-7), GroupEnableMask (8-15),
	// HostEnableMask (16-23), HostGroupEnableMask (24-31) and the closed bit (32): own, or
	// the holder's Options.Mask. The pointer is immutable after Init; the word is atomic,
	// written only by this package (SetEnableMask under the GUID table's bucket lock, and
	// Close), read by event writers.
	mask *atomic.Uint64
	own  atomic.Uint64 // the word, unless the holder keeps it

	version   winver.Version                  // immutable
	guidEntry *guidtable.Entry                // GuidEntry; immutable after Link
	group     atomic.Pointer[guidtable.Entry] // GroupEntry; written under the kernel's control lock, read by writers
	traits    atomic.Pointer[Traits]          // Traits; written under the control lock

	index     uint16         // Index; immutable
	flags     atomic.Uint32  // Flags as a version-independent set; written under the control lock
	callback  EnableCallback // immutable
	context   any            // CallbackContext; immutable
	processID uint32         // Process; immutable
	caller    uintptr        // Caller; immutable
	sessionID uint32         // SessionId; immutable

	replyMu    sync.Mutex // protects replySlots and replyQueue
	replySlots [ReplySlots]*Notification
	replyQueue *ReplyQueue
}

// New returns an unlinked registration for version v.
func New(v winver.Version, o Options) *Entry {
	e := &Entry{}
	e.Init(v, o)
	return e
}

// Init makes a zero Entry an unlinked registration for version v, in place, for a
// holder that embeds the Entry (emu.Registration). It must run before the Entry is used.
func (e *Entry) Init(v winver.Version, o Options) {
	e.mask = o.Mask
	if e.mask == nil {
		e.mask = &e.own
	}
	e.version, e.index, e.callback, e.context = v, o.Index, o.Callback, o.CallbackContext
	e.processID, e.caller, e.sessionID = o.ProcessID, o.Caller, o.SessionID
	e.flags.Store(uint32(o.Flags))
	if o.Flags&FlagReply != 0 {
		e.replyQueue = &ReplyQueue{}
	}
}

// Link records the GUID entry the registration was put on and marks it inserted.
func (e *Entry) Link(g *guidtable.Entry) {
	e.guidEntry = g
	e.setFlag(FlagInserted, true)
}

func (e *Entry) setFlag(f Flags, on bool) {
	for {
		old := e.flags.Load()
		nw := old &^ uint32(f)
		if on {
			nw |= uint32(f)
		}
		if e.flags.CompareAndSwap(old, nw) {
			return
		}
	}
}

// SetEnableMask implements guidtable.Registration: the GUID table calls it with the
// enabled-slot bits of a trace, notification or group entry.
func (e *Entry) SetEnableMask(t guidtable.Type, mask uint8) {
	shift := shiftEnable
	if t == guidtable.GroupGuid {
		shift = shiftGroup
	}
	for {
		old := e.mask.Load()
		if old&closedBit != 0 {
			return // a closed registration keeps zero masks
		}
		nw := old&^(enableMaskBits<<shift) | uint64(mask)<<shift
		if e.mask.CompareAndSwap(old, nw) {
			return
		}
	}
}

// Masks returns the raw masks word: zero exactly when the registration is open and no
// session enables it, which is what the write path tests first.
func (e *Entry) Masks() uint64 { return e.mask.Load() }

// Quiet reports whether e is an open registration that no session enables: the write
// path's first test. It is false for a nil or closed registration, whose writes must fail.
func (e *Entry) Quiet() bool { return e != nil && e.mask.Load() == 0 }

// EnableMask returns the 8-bit EnableMask: bit i set when slot i of the GUID entry is on.
func (e *Entry) EnableMask() uint8 { return uint8(e.mask.Load() >> shiftEnable) }

// GroupEnableMask returns the 8-bit GroupEnableMask (10.0+): bit i set when slot i of the
// group's GUID entry is on.
func (e *Entry) GroupEnableMask() uint8 { return uint8(e.mask.Load() >> shiftGroup) }

// HostEnableMask returns HostEnableMask (2004+); always zero, as no silos are emulated.
func (e *Entry) HostEnableMask() uint8 { return uint8(e.mask.Load() >> shiftHost) }

// HostGroupEnableMask returns HostGroupEnableMask (2004+); always zero, as no silos are
// emulated.
func (e *Entry) HostGroupEnableMask() uint8 { return uint8(e.mask.Load() >> shiftHostGroup) }

// RoutingMasks splits a masks word into the two masks the write path routes by.
func RoutingMasks(w uint64) (enable, group uint8) { return uint8(w), uint8(w >> shiftGroup) }

// HostMasks splits out a masks word's HostEnableMask and HostGroupEnableMask.
func HostMasks(w uint64) (host, hostGroup uint8) {
	return uint8(w >> shiftHost), uint8(w >> shiftHostGroup)
}

// IsClosedWord reports whether a masks word belongs to a closed registration.
func IsClosedWord(w uint64) bool { return w&closedBit != 0 }

// Close marks the registration closed (DbgClosed) and clears its masks, so writers stop
// routing through it and see the closed bit instead. The caller unlinks it from its GUID
// entries.
func (e *Entry) Close() {
	e.mask.Store(closedBit)
	e.setFlag(FlagClosed, true)
	e.setFlag(FlagInserted, false)
}

// Closed reports whether Close was called.
func (e *Entry) Closed() bool { return e.mask.Load()&closedBit != 0 }

// GuidEntry returns the provider's GUID entry.
func (e *Entry) GuidEntry() *guidtable.Entry { return e.guidEntry }

// GroupEntry returns the provider group's GUID entry, or nil (10.0+).
func (e *Entry) GroupEntry() *guidtable.Entry { return e.group.Load() }

// SetGroupEntry records the group entry the registration joined (or nil on leaving).
func (e *Entry) SetGroupEntry(g *guidtable.Entry) { e.group.Store(g) }

// Traits returns the provider traits, or nil.
func (e *Entry) Traits() *Traits { return e.traits.Load() }

// SetTraits replaces the traits and returns the previous ones, for the caller to release.
func (e *Entry) SetTraits(t *Traits) *Traits { return e.traits.Swap(t) }

// Flags returns the registration's flags.
func (e *Entry) Flags() Flags { return Flags(e.flags.Load()) }

// SetUseDescriptorType sets DbgUseDescriptorType (a separate BOOLEAN before 1709).
func (e *Entry) SetUseDescriptorType(on bool) { e.setFlag(FlagUseDescriptorType, on) }

// Index returns the registration's index.
func (e *Entry) Index() uint16 { return e.index }

// Version returns the Windows version the registration follows.
func (e *Entry) Version() winver.Version { return e.version }

// Callback returns the enable callback and its context.
func (e *Entry) Callback() (EnableCallback, any) { return e.callback, e.context }

// ProcessID returns the owning process id of a user registration.
func (e *Entry) ProcessID() uint32 { return e.processID }

// Caller returns the caller address of a kernel registration (6.2+), and its session id
// (6.1+); both are meaningful only with FlagKernel.
func (e *Entry) Caller() (caller uintptr, sessionID uint32) { return e.caller, e.sessionID }
