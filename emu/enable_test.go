package emu

import (
	"errors"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

var provA = guid.MustParse("3b9c9951-3480-4220-9377-9c8e5184f5cd")

func TestEnableCallbacksAndMasks(t *testing.T) {
	k := newKernel(t, winver.V2004)
	rec := &recorder{}
	r, err := k.EventRegister(provA, rec.cb, "ctx")
	if err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("callbacks before any enable: %+v", got)
	}
	h1, _ := startMem(t, k, "one", 0)
	h2, _ := startMem(t, k, "two", 0)
	src := guid.FromName("controller")
	if err := k.EnableTraceEx2(h1, provA, regentry.ControlEnable, 3, 0x0F, 0x01, &EnableParameters{SourceID: src}); err != nil {
		t.Fatal(err)
	}
	if err := k.EnableTraceEx2(h2, provA, regentry.ControlEnable, 5, 0x30, 0x03, nil); err != nil {
		t.Fatal(err)
	}
	got := rec.take()
	if len(got) != 2 || got[0] != (call{src, regentry.ControlEnable, 3, 0x0F, 0x01, "ctx"}) ||
		got[1] != (call{guid.Null, regentry.ControlEnable, 5, 0x3F, 0x01, "ctx"}) {
		t.Fatalf("callbacks %+v; want the aggregate: max level, OR any, AND all", got)
	}
	if r.EnableMask() != 0b11 {
		t.Fatalf("EnableMask %08b after two enables", r.EnableMask())
	}
	// One of two sessions disables: the provider still hears ENABLE with the new aggregate.
	k.EnableTraceEx2(h1, provA, regentry.ControlDisable, 0, 0, 0, nil)
	if got := rec.take(); len(got) != 1 || got[0].code != regentry.ControlEnable || got[0].level != 5 || r.EnableMask() != 0b10 {
		t.Fatalf("after one disable: %+v mask %08b", got, r.EnableMask())
	}
	// Capture state goes to the registrations with the aggregate.
	if err := k.EnableTraceEx2(h2, provA, regentry.ControlCaptureState, 0, 0, 0, nil); err != nil {
		t.Fatal(err)
	}
	if got := rec.take(); len(got) != 1 || got[0].code != regentry.ControlCaptureState {
		t.Fatalf("capture state: %+v", got)
	}
	if err := k.EnableTraceEx2(h1, provA, regentry.ControlCaptureState, 0, 0, 0, nil); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("capture state from a session that has not enabled the provider: %v", err)
	}
	// Stopping the last session disables the provider.
	k.StopTrace(h2, "", nil)
	if got := rec.take(); len(got) != 1 || got[0].code != regentry.ControlDisable || r.EnableMask() != 0 {
		t.Fatalf("after stop: %+v mask %08b", got, r.EnableMask())
	}
	if err := k.EnableTraceEx2(h1, provA, 7, 0, 0, 0, nil); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("unknown control code: %v", err)
	}
	if err := k.EnableTraceEx2(h1, provA, regentry.ControlEnable, 0, 0, 0, &EnableParameters{EnableProperty: 0x1000}); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("unknown property bit: %v", err)
	}
	if err := k.EnableTraceEx2(h1, guid.Null, regentry.ControlEnable, 0, 0, 0, nil); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("GUID_NULL provider: %v", err)
	}
}

