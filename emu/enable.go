package emu

import (
	"sync"

	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/internal/fault"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// EventControlCode is EVENT_CONTROL_CODE: what EnableTraceEx2 asks for and what an enable
// callback is told.
type EventControlCode = regentry.ControlCode

// EVENT_CONTROL_CODE_* values, for EnableTraceEx2 and enable callbacks.
const (
	DisableProvider = regentry.ControlDisable      // EVENT_CONTROL_CODE_DISABLE_PROVIDER
	EnableProvider  = regentry.ControlEnable       // EVENT_CONTROL_CODE_ENABLE_PROVIDER
	CaptureState    = regentry.ControlCaptureState // EVENT_CONTROL_CODE_CAPTURE_STATE
)

// EnableParameters is the part of ENABLE_TRACE_PARAMETERS the emulator uses.
// EnableProperty's SID, TS_ID, STACK_TRACE, PROCESS_START_KEY and EVENT_KEY bits add an
// extended item to each event the session gets through this enablement (itemValues and
// stackItem say with what; [emulator choice] a STACK_TRACE64 item holds the writing
// goroutine's innermost 32 return addresses at most; on amd64 one a frame, as a Windows
// stack walk reads them, so that a call the compiler inlined has none of its own and
// runtime.CallersFrames names it); IGNORE_KEYWORD_0 and
// PROVIDER_GROUP change what is enabled; the others are kept in the enable slot only.
type EnableParameters struct {
	EnableProperty uint32    // EVENT_ENABLE_PROPERTY_* bits
	SourceID       guid.GUID // passed to enable callbacks
	// Filters are the EVENT_FILTER_DESCRIPTORs of an enable (EnableFilterDesc): the
	// PID, EXECUTABLE_NAME and EVENT_ID filters, applied to each event the session would
	// get (guidtable.Filter says how). An enable replaces the session's filters; an
	// enable without any clears them.
	Filters []FilterDescriptor
}

// FilterDescriptor is EVENT_FILTER_DESCRIPTOR: a filter's type and its data.
type FilterDescriptor = guidtable.FilterDescriptor

// filtersSince is the first version with the PID, EXECUTABLE_NAME and EVENT_ID filters.
//
// [UNCERTAIN] What EnableTraceEx2 returned for them before Windows 8.1, where the
// documentation introduces them: the emulator refuses them with ERROR_NOT_SUPPORTED.
const filtersSince = winver.V6_3

// enableSince is the first version whose GUID table (ETW_GUID_ENTRY with enable slots)
// the emulator models, and so the first that can enable providers.
const enableSince = winver.V6_0

// groupsSince is the first version with provider groups (EVENT_ENABLE_PROPERTY_PROVIDER_GROUP).
const groupsSince = winver.V10_0

// propertySince gives, for each EVENT_ENABLE_PROPERTY_* bit, the first version whose
// EnableTraceEx2 takes it. An enable that passes a bit its version predates is refused
// with ERROR_INVALID_PARAMETER, as one that asks for a provider group before 10.0 is.
// The versions are Microsoft Learn's: SID, TS_ID and STACK_TRACE are in
// ENABLE_TRACE_PARAMETERS_V1, EnableTraceEx2's first form (Windows 7), and the first two
// in Vista's EnableTraceEx; every version that enables takes them ([UNCERTAIN] whether
// Vista's took STACK_TRACE); IGNORE_KEYWORD_0,
// PROVIDER_GROUP, PROCESS_START_KEY and EVENT_KEY are "supported on Windows 10, version
// 1507 and later" (the patches that brought three of them to 7 and 8.1 are not
// emulated). [UNCERTAIN] Whether an older kernel refuses a bit it does not know or
// ignores it; and for PSM_KEY, ENABLE_KEYWORD_0, EXCLUDE_INPRIVATE, ENABLE_SILOS and
// SOURCE_CONTAINER_TRACKING no version is documented: every version takes them, and
// keeps them in the enable slot only.
var propertySince = [...]struct {
	bit   uint32
	name  string // after EVENT_ENABLE_PROPERTY_
	since winver.Version
}{
	{guidtable.PropertySID, "SID", enableSince},
	{guidtable.PropertyTSID, "TS_ID", enableSince},
	{guidtable.PropertyStackTrace, "STACK_TRACE", enableSince},
	{guidtable.PropertyPSMKey, "PSM_KEY", enableSince},
	{guidtable.PropertyIgnoreKeyword0, "IGNORE_KEYWORD_0", winver.V10_0},
	{guidtable.PropertyProviderGroup, "PROVIDER_GROUP", groupsSince},
	{guidtable.PropertyEnableKeyword0, "ENABLE_KEYWORD_0", enableSince},
	{guidtable.PropertyProcessStartKey, "PROCESS_START_KEY", winver.V10_0},
	{guidtable.PropertyEventKey, "EVENT_KEY", winver.V10_0},
	{guidtable.PropertyExcludeInPrivate, "EXCLUDE_INPRIVATE", enableSince},
	{guidtable.PropertyEnableSilos, "ENABLE_SILOS", enableSince},
	{guidtable.PropertySourceContainerTracking, "SOURCE_CONTAINER_TRACKING", enableSince},
}

// checkProperties refuses EnableProperty bits that Windows v does not take
// (propertySince), naming the first.
func checkProperties(v winver.Version, props uint32) error {
	if props&^guidtable.PropertyAll != 0 {
		return winerr.New(winerr.ErrInvalidParameter, "unknown EnableProperty bits %#x", props&^guidtable.PropertyAll)
	}
	for _, p := range propertySince {
		if props&p.bit != 0 && v < p.since {
			return winerr.New(winerr.ErrInvalidParameter, "EVENT_ENABLE_PROPERTY_%s (%#x) is not taken by Windows %s's EnableTraceEx2 (%v)",
				p.name, p.bit, v, winver.Since(p.since))
		}
	}
	return nil
}

// EnableTraceEx2 enables, disables or asks for the state of provider for session h, at
// level and with any/all keyword masks. The first enable of a provider nobody registered
// creates a pre-enabled GUID entry that later registrations join. Callbacks of the
// provider's registrations receive the aggregate over all sessions; with
// EVENT_ENABLE_PROPERTY_PROVIDER_GROUP the GUID is a provider group and the group's
// members are enabled, and a member's callbacks carry the aggregate over the sessions
// that enable it either way, through its own GUID or its group (guidtable.Combined).
//
// Errors: ERROR_NOT_SUPPORTED before 6.0, and for filters before 6.3 or of a type the
// emulator does not apply; ERROR_INVALID_PARAMETER for a zero handle or GUID, an unknown
// control code or property bit, a property bit its version predates (propertySince: a
// group enable, PROCESS_START_KEY, EVENT_KEY or IGNORE_KEYWORD_0 before 10.0), or filter descriptors that
// break EnableTraceEx2's rules (guidtable.ParseFilters); ERROR_WMI_INSTANCE_NOT_FOUND for
// a handle of no running session; ERROR_NO_SYSTEM_RESOURCES for a ninth session on one
// provider.
// Disabling a provider the session has not enabled does nothing and succeeds.
func (k *Kernel) EnableTraceEx2(h TraceHandle, provider guid.GUID, code EventControlCode, level uint8,
	matchAny, matchAll uint64, params *EnableParameters) error {
	if h == 0 {
		return winerr.New(winerr.ErrInvalidParameter, "trace handle is 0")
	}
	if provider.IsZero() {
		return winerr.New(winerr.ErrInvalidParameter, "provider GUID is GUID_NULL")
	}
	if k.version < enableSince { // written out, not formatted, as EventRegister's refusal
		return winerr.Because(winerr.ErrNotSupported, "provider enablement through ETW_GUID_ENTRY exists from "+enableSince.Marketing()+
			"; the WMI GUID tables of Windows "+k.version.String()+" are not emulated")
	}
	var ep EnableParameters
	if params != nil {
		ep = *params
	}
	if err := checkProperties(k.version, ep.EnableProperty); err != nil {
		return err
	}
	typ := guidtable.TraceGuid
	if ep.EnableProperty&guidtable.PropertyProviderGroup != 0 {
		typ = guidtable.GroupGuid
	}

	k.mu.Lock()
	l, err := k.lookup(h, "")
	if err != nil {
		k.mu.Unlock()
		return err
	}
	switch code {
	case regentry.ControlEnable:
		filter, err := k.filters(ep.Filters)
		if err != nil {
			k.mu.Unlock()
			return err
		}
		c, err := k.guids.Enable(provider, typ, guidtable.EnableInfo{
			Level: level, LoggerID: l.ID(), EnableProperty: ep.EnableProperty,
			MatchAnyKeyword: matchAny, MatchAllKeyword: matchAll, Target: l, Filter: filter,
			Special: filter != nil || ep.EnableProperty&session.PropItems != 0,
		})
		if err != nil {
			k.mu.Unlock()
			return err
		}
		k.rerouteLocked(c.Regs...)
		k.queueChangeLocked(c, changeEnable, ep.SourceID)
	case regentry.ControlDisable:
		if c, ok := k.guids.Disable(provider, typ, l.ID()); ok {
			k.rerouteLocked(c.Regs...)
			k.queueChangeLocked(c, changeDisable, ep.SourceID)
		}
	case regentry.ControlCaptureState:
		e := k.guids.Lookup(provider, typ)
		if e == nil || !slotOf(e, l.ID()) {
			k.mu.Unlock()
			return winerr.New(winerr.ErrInvalidParameter, "session %q has not enabled provider %s, so it cannot ask for its state", l.Name(), provider)
		}
		agg := e.Provider()
		for _, r := range e.Registrations() {
			reg := r.(*regentry.Entry)
			k.notify.push(notification{reg: reg, source: ep.SourceID, code: regentry.ControlCaptureState, info: regInfo(reg, agg)})
		}
	default:
		k.mu.Unlock()
		return winerr.New(winerr.ErrInvalidParameter, "unknown EVENT_CONTROL_CODE %d", code)
	}
	k.mu.Unlock()
	k.notify.run()
	return nil
}

// filters reads an enable's filter descriptors (nil for none): ERROR_NOT_SUPPORTED
// before filtersSince or for a type the emulator does not apply, ERROR_INVALID_PARAMETER
// for descriptors that break EnableTraceEx2's rules (guidtable.ParseFilters).
func (k *Kernel) filters(descs []FilterDescriptor) (*guidtable.Filter, error) {
	if len(descs) == 0 {
		return nil, nil
	}
	if k.version < filtersSince {
		return nil, winerr.New(winerr.ErrNotSupported, "event filters need %v", winver.Since(filtersSince))
	}
	f, unsupported, err := guidtable.ParseFilters(descs)
	switch {
	case unsupported:
		return nil, winerr.Because(winerr.ErrNotSupported, err.Error())
	case err != nil:
		return nil, winerr.Because(winerr.ErrInvalidParameter, err.Error())
	}
	return f, nil
}

func slotOf(e *guidtable.Entry, loggerID uint16) bool {
	for i := 0; i < guidtable.Slots; i++ {
		if s := e.Slot(i); s != nil && s.LoggerID == loggerID {
			return true
		}
	}
	return false
}

type changeKind uint8

const (
	changeEnable changeKind = iota
	changeDisable
)

// queueChangeLocked queues the callbacks a slot change causes: every registration on the
// entry hears the new aggregate over the sessions that enable it (regInfo), as
// ENABLE_PROVIDER while any session still enables the provider and DISABLE_PROVIDER once
// none does.
// Preconditions: k.mu is held.
func (k *Kernel) queueChangeLocked(c guidtable.Change, kind changeKind, source guid.GUID) {
	if kind == changeEnable && fault.On(fault.SkipCallbackOnEnable) {
		return // the deliberate bug
	}
	for _, r := range c.Regs {
		reg := r.(*regentry.Entry)
		info := regInfo(reg, c.Aggregate)
		code := regentry.ControlEnable
		if kind == changeDisable && info.IsEnabled == 0 {
			code = regentry.ControlDisable
		}
		k.notify.push(notification{reg: reg, source: source, code: code, info: info})
	}
}

// regInfo is the ProviderEnableInfo registration r's callback carries, given agg, the
// aggregate of the entry that changed: agg itself, or for a registration in a provider
// group the aggregate over its own entry's sessions and its group's (guidtable.Combined).
// Preconditions: k.mu is held.
func regInfo(r *regentry.Entry, agg *guidtable.EnableInfo) *guidtable.EnableInfo {
	if g := r.GroupEntry(); g != nil {
		return guidtable.Combined(r.GuidEntry(), g)
	}
	return agg
}

// notification is one pending enable callback.
type notification struct {
	reg    *regentry.Entry
	source guid.GUID
	code   regentry.ControlCode
	info   *guidtable.EnableInfo
}

// notifier delivers enable callbacks in the order they were queued, with no kernel lock
// held. Whoever queues tries to become the deliverer; a control call made from inside a
// callback finds delivery in progress and leaves its callbacks to the running loop, so
// nothing deadlocks and the order holds (invariant 4).
type notifier struct {
	qmu     sync.Mutex
	q       []notification // protected by qmu
	deliver sync.Mutex     // held by the goroutine delivering
}

func (n *notifier) push(x notification) {
	n.qmu.Lock()
	n.q = append(n.q, x)
	n.qmu.Unlock()
}

func (n *notifier) pop() (notification, bool) {
	n.qmu.Lock()
	defer n.qmu.Unlock()
	if len(n.q) == 0 {
		return notification{}, false
	}
	x := n.q[0]
	n.q = n.q[1:]
	return x, true
}

func (n *notifier) pending() bool {
	n.qmu.Lock()
	defer n.qmu.Unlock()
	return len(n.q) > 0
}

// run delivers queued callbacks until the queue is empty, unless another goroutine (or
// an outer frame of this one) is delivering already.
func (n *notifier) run() {
	for n.pending() {
		if !n.deliver.TryLock() {
			return
		}
		n.drain()
	}
}

// drain delivers the queue. A callback that panics does not keep the others from theirs:
// the queue is delivered to its end, and then the first panic goes on up the control
// call that ran it.
func (n *notifier) drain() {
	var panicked any
	defer func() {
		n.deliver.Unlock()
		if panicked != nil {
			panic(panicked)
		}
	}()
	for {
		x, ok := n.pop()
		if !ok {
			return
		}
		if p := x.deliver(); p != nil && panicked == nil {
			panicked = p
		}
	}
}

// deliver calls the registration's callback with the notification, unless it has none or
// is closed, and returns what the callback panicked with, or nil.
func (x notification) deliver() (panicked any) {
	cb, ctx := x.reg.Callback()
	if cb == nil || x.reg.Closed() {
		return nil
	}
	defer func() { panicked = recover() }()
	cb(x.source, x.code, x.info.Level, x.info.MatchAnyKeyword, x.info.MatchAllKeyword, nil, ctx)
	return nil
}
