package emu

import (
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/winerr"
)

// Tampering: writes to the kernel's tracing structures that bypass its control surface,
// as a driver or a debugger writing kernel memory makes them. Windows has no such calls;
// the emulator has them so that a lesson can show what such a write does and how the
// structures reveal it (an ETW_REG_ENTRY's EnableMask that disagrees with its
// ETW_GUID_ENTRY's EnableInfo slots). They change only the modelled fields named; the
// kernel's other bookkeeping keeps what it was.
//
// [emulator choice] The emulator caches each registration's route (see plainRoute),
// where Windows reads EnableMask and EnableInfo on every event. A poke drops the cached
// routes, so that the next event reads the poked memory, as it would on Windows.

// PokeEnableMask overwrites registration r's ETW_REG_ENTRY.EnableMask (with group, its
// GroupEnableMask) with mask, without touching its GUID entry's slots.
func (k *Kernel) PokeEnableMask(r *Registration, group bool, mask uint8) error {
	if r == nil {
		return winerr.New(winerr.ErrInvalidHandle, "no registration to poke")
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if !r.made() {
		return winerr.New(winerr.ErrInvalidHandle, "the registration is a zero Registration, not one EventRegister made")
	}
	if r.e.Closed() {
		return winerr.New(winerr.ErrInvalidHandle, "the registration was closed (EventUnregister)")
	}
	if r.k != k {
		return winerr.New(winerr.ErrInvalidHandle, "the registration belongs to another kernel")
	}
	typ := guidtable.TraceGuid
	if group {
		typ = guidtable.GroupGuid
	}
	r.e.SetEnableMask(typ, mask)
	k.rerouteLocked(&r.e)
	return nil
}

// PokeSlot zeroes EnableInfo[slot] of provider g's GUID entry (with group, of provider
// group g's), without touching the registrations' masks, the entry's aggregate or its
// reference count (guidtable.Entry.ClearSlotBehindKernel).
func (k *Kernel) PokeSlot(g guid.GUID, group bool, slot int) error {
	if slot < 0 || slot >= guidtable.Slots {
		return winerr.New(winerr.ErrInvalidParameter, "slot %d: an ETW_GUID_ENTRY has slots 0 to %d", slot, guidtable.Slots-1)
	}
	typ := guidtable.TraceGuid
	if group {
		typ = guidtable.GroupGuid
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	var e *guidtable.Entry
	if k.guids != nil { // nil in a Kernel not made by New
		e = k.guids.Lookup(g, typ)
	}
	if e == nil {
		return winerr.New(winerr.ErrWMIGuidNotFound, "no GUID entry for %s", g)
	}
	if !e.ClearSlotBehindKernel(slot) {
		return winerr.New(winerr.ErrInvalidParameter, "EnableInfo[%d] of %s holds no enablement", slot, g)
	}
	k.rerouteLocked(e.Registrations()...)
	return nil
}