func TestPreEnableThenRegisterIsToldAtOnce(t *testing.T) {
	k := newKernel(t, winver.V2004)
	h, _ := startMem(t, k, "early", 0)
	if err := k.EnableTraceEx2(h, provA, regentry.ControlEnable, 4, 0xF0, 0, &EnableParameters{SourceID: guid.FromName("x")}); err != nil {
		t.Fatal(err)
	}
	if e := k.guids.Lookup(provA, guidtable.TraceGuid); e == nil || e.RefCount() != 1 {
		t.Fatal("enable of an unregistered provider created no pre-enabled entry")
	}
	rec := &recorder{}
	r, err := k.EventRegister(provA, rec.cb, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := rec.take()
	if len(got) != 1 || got[0] != (call{guid.Null, regentry.ControlEnable, 4, 0xF0, 0, nil}) {
		t.Fatalf("registration into a pre-enabled entry heard %+v", got)
	}
	if r.EnableMask() != 1 || !k.EventProviderEnabled(r, 4, 0x10) || k.EventProviderEnabled(r, 5, 0x10) || k.EventProviderEnabled(r, 4, 0x01) {
		t.Fatal("EventProviderEnabled disagrees with the enable")
	}
}

func TestNinthSession(t *testing.T) {
	k := newKernel(t, winver.V2004)
	for i := 0; i < 8; i++ {
		h, _ := startMem(t, k, "s"+itoa(i), 0)
		if err := k.EnableTraceEx2(h, provA, regentry.ControlEnable, 5, 0, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	h, _ := startMem(t, k, "ninth", 0)
	if err := k.EnableTraceEx2(h, provA, regentry.ControlEnable, 5, 0, 0, nil); !errors.Is(err, winerr.ErrNoSystemResources) {
		t.Fatalf("ninth session: %v", err)
	}
}

func TestRegisterRules(t *testing.T) {
	if _, err := newKernel(t, winver.V5_2).EventRegister(provA, nil, nil); !errors.Is(err, winerr.ErrNotSupported) {
		t.Fatalf("EventRegister on 5.2: %v", err)
	}
	// Each refusal of a call the version lacks is an error of its own, naming the
	// version.
	old := newKernel(t, winver.V5_1)
	_, e1 := old.EventRegister(provA, nil, nil)
	_, e2 := old.EventRegister(provA, nil, nil)
	e3 := old.EnableTraceEx2(1, provA, regentry.ControlEnable, 5, 0, 0, nil)
	var w1, w2 *winerr.Error
	if !errors.As(e1, &w1) || !errors.As(e2, &w2) || w1 == w2 || e1.Error() != e2.Error() ||
		!strings.Contains(e1.Error(), "Windows 5.1") || !errors.Is(e3, winerr.ErrNotSupported) || !strings.Contains(e3.Error(), "Windows 5.1") {
		t.Fatalf("EventRegister on 5.1 twice: %v and %v (the same value: %v); EnableTraceEx2: %v", e1, e2, w1 == w2, e3)
	}
	w1.Reason = "changed by a caller"
	if _, e4 := old.EventRegister(provA, nil, nil); e4.Error() != e2.Error() {
		t.Fatalf("a caller's change to one refusal reached the next: %v", e4)
	}
	k := newKernel(t, winver.V6_0)
	if _, err := k.EventRegister(provA, nil, "context"); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("context without callback: %v", err)
	}
	if _, err := k.EventRegister(guid.Null, nil, nil); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("GUID_NULL: %v", err)
	}
	r, _ := k.EventRegister(provA, nil, nil)
	if f := r.Flags(); f&(regentry.FlagUser|regentry.FlagModern) != regentry.FlagUser|regentry.FlagModern || f&regentry.FlagInserted == 0 {
		t.Fatalf("flags %v", f)
	}
	// On 6.0 the Flags member has no DbgModernRegistration bit.
	if r.Flags().Value(winver.V6_0)&0x20 != 0 {
		t.Fatal("6.0 encodes DbgModernRegistration")
	}
}

func TestUnregisterStopsWritesAndCallbacks(t *testing.T) {
	k := newKernel(t, winver.V2004)
	rec := &recorder{}
	r, _ := k.EventRegister(provA, rec.cb, nil)
	h, _ := startMem(t, k, "u", 0)
	k.EnableTraceEx2(h, provA, regentry.ControlEnable, 5, 0, 0, nil)
	rec.take()
	if err := k.EventUnregister(r); err != nil {
		t.Fatal(err)
	}
	if err := k.EventWrite(r, &EventDescriptor{Level: 1}); !errors.Is(err, winerr.ErrInvalidHandle) || !strings.Contains(err.Error(), "EventUnregister ran") {
		t.Fatalf("write through a closed handle: %v, want ERROR_INVALID_HANDLE with the reason", err)
	}
	if err := k.EventUnregister(r); !errors.Is(err, winerr.ErrInvalidHandle) {
		t.Fatalf("second unregister: %v", err)
	}
	k.EnableTraceEx2(h, provA, regentry.ControlDisable, 0, 0, 0, nil)
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("callback after unregister: %+v", got)
	}
	if k.EventEnabled(r, &EventDescriptor{}) {
		t.Fatal("closed handle reported enabled")
	}
}

