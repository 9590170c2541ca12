package guidtable

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// fakeReg records the masks a table pushes to it.
type fakeReg struct{ masks [numTypes]uint8 }

func (f *fakeReg) SetEnableMask(t Type, m uint8) { f.masks[t] = m }

var provA = guid.MustParse("3b9c9951-3480-4220-9377-9c8e5184f5cd")

func TestHash(t *testing.T) {
	// 9e814aad-3204-11d2-9a82-006008a86939 (SystemTraceControlGuid):
	// words 0x9e814aad, 0x11d23204, 0x6000829a, 0x3969a808; XOR = 0xd63a523b, & 63 = 0x3b.
	g := guid.MustParse("9e814aad-3204-11d2-9a82-006008a86939")
	w := g.Words()
	want := int((w[0] ^ w[1] ^ w[2] ^ w[3]) & 63)
	if Hash(g) != want || want != 0x3b {
		t.Fatalf("Hash = %#x, want 0x3b (computed %#x)", Hash(g), want)
	}
	if Hash(guid.Null) != 0 {
		t.Fatal("GUID_NULL not in bucket 0")
	}
	// Flipping a bit in any word moves the bucket by that bit.
	g2 := g
	g2.Data4[4] ^= 0x01
	if Hash(g2) != Hash(g)^1 {
		t.Fatalf("hash ignores the last word: %d vs %d", Hash(g2), Hash(g))
	}
}

func TestPreEnableThenRegister(t *testing.T) {
	tab := New(winver.V2004)
	c, err := tab.Enable(provA, TraceGuid, EnableInfo{LoggerID: 5, Level: 4, MatchAnyKeyword: 0xF0})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Created || c.Slot != 0 || len(c.Regs) != 0 {
		t.Fatalf("pre-enable change = %+v", c)
	}
	e := c.Entry
	if e.RefCount() != 1 || tab.Len() != 1 {
		t.Fatalf("pre-enabled entry refs %d, table len %d", e.RefCount(), tab.Len())
	}
	r := &fakeReg{}
	e2, err := tab.Register(provA, TraceGuid, r)
	if err != nil || e2 != e {
		t.Fatalf("registration did not join the pre-enabled entry: %v", err)
	}
	if r.masks[TraceGuid] != 0b1 {
		t.Fatalf("joining registration mask = %08b, want 00000001", r.masks[TraceGuid])
	}
	if p := e.Provider(); p.IsEnabled != 1 || p.Level != 4 || p.MatchAnyKeyword != 0xF0 {
		t.Fatalf("aggregate = %+v", p)
	}
	if e.RefCount() != 2 {
		t.Fatalf("refs = %d, want 2 (one slot, one registration)", e.RefCount())
	}
}

func TestSlotsMasksAndNinthSession(t *testing.T) {
	tab := New(winver.V2004)
	r1, r2 := &fakeReg{}, &fakeReg{}
	e, _ := tab.Register(provA, TraceGuid, r1)
	tab.Register(provA, TraceGuid, r2)
	for id := uint16(2); id < 10; id++ {
		c, err := tab.Enable(provA, TraceGuid, EnableInfo{LoggerID: id, Level: uint8(id)})
		if err != nil {
			t.Fatalf("enable %d: %v", id, err)
		}
		if c.Slot != int(id-2) || len(c.Regs) != 2 {
			t.Fatalf("logger %d got slot %d, %d regs", id, c.Slot, len(c.Regs))
		}
	}
	if r1.masks[TraceGuid] != 0xFF || r2.masks[TraceGuid] != 0xFF || e.Mask() != 0xFF {
		t.Fatalf("masks %08b %08b %08b, want all ones", r1.masks[TraceGuid], r2.masks[TraceGuid], e.Mask())
	}
	_, err := tab.Enable(provA, TraceGuid, EnableInfo{LoggerID: 30})
	if !errors.Is(err, winerr.ErrNoSystemResources) {
		t.Fatalf("ninth session: %v, want ERROR_NO_SYSTEM_RESOURCES", err)
	}
	// Re-enabling an existing session updates its slot instead of taking a new one.
	c, err := tab.Enable(provA, TraceGuid, EnableInfo{LoggerID: 4, Level: 1})
	if err != nil || !c.Updated || c.Slot != 2 || e.Slot(2).Level != 1 {
		t.Fatalf("update: %+v, %v", c, err)
	}
	// Disable slot 3 (logger 5): bit 3 clears in every registration.
	if _, ok := tab.Disable(provA, TraceGuid, 5); !ok {
		t.Fatal("disable of an enabled logger failed")
	}
	if r1.masks[TraceGuid] != 0xF7 || e.Slot(3) != nil {
		t.Fatalf("after disable mask %08b", r1.masks[TraceGuid])
	}
	// The freed slot is reused first.
	if c, _ := tab.Enable(provA, TraceGuid, EnableInfo{LoggerID: 40}); c.Slot != 3 {
		t.Fatalf("reuse took slot %d, want 3", c.Slot)
	}
	if _, ok := tab.Disable(provA, TraceGuid, 63); ok {
		t.Fatal("disable of a logger without a slot reported success")
	}
}

