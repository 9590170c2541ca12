package emu

import (
	"math/bits"

	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
)

// plainRoute is where a registration's plain events go when one session takes them: the
// session, the enablement its slot holds (level and keywords) and what the header needs
// of the provider. A nil l means the events take the general path (write): more than one
// session or a provider group, a SECURE_MODE session, an enablement with filters or
// properties that add extended items (EnableInfo.Special), a closed registration, or a
// clock other than the time-stamp counter.
//
// [emulator choice] Windows finds the sessions of each event from the registration's
// EnableMask and its GUID entry's EnableInfo slots. The emulator caches what that walk
// finds in the registration, so that EventWrite's common case loads one pointer where
// the walk made four dependent loads (the GUID entry, the slot, the session and its
// secure flag): about 1 ns an event on one goroutine (bench/RESULTS.md). A cached route
// is immutable and used only while the kernel's routing count is the one it was taken
// at; every change to enable slots, registrations or provider groups adds to that count
// (rerouteLocked). The count is an epoch object, compared by address: a route cached for
// one kernel holds that kernel's epoch, which no other kernel's can be, so a registration
// passed to another kernel's EventWrite takes write's path, which refuses it.
type plainRoute struct {
	l        *session.Logger       // the one session; nil: take write's general path
	filter   *guidtable.EnableInfo // the session's enablement (immutable)
	provider *[16]byte             // the provider's GUID in Windows byte order
	pid      uint32                // the registering process
	routing  *epoch                // Kernel.routing when the route was taken
}

// epoch is one value of a kernel's routing count. Its address is what writers compare;
// it is not empty, so that each is a distinct allocation.
type epoch struct{ n uint64 }

// reroute writes an event of r's whose route is not cached, or was cached before the
// last change, through write, and caches the route r's next events take. It reads the
// routing count before the state it routes by: a control call that changes that state
// adds to the count afterwards, so a route taken while the call ran is not used again.
func (k *Kernel) reroute(r *Registration, d *EventDescriptor, data [][]byte) error {
	if r.k != k {
		return errForeign() // and no route: a route holds the epoch of the kernel that took it
	}
	rt := &plainRoute{routing: k.routing.Load()}
	enable, group := regentry.RoutingMasks(r.mask.Load()) // a closed registration's word has no enable bit set
	if k.tsc && enable != 0 && enable&(enable-1) == 0 && group == 0 {
		ge := r.e.GuidEntry()
		if info := ge.Slot(bits.TrailingZeros8(enable)); info != nil {
			if l, _ := info.Target.(*session.Logger); l != nil && !l.Secure() && !info.Special {
				rt.l, rt.filter, rt.provider, rt.pid = l, info, ge.GUIDBytes(), r.e.ProcessID()
			}
		}
	}
	if rerouteTaken != nil {
		rerouteTaken()
	}
	r.route.Store(rt)
	// A control call that ran since the count was read may have dropped r's route before
	// the store above: it moved the count on first, so the load below sees that, and the
	// route it would have dropped goes (unless another writer's replaced it).
	if k.routing.Load() != rt.routing {
		r.route.CompareAndSwap(rt, nil)
	}
	return k.write(r, d, nil, data)
}

// rerouteTaken, when not nil, runs between reroute's taking a route and its caching it: a
// test runs a control call there.
var rerouteTaken func()

// errForeign returns the error of a write through another kernel's registration.
func errForeign() error {
	return winerr.Because(winerr.ErrInvalidHandle, "the registration belongs to another kernel")
}

// rerouteLocked is called by every control call that changes where events go, after the
// change, with the registrations whose masks, or whose GUID entry's slots, it changed:
// routes cached before it are no longer used, for the routing count moves on, and those
// of regs are dropped, so that they do not keep a stopped session's Logger reachable (a
// route to a session is taken only by a registration on an entry whose slot holds the
// session, and every call that empties such a slot names that entry's registrations; a
// route a writer stores after the drop, taken before the call, the writer drops itself:
// see reroute).
// The other registrations' routes are stale by the count alone: a control call costs
// time in proportion to what it changes, not to every registration the kernel holds,
// which made N enables or unregisters take time in proportion to N squared.
// Preconditions: k.mu is held.
func (k *Kernel) rerouteLocked(regs ...guidtable.Registration) {
	next := &epoch{}
	if e := k.routing.Load(); e != nil { // nil in a Kernel not made by New
		next.n = e.n + 1
	}
	k.routing.Store(next)
	for _, g := range regs {
		if e, ok := g.(*regentry.Entry); ok {
			if r := k.regs[e]; r != nil {
				r.route.Store(nil)
			}
		}
	}
}