// A callback may call control functions: its own callbacks are delivered after it returns,
// in order, and nothing deadlocks.
func TestCallbackMayCallControlFunctions(t *testing.T) {
	k := newKernel(t, winver.V2004)
	h1, _ := startMem(t, k, "a", 0)
	h2, _ := startMem(t, k, "b", 0)
	var order []regentry.ControlCode
	var levels []uint8
	cb := func(_ guid.GUID, code regentry.ControlCode, level uint8, _, _ uint64, _ []byte, _ any) {
		order = append(order, code)
		levels = append(levels, level)
		if len(order) == 1 {
			if err := k.EnableTraceEx2(h2, provA, regentry.ControlEnable, 2, 0, 0, nil); err != nil {
				t.Error(err)
			}
		}
	}
	if _, err := k.EventRegister(provA, cb, nil); err != nil {
		t.Fatal(err)
	}
	if err := k.EnableTraceEx2(h1, provA, regentry.ControlEnable, 1, 0, 0, nil); err != nil {
		t.Fatal(err)
	}
	if len(order) != 2 || levels[0] != 1 || levels[1] != 2 {
		t.Fatalf("callbacks %v levels %v; want the outer enable, then the nested one", order, levels)
	}
}

// A callback that panics keeps no other registration from its callback: the panic comes
// out of the control call that delivered it, after the rest of the queue.
func TestPanickingCallbackStrandsNoOther(t *testing.T) {
	k := newKernel(t, winver.V2004)
	h, _ := startMem(t, k, "a", 0)
	if _, err := k.EventRegister(provA, func(_ guid.GUID, code regentry.ControlCode, _ uint8, _, _ uint64, _ []byte, _ any) {
		if code == regentry.ControlEnable {
			panic("the provider's callback failed")
		}
	}, nil); err != nil {
		t.Fatal(err)
	}
	var got []uint8
	if _, err := k.EventRegister(provA, func(_ guid.GUID, _ regentry.ControlCode, level uint8, _, _ uint64, _ []byte, _ any) {
		got = append(got, level)
	}, nil); err != nil {
		t.Fatal(err)
	}
	func() {
		defer func() {
			if p := recover(); p != "the provider's callback failed" {
				t.Errorf("EnableTraceEx2 panicked with %v, want the callback's panic", p)
			}
		}()
		k.EnableTraceEx2(h, provA, regentry.ControlEnable, 3, 0, 0, nil)
	}()
	if len(got) != 1 || got[0] != 3 {
		t.Fatalf("the other registration's callbacks: %v, want its enable at level 3", got)
	}
	// The kernel goes on: the next control call's callbacks are delivered.
	func() {
		defer func() { recover() }()
		k.EnableTraceEx2(h, provA, regentry.ControlEnable, 4, 0, 0, nil)
	}()
	if len(got) != 2 || got[1] != 4 {
		t.Fatalf("callbacks after the panic: %v, want a second at level 4", got)
	}
}

func TestProviderGroups(t *testing.T) {
	k := newKernel(t, winver.V2004)
	grp := guid.FromName("MyGroup")
	rec := &recorder{}
	r, _ := k.EventRegister(provA, rec.cb, nil)
	if err := k.EventSetInformation(r, EventProviderSetTraits, regentry.BuildTraits("A", regentry.GroupTrait(grp))); err != nil {
		t.Fatal(err)
	}
	h, sink := startMem(t, k, "g", 0)
	if err := k.EnableTraceEx2(h, grp, regentry.ControlEnable, 5, 0, 0, &EnableParameters{EnableProperty: guidtable.PropertyProviderGroup}); err != nil {
		t.Fatal(err)
	}
	if r.GroupEnableMask() != 1 || r.EnableMask() != 0 {
		t.Fatalf("group %08b enable %08b", r.GroupEnableMask(), r.EnableMask())
	}
	if got := rec.take(); len(got) != 1 || got[0].code != regentry.ControlEnable {
		t.Fatalf("group member heard %+v", got)
	}
	// The same session enabled directly too: still one copy per event.
	k.EnableTraceEx2(h, provA, regentry.ControlEnable, 5, 0, 0, nil)
	if err := k.EventWrite(r, &EventDescriptor{ID: 9, Level: 4}, []byte("x")); err != nil {
		t.Fatal(err)
	}
	k.StopTrace(h, "", nil)
	if got := records(t, sink); len(got) != 1 || got[0].Descriptor.ID != 9 {
		t.Fatalf("%d records through group and direct enable, want 1", len(got))
	}
	if err := k.EventSetInformation(r, EventProviderSetTraits, []byte{1, 2}); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("malformed traits: %v", err)
	}
	old := newKernel(t, winver.V6_3)
	r2, _ := old.EventRegister(provA, nil, nil)
	if err := old.EventSetInformation(r2, EventProviderSetTraits, regentry.BuildTraits("A")); !errors.Is(err, winerr.ErrNotSupported) {
		t.Fatalf("traits on 6.3: %v", err)
	}
	h3, _ := startMem(t, old, "g", 0)
	if err := old.EnableTraceEx2(h3, grp, regentry.ControlEnable, 5, 0, 0, &EnableParameters{EnableProperty: guidtable.PropertyProviderGroup}); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("group enable on 6.3: %v", err)
	}
}