func TestAggregation(t *testing.T) {
	tab := New(winver.V2004)
	tab.Enable(provA, TraceGuid, EnableInfo{LoggerID: 2, Level: 3, MatchAnyKeyword: 0x0F, MatchAllKeyword: 0x03, EnableProperty: PropertyIgnoreKeyword0})
	c, _ := tab.Enable(provA, TraceGuid, EnableInfo{LoggerID: 3, Level: 5, MatchAnyKeyword: 0x30, MatchAllKeyword: 0x01, EnableProperty: PropertyIgnoreKeyword0 | PropertySID})
	a := c.Aggregate
	if a.Level != 5 || a.MatchAnyKeyword != 0x3F || a.MatchAllKeyword != 0x01 {
		t.Fatalf("aggregate level %d any %#x all %#x; want max 5, OR 0x3f, AND 0x01", a.Level, a.MatchAnyKeyword, a.MatchAllKeyword)
	}
	if a.EnableProperty != PropertyIgnoreKeyword0|PropertySID {
		t.Fatalf("aggregate property %#x", a.EnableProperty)
	}
	// A session with level 0 and any-keyword 0 asks for everything: aggregate level 255, all keywords.
	c, _ = tab.Enable(provA, TraceGuid, EnableInfo{LoggerID: 4})
	a = c.Aggregate
	if a.Level != 255 || a.MatchAnyKeyword != ^uint64(0) || a.MatchAllKeyword != 0 {
		t.Fatalf("aggregate with a catch-all session: %+v", a)
	}
	if a.EnableProperty&PropertyIgnoreKeyword0 != 0 {
		t.Fatal("IGNORE_KEYWORD_0 kept although one session wants keyword-0 events")
	}
	// Disabling everything leaves a disabled aggregate and frees the entry.
	for _, id := range []uint16{2, 3, 4} {
		c, _ = tab.Disable(provA, TraceGuid, id)
	}
	if c.Aggregate.IsEnabled != 0 || !c.Entry.Removed() || tab.Len() != 0 {
		t.Fatalf("after disabling all: aggregate %+v removed %v len %d", c.Aggregate, c.Entry.Removed(), tab.Len())
	}
}

func TestPasses(t *testing.T) {
	mk := func(e EnableInfo) *EnableInfo { e.normalize(); return &e }
	cases := []struct {
		info    *EnableInfo
		level   uint8
		keyword uint64
		want    bool
	}{
		{mk(EnableInfo{Level: 4}), 4, 1, true},
		{mk(EnableInfo{Level: 4}), 5, 1, false},
		{mk(EnableInfo{Level: 0}), 255, 1, true},                        // level 0 enables all
		{mk(EnableInfo{Level: 5, MatchAnyKeyword: 0x2}), 1, 0x1, false}, // no shared bit
		{mk(EnableInfo{Level: 5, MatchAnyKeyword: 0x3}), 1, 0x1, true},  // shared bit
		{mk(EnableInfo{Level: 5, MatchAllKeyword: 0x3}), 1, 0x1, false}, // missing an all-bit
		{mk(EnableInfo{Level: 5, MatchAllKeyword: 0x3}), 1, 0x7, true},  // has all bits
		{mk(EnableInfo{Level: 5, MatchAnyKeyword: 0x2}), 1, 0, true},    // keyword 0 passes
		{mk(EnableInfo{Level: 5, EnableProperty: PropertyIgnoreKeyword0}), 1, 0, false},
	}
	for i, c := range cases {
		if got := c.info.Passes(c.level, c.keyword); got != c.want {
			t.Errorf("case %d: Passes(%d, %#x) = %v with %+v", i, c.level, c.keyword, got, *c.info)
		}
	}
}

