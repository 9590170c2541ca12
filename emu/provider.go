package emu

import (
	"math"
	"sync/atomic"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// Registration is the handle EventRegister returns (REGHANDLE). It holds the
// registration's ETW_REG_ENTRY, which only the kernel changes (through EventRegister,
// EventUnregister, EventSetInformation and the sessions' enablement); its methods read
// it. It leaves out nothing a user-mode caller could see of the REGHANDLE.
type Registration struct {
	// mask is the ETW_REG_ENTRY's masks word (e keeps a pointer to it), here so that
	// EventWrite's disabled test is a nil check, a load at the handle's address and a
	// compare, within its caller's inlining budget. Atomic; written only by package
	// regentry, under the GUID table's bucket lock.
	mask atomic.Uint64
	// route is where EventWrite last found this registration's events go, for writers
	// to reuse while the kernel's routing count is unchanged (see plainRoute). Atomic;
	// stored by writers (reroute), cleared by the control surface under the kernel's
	// lock (rerouteLocked).
	route atomic.Pointer[plainRoute]
	e     regentry.Entry // the ETW_REG_ENTRY; changed by the kernel only
	k     *Kernel        // the kernel it was registered with; immutable
}

// Index is the registration's ETW_REG_ENTRY.Index.
func (r *Registration) Index() uint16 { return r.e.Index() }

// EnableMask is ETW_REG_ENTRY.EnableMask: one bit per enable slot of the provider's
// ETW_GUID_ENTRY whose session enabled it. The masks are read from r's own word, which
// its ETW_REG_ENTRY points at: a zero Registration's reads as zero.
func (r *Registration) EnableMask() uint8 { e, _ := regentry.RoutingMasks(r.mask.Load()); return e }

// GroupEnableMask is ETW_REG_ENTRY.GroupEnableMask: the slots of the provider group's
// entry (10.0 and later).
func (r *Registration) GroupEnableMask() uint8 {
	_, g := regentry.RoutingMasks(r.mask.Load())
	return g
}

// HostEnableMask and HostGroupEnableMask are the 2004 masks for sessions of the host
// (emulated as the same kernel: always 0).
func (r *Registration) HostEnableMask() uint8 { h, _ := regentry.HostMasks(r.mask.Load()); return h }

// HostGroupEnableMask: see HostEnableMask.
func (r *Registration) HostGroupEnableMask() uint8 {
	_, h := regentry.HostMasks(r.mask.Load())
	return h
}

// Flags are ETW_REG_ENTRY.Flags as a version-independent set (regentry.Flags names
// them as the emulated version does).
func (r *Registration) Flags() regentry.Flags { return r.e.Flags() }

// Closed reports whether EventUnregister closed the registration.
func (r *Registration) Closed() bool { return regentry.IsClosedWord(r.mask.Load()) }

// Provider returns the GUID the registration was made for.
func (r *Registration) Provider() guid.GUID {
	if g := r.e.GuidEntry(); g != nil {
		return g.GUID()
	}
	return guid.Null
}

// Group returns the provider group the registration's traits put it in, if any.
func (r *Registration) Group() (guid.GUID, bool) {
	if g := r.e.GroupEntry(); g != nil {
		return g.GUID(), true
	}
	return guid.Null, false
}

// TraitsName is the provider name of the registration's traits, "" without traits.
func (r *Registration) TraitsName() string {
	if t := r.e.Traits(); t != nil {
		return t.Name
	}
	return ""
}

// entry returns r's ETW_REG_ENTRY, nil for a nil handle or a zero Registration.
func (r *Registration) entry() *regentry.Entry {
	if r == nil || !r.made() {
		return nil
	}
	return &r.e
}

// made reports whether EventRegister made r. A zero Registration has no ETW_REG_ENTRY
// behind it: its masks read as zero, it is not closed, and every call that takes it as a
// handle returns ERROR_INVALID_HANDLE (but EventWrite, whose first test finds no session
// enabling it and returns nil, as for another kernel's disabled registration).
func (r *Registration) made() bool { return r.k != nil }

// EventDescriptor is EVENT_DESCRIPTOR.
type EventDescriptor = abi.EventDescriptor

// EnableCallback is PENABLECALLBACK.
type EnableCallback = regentry.EnableCallback

// EVENT_INFO_CLASS values for EventSetInformation.
const (
	EventProviderSetTraits         = 2 // EventProviderSetTraits
	EventProviderUseDescriptorType = 3 // EventProviderUseDescriptorType
)

// EventRegisterSince is the first version with EventRegister and ETW_REG_ENTRY; earlier
// versions have only classic providers (RegisterTraceGuids), which are not emulated.
const EventRegisterSince = winver.V6_0

// traitsSince is the first version with provider traits and groups.
const traitsSince = winver.V10_0

// EventRegister registers a provider (a user-mode, modern registration) and returns its
// handle. If sessions enabled the provider before it registered, the callback runs at
// once with the aggregate enablement and a GUID_NULL source: before EventRegister
// returns, unless another goroutine is delivering callbacks at that moment (another
// control call's, perhaps one that blocks). Callbacks are delivered one at a time, in the
// order the kernel queued them, so that goroutine delivers this one after those before
// it, and EventRegister returns without waiting: waiting would deadlock a callback that
// registers a provider. The registration's EnableMask is set either way; only the
// callback comes later.
//
// Errors: ERROR_NOT_SUPPORTED before 6.0, which has no EventRegister;
// ERROR_INVALID_PARAMETER for a GUID_NULL provider or a context without a callback.
func (k *Kernel) EventRegister(provider guid.GUID, cb EnableCallback, context any) (*Registration, error) {
	if k.version < EventRegisterSince { // written out, not formatted: 5.x fuzz programs make it by the thousand
		return nil, winerr.Because(winerr.ErrNotSupported, "EventRegister does not exist before "+EventRegisterSince.Marketing()+" (Windows "+k.version.String()+")")
	}
	if provider.IsZero() {
		return nil, winerr.New(winerr.ErrInvalidParameter, "provider GUID is GUID_NULL")
	}
	if cb == nil && context != nil {
		return nil, winerr.New(winerr.ErrInvalidParameter, "a callback context was given without a callback")
	}
	k.mu.Lock()
	if k.closed {
		k.mu.Unlock()
		return nil, winerr.New(winerr.ErrInvalidHandle, "the emulated kernel is closed")
	}
	index, ok := k.nextIndexLocked()
	if !ok {
		k.mu.Unlock()
		return nil, winerr.New(winerr.ErrNoSystemResources, "%d registrations are open, one for each ETW_REG_ENTRY Index: unregister one first", len(k.regs))
	}
	h := &Registration{k: k}
	r := &h.e
	r.Init(k.version, regentry.Options{
		Flags: regentry.FlagUser | regentry.FlagModern, Callback: cb, CallbackContext: context,
		ProcessID: k.pid, Index: index, Mask: &h.mask,
	})
	e, err := k.guids.Register(provider, guidtable.TraceGuid, r)
	if err != nil {
		k.mu.Unlock()
		return nil, err
	}
	r.Link(e)
	k.regs[r] = h
	if agg := e.Provider(); agg.IsEnabled != 0 {
		k.notify.push(notification{reg: r, code: regentry.ControlEnable, info: agg})
	}
	k.mu.Unlock()
	k.notify.run()
	return h, nil
}

// nextIndexLocked returns the ETW_REG_ENTRY Index of a new registration: one more than
// the last, skipping 0 and the indexes open registrations hold once the 16-bit count has
// wrapped, so that no two open registrations share one; false when all 65,535 are held.
//
// [emulator choice] Windows' own bound on a process's registrations is not in the public
// sources; the emulator's is the Index's range, which also bounds the memory a program
// registering without end can take.
// Preconditions: k.mu is held.
func (k *Kernel) nextIndexLocked() (uint16, bool) {
	if len(k.regs) >= math.MaxUint16 {
		return 0, false
	}
	if k.regUsed == nil {
		if k.regIndex < math.MaxUint16 {
			k.regIndex++
			return k.regIndex, true
		}
		k.regUsed = new([1 << 16 / 64]uint64)
		for r := range k.regs {
			k.regUsed[r.Index()/64] |= 1 << (r.Index() % 64)
		}
	}
	for i := k.regIndex + 1; ; i++ {
		if i != 0 && k.regUsed[i/64]&(1<<(i%64)) == 0 {
			k.regUsed[i/64] |= 1 << (i % 64)
			k.regIndex = i
			return i, true
		}
	}
}

// ownLocked reports whether r is an open registration of this kernel.
// Preconditions: k.mu is held.
func (k *Kernel) ownLocked(r *regentry.Entry) bool {
	_, ok := k.regs[r]
	return ok
}

// EventUnregister closes a registration: writers stop routing through it at once and its
// callbacks stop. A nil handle is accepted and does nothing, as a zero REGHANDLE is.
// Errors: ERROR_INVALID_HANDLE for a handle already unregistered or of another kernel.
func (k *Kernel) EventUnregister(h *Registration) error {
	if h == nil {
		return nil
	}
	r := &h.e
	k.mu.Lock()
	defer k.mu.Unlock()
	if !k.ownLocked(r) {
		return winerr.New(winerr.ErrInvalidHandle, "registration is closed or belongs to another kernel")
	}
	r.Close()
	k.guids.Unregister(r.GuidEntry(), r)
	if g := r.GroupEntry(); g != nil {
		k.guids.Unregister(g, r)
	}
	k.rerouteLocked(r)
	delete(k.regs, r)
	if k.regUsed != nil {
		k.regUsed[r.Index()/64] &^= 1 << (r.Index() % 64)
	}
	k.traits.Release(r.SetTraits(nil))
	return nil
}

// EventSetInformation sets provider traits (EventProviderSetTraits, 10.0+), which can put
// the provider into a provider group, or turns on EventProviderUseDescriptorType.
// Errors: ERROR_INVALID_HANDLE for a closed handle; ERROR_INVALID_PARAMETER for a
// malformed traits blob; ERROR_NOT_SUPPORTED for other classes or older versions.
func (k *Kernel) EventSetInformation(r *Registration, class int, data []byte) error {
	err := k.setInformation(r.entry(), class, data)
	k.notify.run() // joining an enabled group queued a callback
	return err
}

func (k *Kernel) setInformation(r *regentry.Entry, class int, data []byte) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if r == nil || !k.ownLocked(r) {
		return winerr.New(winerr.ErrInvalidHandle, "registration is closed, nil or of another kernel")
	}
	switch {
	case class == EventProviderSetTraits && k.version >= traitsSince:
		return k.setTraitsLocked(r, data)
	case class == EventProviderUseDescriptorType && k.version >= traitsSince:
		if len(data) != 1 {
			return winerr.New(winerr.ErrInvalidParameter, "EventProviderUseDescriptorType takes one BOOLEAN byte, not %d bytes", len(data))
		}
		r.SetUseDescriptorType(data[0] != 0)
		return nil
	}
	return winerr.New(winerr.ErrNotSupported, "EVENT_INFO_CLASS %d is not supported on Windows %s", class, k.version)
}

