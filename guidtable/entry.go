package guidtable

import (
	"sync/atomic"

	"github.com/etwemu/etwemu/internal/fault"

	"github.com/etwemu/etwemu/guid"
)

// Entry is the emulator's model of ETW_GUID_ENTRY: one provider GUID of one type, its
// registrations (RegListHead), its eight enable slots (EnableInfo[8]) and their aggregate
// (ProviderEnableInfo). Not modelled: the security descriptor, LastEnable of legacy
// enables, filter data, silo links and the per-entry lock of 1511 and later (the bucket
// lock covers it).
type Entry struct {
	guid  guid.GUID // immutable
	raw   [16]byte  // guid in Windows byte order, for the write path; immutable
	typ   Type      // immutable
	table *Table    // immutable
	seq   uint64    // the table's count of entries made when this one was; immutable

	refs    atomic.Int64   // RefCount; written under the bucket lock, read anywhere
	regs    []Registration // RegListHead; protected by the bucket lock
	removed bool           // unlinked from its bucket; protected by the bucket lock

	// slots are EnableInfo[8]: nil when the slot is free. Written under the bucket lock,
	// read lock-free by event writers.
	slots [Slots]atomic.Pointer[EnableInfo]
	// provider is ProviderEnableInfo, the aggregate; same discipline as slots.
	provider atomic.Pointer[EnableInfo]
	// mask caches the enabled-slot bits; same discipline as slots.
	mask atomic.Uint32
	// pushed is the mask last given to the registrations; protected by the bucket lock.
	// It differs from mask only under fault.KeepMaskOnDisable.
	pushed uint8
}

// GUID returns the provider (or group) GUID.
func (e *Entry) GUID() guid.GUID { return e.guid }

// GUIDBytes returns the GUID in Windows byte order, as records carry it. Do not modify.
func (e *Entry) GUIDBytes() *[16]byte { return &e.raw }

// Type returns the GUID type, which is the list the entry lives on.
func (e *Entry) Type() Type { return e.typ }

// Table returns the table the entry belongs to.
func (e *Entry) Table() *Table { return e.table }

// RefCount returns the entry's reference count: registrations plus enabled slots.
func (e *Entry) RefCount() int64 { return e.refs.Load() }

// Slot returns the enablement in slot i, or nil when the slot is free. i is 0 to 7: any
// other index panics, as an array index does (the write path reads a slot per enabled
// bit, and a check returning nil would take its route past the inlining budget). The
// result is immutable; it is safe to read without locks.
func (e *Entry) Slot(i int) *EnableInfo { return e.slots[i].Load() }

// Provider returns ProviderEnableInfo, the aggregate over all enabled slots.
func (e *Entry) Provider() *EnableInfo { return e.provider.Load() }

// Mask returns the bits of the enabled slots: bit i is set when slot i is enabled.
func (e *Entry) Mask() uint8 { return uint8(e.mask.Load()) }

// Registrations returns the registrations on the entry's list.
func (e *Entry) Registrations() []Registration {
	b := &e.table.buckets[Hash(e.guid)]
	b.mu.Lock()
	defer b.mu.Unlock()
	return e.regsCopyLocked()
}

// Removed reports whether the entry has left its bucket (its last reference went).
func (e *Entry) Removed() bool {
	b := &e.table.buckets[Hash(e.guid)]
	b.mu.Lock()
	defer b.mu.Unlock()
	return e.removed
}

func (e *Entry) maskLocked() uint8 { return uint8(e.mask.Load()) }

func (e *Entry) regsCopyLocked() []Registration { return append([]Registration(nil), e.regs...) }

func (e *Entry) slotOfLocked(loggerID uint16) int {
	for i := range e.slots {
		if s := e.slots[i].Load(); s != nil && s.LoggerID == loggerID {
			return i
		}
	}
	return -1
}

func (e *Entry) freeSlotLocked() int {
	for i := range e.slots {
		if e.slots[i].Load() == nil {
			return i
		}
	}
	return -1
}

// refreshLocked recomputes the aggregate and the mask after a slot changed, and pushes the
// mask to every registration on the list (invariant 1).
func (e *Entry) refreshLocked() {
	var snap [Slots]*EnableInfo
	var mask uint8
	for i := range e.slots {
		if snap[i] = e.slots[i].Load(); snap[i] != nil {
			mask |= 1 << i
		}
	}
	e.provider.Store(aggregate(snap[:]))
	e.mask.Store(uint32(mask))
	push := mask
	if fault.On(fault.KeepMaskOnDisable) {
		push |= e.pushed // the deliberate bug: bits once set are never cleared
	}
	e.pushed = push
	for _, r := range e.regs {
		r.SetEnableMask(e.typ, push)
	}
}