func TestUnregisterAndEntryLifetime(t *testing.T) {
	tab := New(winver.V2004)
	r1, r2 := &fakeReg{}, &fakeReg{}
	e, _ := tab.Register(provA, TraceGuid, r1)
	tab.Register(provA, TraceGuid, r2)
	tab.Enable(provA, TraceGuid, EnableInfo{LoggerID: 2})
	if !tab.Unregister(e, r1) || r1.masks[TraceGuid] != 0 {
		t.Fatal("unregister did not clear the mask")
	}
	if tab.Unregister(e, r1) {
		t.Fatal("a second unregister succeeded")
	}
	tab.Unregister(e, r2)
	if e.Removed() || e.RefCount() != 1 {
		t.Fatalf("entry with an enabled slot left the table (refs %d)", e.RefCount())
	}
	tab.Disable(provA, TraceGuid, 2)
	if !e.Removed() || tab.Lookup(provA, TraceGuid) != nil {
		t.Fatal("entry without references stayed in the table")
	}
}

func TestTypesAreSeparateAndVersioned(t *testing.T) {
	tab := New(winver.V2004)
	rt, rg := &fakeReg{}, &fakeReg{}
	et, _ := tab.Register(provA, TraceGuid, rt)
	eg, _ := tab.Register(provA, GroupGuid, rg)
	if et == eg {
		t.Fatal("trace and group entries of one GUID are the same entry")
	}
	tab.Enable(provA, GroupGuid, EnableInfo{LoggerID: 2})
	if rg.masks[GroupGuid] != 1 || rt.masks[TraceGuid] != 0 || rg.masks[TraceGuid] != 0 {
		t.Fatalf("group enable leaked: trace %08b group %08b", rt.masks[TraceGuid], rg.masks[GroupGuid])
	}
	old := New(winver.V6_3)
	if _, err := old.Register(provA, GroupGuid, rg); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("group GUID on 6.3: %v", err)
	}
	if _, err := old.Enable(provA, GroupGuid, EnableInfo{LoggerID: 2}); err == nil {
		t.Fatal("group enable accepted on 6.3")
	}
}

func TestDisableLogger(t *testing.T) {
	tab := New(winver.V2004)
	gs := []guid.GUID{provA, guid.FromName("B"), guid.FromName("C")}
	for _, g := range gs {
		tab.Enable(g, TraceGuid, EnableInfo{LoggerID: 7})
		tab.Enable(g, TraceGuid, EnableInfo{LoggerID: 8})
	}
	r := &fakeReg{}
	tab.Register(gs[1], TraceGuid, r)
	changes := tab.DisableLogger(7)
	if len(changes) != 3 {
		t.Fatalf("%d changes, want 3", len(changes))
	}
	if r.masks[TraceGuid] != 0b10 {
		t.Fatalf("mask after stop of logger 7 = %08b, want 00000010", r.masks[TraceGuid])
	}
	for _, e := range tab.Entries() {
		for i := 0; i < Slots; i++ {
			if s := e.Slot(i); s != nil && s.LoggerID == 7 {
				t.Fatalf("logger 7 still in %s slot %d", e.GUID(), i)
			}
		}
	}
}

func TestEnableInfoEncode(t *testing.T) {
	e := EnableInfo{IsEnabled: 1, Level: 5, LoggerID: 0x1234, EnableProperty: 0x10, MatchAnyKeyword: 0x1122334455667788, MatchAllKeyword: 9}
	b := make([]byte, EnableInfoSize)
	e.Encode(b)
	if b[0] != 1 || b[4] != 5 || b[6] != 0x34 || b[7] != 0x12 || b[8] != 0x10 || b[0x10] != 0x88 || b[0x17] != 0x11 || b[0x18] != 9 {
		t.Fatalf("TRACE_ENABLE_INFO bytes % x", b)
	}
}