// Joining an enabled provider group through traits calls the provider back before
// EventSetInformation returns, with the group's aggregate.
func TestTraitsJoinEnabledGroupCallsBackAtOnce(t *testing.T) {
	k := newKernel(t, winver.V10_0)
	group := guid.FromName("group")
	h, _ := startMem(t, k, "s", 0)
	if err := k.EnableTraceEx2(h, group, regentry.ControlEnable, 2, 3, 0,
		&EnableParameters{EnableProperty: guidtable.PropertyProviderGroup}); err != nil {
		t.Fatal(err)
	}
	var rec recorder
	r, _ := k.EventRegister(provA, rec.cb, nil)
	if got := rec.take(); len(got) != 0 {
		t.Fatalf("callbacks before joining the group: %v", got)
	}
	if err := k.EventSetInformation(r, EventProviderSetTraits, regentry.BuildTraits("p", regentry.GroupTrait(group))); err != nil {
		t.Fatal(err)
	}
	got := rec.take()
	if len(got) != 1 || got[0].code != regentry.ControlEnable || got[0].level != 2 || got[0].any != 3 {
		t.Fatalf("callbacks on joining: %+v, want one enable at level 2, any 0x3", got)
	}
}

// A registration in a provider group hears, in every callback, the aggregate over the
// sessions that enable it either way, its own GUID's and its group's: a provider that
// keeps the state of its last callback (go-winio's, TraceLogging's) then writes every
// event a session asked for. Heard alone, the group's disable said DISABLE_PROVIDER to a
// provider session "b" still enabled at level 5, and a group enabled at level 2 lowered
// the level b asked for.
func TestGroupCallbacksCarryBothEntries(t *testing.T) {
	group := guid.FromName("group")
	grp := &EnableParameters{EnableProperty: guidtable.PropertyProviderGroup}
	k := newKernel(t, winver.V2004)
	ha, _ := startMem(t, k, "a", 0)
	hb, _ := startMem(t, k, "b", 0)
	var rec recorder
	r, _ := k.EventRegister(provA, rec.cb, nil)
	if err := k.EventSetInformation(r, EventProviderSetTraits, regentry.BuildTraits("p", regentry.GroupTrait(group))); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		what  string
		do    func() error
		code  regentry.ControlCode
		level uint8
	}{
		{"b enables the provider at 5", func() error { return k.EnableTraceEx2(hb, provA, regentry.ControlEnable, 5, 0, 0, nil) }, regentry.ControlEnable, 5},
		{"a enables the group at 2", func() error { return k.EnableTraceEx2(ha, group, regentry.ControlEnable, 2, 0, 0, grp) }, regentry.ControlEnable, 5},
		{"a disables the group", func() error { return k.EnableTraceEx2(ha, group, regentry.ControlDisable, 0, 0, 0, grp) }, regentry.ControlEnable, 5},
		{"a enables the group at 5 again", func() error { return k.EnableTraceEx2(ha, group, regentry.ControlEnable, 5, 0, 0, grp) }, regentry.ControlEnable, 5},
		{"b enables the provider at 2", func() error { return k.EnableTraceEx2(hb, provA, regentry.ControlEnable, 2, 0, 0, nil) }, regentry.ControlEnable, 5},
		{"b disables the provider", func() error { return k.EnableTraceEx2(hb, provA, regentry.ControlDisable, 0, 0, 0, nil) }, regentry.ControlEnable, 5},
		{"a disables the group", func() error { return k.EnableTraceEx2(ha, group, regentry.ControlDisable, 0, 0, 0, grp) }, regentry.ControlDisable, 0},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.what, err)
		}
		got := rec.take()
		if len(got) != 1 || got[0].code != s.code || got[0].level != s.level {
			t.Errorf("%s: callbacks %+v, want one %v at level %d", s.what, got, s.code, s.level)
		}
		if on := k.EventEnabled(r, &EventDescriptor{Level: 5}); on != (s.code == regentry.ControlEnable) {
			t.Errorf("%s: EventEnabled at level 5 is %v", s.what, on)
		}
	}
}