// setTraitsLocked replaces r's traits and moves it into the group the traits name.
// Preconditions: k.mu is held.
func (k *Kernel) setTraitsLocked(r *regentry.Entry, blob []byte) error {
	t, err := k.traits.Acquire(blob)
	if err != nil {
		return err
	}
	k.traits.Release(r.SetTraits(t))
	want, hasGroup := t.Group()
	old := r.GroupEntry()
	if old != nil && (!hasGroup || old.GUID() != want) {
		k.guids.Unregister(old, r)
		r.SetGroupEntry(nil)
		k.rerouteLocked(r)
		old = nil
	}
	if hasGroup && old == nil {
		g, err := k.guids.Register(want, guidtable.GroupGuid, r)
		if err != nil {
			return err
		}
		r.SetGroupEntry(g)
		k.rerouteLocked(r)
		if agg := g.Provider(); agg.IsEnabled != 0 {
			k.notify.push(notification{reg: r, code: regentry.ControlEnable, info: regInfo(r, agg)})
		}
	}
	return nil
}

// EventProviderEnabled reports whether any session wants events of this level and keyword
// from the provider: the quick test against the aggregate of its GUID entry and of its
// group's. A nil or closed handle, or another kernel's, gives false.
func (k *Kernel) EventProviderEnabled(h *Registration, level uint8, keyword uint64) bool {
	if h == nil || h.k != k || h.e.Masks() == 0 || h.e.Closed() {
		return false
	}
	r := &h.e
	if r.GuidEntry().Provider().Passes(level, keyword) {
		return true
	}
	g := r.GroupEntry()
	return r.GroupEnableMask() != 0 && g != nil && g.Provider().Passes(level, keyword)
}

// EventEnabled is EventProviderEnabled with the descriptor's level and keyword.
func (k *Kernel) EventEnabled(r *Registration, d *EventDescriptor) bool {
	if d == nil {
		return false
	}
	return k.EventProviderEnabled(r, d.Level, d.Keyword)
}