// DisableLogger finds the logger in every bucket: 64 providers spread over the buckets,
// each enabled for the logger, all cleared by one stop, in bucket order. The mask of buckets in use follows the entries as they come
// and go, and Check reports a mask that does not.
func TestDisableLoggerEveryBucket(t *testing.T) {
	tab := New(winver.V2004)
	var want uint64
	for i := 0; i < 64; i++ {
		g := guid.FromName(string(rune('a' + i)))
		want |= 1 << Hash(g)
		if _, err := tab.Enable(g, TraceGuid, EnableInfo{LoggerID: 3}); err != nil {
			t.Fatal(err)
		}
	}
	if got := tab.used.Load(); got != want || bits.OnesCount64(want) < 20 {
		t.Fatalf("buckets in use %064b, want %064b (at least 20 of them)", got, want)
	}
	check := func() (broken []string) {
		tab.Check(func(rule, detail string) { broken = append(broken, rule+": "+detail) }, nil)
		return broken
	}
	if b := check(); len(b) != 0 {
		t.Fatalf("a sound table broke %v", b)
	}
	changes := tab.DisableLogger(3)
	if len(changes) != 64 {
		t.Fatalf("%d changes, want 64", len(changes))
	}
	for i := 1; i < len(changes); i++ {
		if Hash(changes[i-1].Entry.GUID()) > Hash(changes[i].Entry.GUID()) {
			t.Fatalf("change %d is of bucket %d, after one of bucket %d: not in bucket order", i, Hash(changes[i].Entry.GUID()), Hash(changes[i-1].Entry.GUID()))
		}
	}
	// The enables were the entries' only references: every entry is gone, every bucket
	// free, and a second stop finds nothing.
	if tab.Len() != 0 || tab.used.Load() != 0 || len(tab.DisableLogger(3)) != 0 {
		t.Fatalf("after the stop: %d entries, buckets in use %064b", tab.Len(), tab.used.Load())
	}
	if b := check(); len(b) != 0 {
		t.Fatalf("the emptied table broke %v", b)
	}

	// An entry in a bucket the mask does not mark: DisableLogger would pass it by. Check
	// reports the bucket and still checks and visits the entry.
	tab.Enable(provA, TraceGuid, EnableInfo{LoggerID: 4})
	tab.used.Store(0)
	var b []string
	visited := 0
	tab.Check(func(rule, detail string) { b = append(b, rule+": "+detail) }, func(*Entry, []Registration) { visited++ })
	if want := fmt.Sprintf("bucket-used: bucket %d holds entries and is not marked in use", Hash(provA)); len(b) != 1 || b[0] != want || visited != 1 {
		t.Fatalf("a bucket with an entry, not marked in use, was reported as %q and %d entries visited, want %q and 1", b, visited, want)
	}
	// A bucket marked in use that holds nothing.
	empty := (Hash(provA) + 1) % Buckets
	tab.used.Store(1<<Hash(provA) | 1<<empty)
	b = check()
	if want := fmt.Sprintf("bucket-used: bucket %d is marked in use and holds no entry", empty); len(b) != 1 || b[0] != want {
		t.Fatalf("an empty bucket marked in use was reported as %q, want %q", b, want)
	}
}

// TestSlotOutOfRange: an index that is not one of the eight slots panics, as an array
// index does, and never reads another slot's enablement.
func TestSlotOutOfRange(t *testing.T) {
	tab := New(winver.V2004)
	var e *Entry
	for id := uint16(1); id <= Slots; id++ {
		c, err := tab.Enable(provA, TraceGuid, EnableInfo{LoggerID: id})
		if err != nil {
			t.Fatal(err)
		}
		e = c.Entry
	}
	for i := range Slots {
		if e.Slot(i) == nil {
			t.Fatalf("slot %d is free after eight enables", i)
		}
	}
	for _, i := range []int{-1, -8, Slots, Slots + 1, math.MaxInt} {
		func() {
			defer func() { _ = recover() }()
			s := e.Slot(i)
			t.Errorf("Slot(%d) returned %v, want a panic", i, s)
		}()
	}
}

// TestUnknownTypeNamed: a GUID type that is none of ETW_GUID_TYPE's three is refused as
// such, by its number, not as a type some later Windows would know.
func TestUnknownTypeNamed(t *testing.T) {
	tab := New(winver.V2004)
	_, err := tab.Enable(provA, Type(7), EnableInfo{LoggerID: 1})
	if !errors.Is(err, winerr.ErrInvalidParameter) || !strings.Contains(err.Error(), "GUID type 7 is not an ETW_GUID_TYPE") {
		t.Errorf("Enable of type 7: %v", err)
	}
	if _, err := tab.Register(provA, Type(3), &fakeReg{}); err == nil || !strings.Contains(err.Error(), "GUID type 3 is not an ETW_GUID_TYPE") {
		t.Errorf("Register of type 3: %v", err)
	}
	if _, err := New(winver.V6_3).Register(provA, GroupGuid, &fakeReg{}); err == nil || !strings.Contains(err.Error(), "GUID type Group is not known to Windows") {
		t.Errorf("Register of a group on 6.3: %v", err)
	}
	if s := Type(9).String(); s != "GuidType(9)" {
		t.Errorf("Type(9) is %q", s)
	}
}

// TestNilArguments: a nil registration or entry is refused or reported, never a panic,
// and changes nothing.
func TestNilArguments(t *testing.T) {
	tab := New(winver.V2004)
	if e, err := tab.Register(provA, TraceGuid, nil); !errors.Is(err, winerr.ErrInvalidParameter) || e != nil || tab.Len() != 0 {
		t.Errorf("Register of a nil registration: %v, %v, %d entries", e, err, tab.Len())
	}
	r := &fakeReg{}
	e, err := tab.Register(provA, TraceGuid, r)
	if err != nil {
		t.Fatal(err)
	}
	if tab.Unregister(nil, r) || tab.Unregister(e, nil) {
		t.Error("Unregister of a nil entry or registration reported true")
	}
	if e.RefCount() != 1 || len(e.Registrations()) != 1 || tab.Len() != 1 {
		t.Errorf("after nil unregisters: refs %d, %d registrations, %d entries", e.RefCount(), len(e.Registrations()), tab.Len())
	}
}

// The index of held slots follows the enables and disables, so that a logger's stop
// visits the entries it holds a slot in and no others; Check reports an entry whose
// slot the index lost (a stop would leave it enabled).
func TestHeldIndex(t *testing.T) {
	tab := New(winver.V2004)
	held := func(id uint16) int {
		tab.heldMu.Lock()
		defer tab.heldMu.Unlock()
		return len(tab.held[id])
	}
	var gs []guid.GUID
	for i := range 100 {
		g := guid.FromName(fmt.Sprint("held-", i))
		gs = append(gs, g)
		if _, err := tab.Register(g, TraceGuid, &fakeReg{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, g := range gs[:3] {
		tab.Enable(g, TraceGuid, EnableInfo{LoggerID: 3})
		tab.Enable(g, TraceGuid, EnableInfo{LoggerID: 3, Level: 4}) // an update: still one slot
		tab.Enable(g, TraceGuid, EnableInfo{LoggerID: 5})
	}
	tab.Disable(gs[0], TraceGuid, 3)
	if held(3) != 2 || held(5) != 3 {
		t.Fatalf("logger 3 holds %d entries, logger 5 %d; want 2 and 3", held(3), held(5))
	}
	if c := tab.DisableLogger(3); len(c) != 2 || held(3) != 0 || held(5) != 3 {
		t.Fatalf("stop: %d changes, then logger 3 holds %d, logger 5 %d; want 2, 0, 3", len(c), held(3), held(5))
	}
	var broken []string
	tab.heldMu.Lock()
	delete(tab.held[5], tab.Lookup(gs[1], TraceGuid))
	tab.heldMu.Unlock()
	tab.Check(func(rule, detail string) { broken = append(broken, rule+": "+detail) }, nil)
	if len(broken) != 1 || !strings.HasPrefix(broken[0], "held-index: ") {
		t.Fatalf("Check reported %q, want one held-index", broken)
	}
}
