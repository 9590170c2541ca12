package emu

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// extItems returns the extended items of every EVENT_HEADER record a sink received, and
// their payloads.
func extItems(t *testing.T, s *session.MemorySink) (items [][]etl.ExtItem, payloads []string) {
	t.Helper()
	if err := s.Events(func(_ []byte, r etl.Record) error {
		items = append(items, r.Ext)
		payloads = append(payloads, string(r.Payload))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return items, payloads
}

// TestEnablePropertyItems: a session that enables a provider with
// EVENT_ENABLE_PROPERTY_SID, _TS_ID, _STACK_TRACE, _PROCESS_START_KEY and _EVENT_KEY gets
// each event with those extended items, in type order and linked; a session that
// enables the same provider without them gets the same event without any; one asking
// for EVENT_KEY alone gets the same key as the first. Every write path takes them:
// EventWrite, EventWriteTransfer (the related activity id item first) and a provider
// group's member.
func TestEnablePropertyItems(t *testing.T) {
	k := newKernel(t, winver.V2004)
	all, sinkAll := startMem(t, k, "All", 0)
	none, sinkNone := startMem(t, k, "None", 0)
	keyed, sinkKey := startMem(t, k, "Key", 0)
	r, err := k.EventRegister(provA, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	props := uint32(guidtable.PropertySID | guidtable.PropertyTSID | guidtable.PropertyStackTrace |
		guidtable.PropertyProcessStartKey | guidtable.PropertyEventKey)
	for _, e := range []struct {
		h     TraceHandle
		props uint32
	}{{all, props}, {none, 0}, {keyed, guidtable.PropertyEventKey}} {
		if err := k.EnableTraceEx2(e.h, provA, regentry.ControlEnable, 5, 0, 0, &EnableParameters{EnableProperty: e.props}); err != nil {
			t.Fatal(err)
		}
	}
	d := &EventDescriptor{ID: 1, Level: 4}
	if err := k.EventWrite(r, d, []byte("plain")); err != nil {
		t.Fatal(err)
	}
	rel := guid.FromName("related")
	if err := k.EventWriteTransfer(r, d, nil, &rel, []byte("transfer")); err != nil {
		t.Fatal(err)
	}
	for _, h := range []TraceHandle{all, none, keyed} {
		if err := k.FlushTrace(h, "", &Properties{}); err != nil {
			t.Fatal(err)
		}
	}
	gotAll, payAll := extItems(t, sinkAll)
	gotNone, payNone := extItems(t, sinkNone)
	gotKey, _ := extItems(t, sinkKey)
	if len(gotAll) != 2 || len(gotNone) != 2 || len(gotKey) != 2 || payAll[0] != "plain" || payAll[1] != "transfer" || payNone[1] != "transfer" {
		t.Fatalf("records: %d, %d, %d (payloads %q, %q); want 2 each", len(gotAll), len(gotNone), len(gotKey), payAll, payNone)
	}
	if len(gotNone[0]) != 0 || len(gotNone[1]) != 1 || gotNone[1][0].Type != abi.ExtTypeRelatedActivityID {
		t.Errorf("the session without properties got items %+v, want none, then the related activity id", gotNone)
	}
	for i, items := range gotAll {
		want := []uint16{abi.ExtTypeSID, abi.ExtTypeTSID, abi.ExtTypeStackTrace64, abi.ExtTypeEventKey, abi.ExtTypeProcessStartKey}
		if i == 1 {
			want = append([]uint16{abi.ExtTypeRelatedActivityID}, want...)
		}
		var types []uint16
		byType := map[uint16][]byte{}
		for _, x := range items {
			types = append(types, x.Type)
			byType[x.Type] = x.Data
		}
		if !slices.Equal(types, want) {
			t.Fatalf("event %d: item types %v, want %v", i, types, want)
		}
		if !bytes.Equal(byType[abi.ExtTypeSID], localSystemSID) || binary.LittleEndian.Uint32(byType[abi.ExtTypeTSID]) != emulatedTerminalSession ||
			binary.LittleEndian.Uint64(byType[abi.ExtTypeProcessStartKey]) != startKeyBoot|uint64(k.pid) {
			t.Errorf("event %d: SID % x, TS_ID % x, PROCESS_START_KEY % x", i, byType[abi.ExtTypeSID], byType[abi.ExtTypeTSID], byType[abi.ExtTypeProcessStartKey])
		}
		var keyOnly []byte
		for _, x := range gotKey[i] {
			if x.Type == abi.ExtTypeEventKey {
				keyOnly = x.Data
			}
		}
		if key := binary.LittleEndian.Uint64(byType[abi.ExtTypeEventKey]); key != uint64(i+1) || !bytes.Equal(keyOnly, byType[abi.ExtTypeEventKey]) {
			t.Errorf("event %d: EVENT_KEY %d, and the key-only session's % x: want %d in both", i, key, keyOnly, i+1)
		}
		// The stack: MatchId 0, then return addresses, the test's own among them.
		stack := byType[abi.ExtTypeStackTrace64]
		if len(stack) < 16 || len(stack)%8 != 0 || binary.LittleEndian.Uint64(stack) != 0 || !stackHas(stack[8:], "TestEnablePropertyItems") {
			t.Errorf("event %d: stack of %d bytes does not reach the test", i, len(stack))
		}
	}
	// A provider group's member: the group's enablement asks for the items.
	group := guid.FromName("items.group")
	member, err := k.EventRegister(guid.FromName("items.member"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.EventSetInformation(member, EventProviderSetTraits, regentry.BuildTraits("B", regentry.GroupTrait(group))); err != nil {
		t.Fatal(err)
	}
	hg, sinkGroup := startMem(t, k, "Group", 0)
	if err := k.EnableTraceEx2(hg, group, regentry.ControlEnable, 5, 0, 0, &EnableParameters{EnableProperty: guidtable.PropertyProviderGroup | guidtable.PropertyEventKey}); err != nil {
		t.Fatal(err)
	}
	if err := k.EventWrite(member, d, []byte("member")); err != nil {
		t.Fatal(err)
	}
	if err := k.FlushTrace(hg, "", &Properties{}); err != nil {
		t.Fatal(err)
	}
	if got, pay := extItems(t, sinkGroup); len(got) != 1 || pay[0] != "member" || len(got[0]) != 1 || got[0][0].Type != abi.ExtTypeEventKey ||
		binary.LittleEndian.Uint64(got[0][0].Data) != 3 {
		t.Errorf("the group's session got %+v (%q), want one event with EVENT_KEY 3", got, pay)
	}
}

// TestEnablePropertyItemsOneSession: the one session of a provider asking for an item
// gets it on EventWrite's common path, whose cached route must not skip it, and after a
// re-enable without the property, no longer does.
func TestEnablePropertyItemsOneSession(t *testing.T) {
	k := routingKernel(t) // the time-stamp counter's clock: routes are cached
	h, sink := startMem(t, k, "One", 0)
	r, err := k.EventRegister(provA, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := &EventDescriptor{ID: 1, Level: 4}
	for _, props := range []uint32{guidtable.PropertySID, 0} {
		if err := k.EnableTraceEx2(h, provA, regentry.ControlEnable, 5, 0, 0, &EnableParameters{EnableProperty: props}); err != nil {
			t.Fatal(err)
		}
		for range 2 { // the second takes the route the first cached
			if err := k.EventWrite(r, d, []byte("x")); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := k.FlushTrace(h, "", &Properties{}); err != nil {
		t.Fatal(err)
	}
	got, _ := extItems(t, sink)
	if len(got) != 4 || len(got[0]) != 1 || len(got[1]) != 1 || got[1][0].Type != abi.ExtTypeSID || len(got[2]) != 0 || len(got[3]) != 0 {
		t.Errorf("items %+v, want a SID on the first two events and none after", got)
	}
}

// stackHas reports whether the return addresses in b (8 bytes each) lead into a
// function whose name contains name, the calls inlined at each address included.
func stackHas(b []byte, name string) bool {
	var pcs []uintptr
	for i := 0; i+8 <= len(b); i += 8 {
		pcs = append(pcs, uintptr(binary.LittleEndian.Uint64(b[i:])))
	}
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if strings.Contains(f.Function, name) {
			return true
		}
		if !more {
			return false
		}
	}
}

// An event whose session asks for extended items allocates nothing, a stack's included:
// its bytes go back to a pool once the sessions have copied them (releaseStack). A
// synchronous kernel, so that no logger goroutine allocates beside the writes
// AllocsPerRun counts; TestEnablePropertyItems checks what the items hold.
func TestItemsDoNotAllocate(t *testing.T) {
	k, err := New(Config{Version: winver.V2004, Processors: 1, Synchronous: true, FileSystem: &etl.MemFS{}})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	h, err := k.StartTrace("Items", &Properties{BufferSize: 64, MinimumBuffers: 4, MaximumBuffers: 4,
		LogFileMode: logmode.RealTime, Sink: session.Discard{}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := k.EventRegister(provA, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, data := &EventDescriptor{ID: 1, Level: 4}, make([]byte, 16)
	// The ids are locals of each call, as a caller's are: a write that kept them would
	// move them to the heap, an allocation an event.
	writes := []func() error{
		func() error { return k.EventWrite(r, d, data) },
		func() error {
			var activity, related guid.GUID
			return k.EventWriteTransfer(r, d, &activity, &related, data)
		},
		func() error {
			var activity guid.GUID
			return k.EventWriteEx(r, d, &WriteOptions{Processor: AnyProcessor, ActivityID: &activity}, data)
		},
	}
	for _, props := range []uint32{
		guidtable.PropertySID | guidtable.PropertyTSID | guidtable.PropertyProcessStartKey | guidtable.PropertyEventKey,
		guidtable.PropertySID | guidtable.PropertyStackTrace,
		guidtable.PropertyStackTrace,
	} {
		if err := k.EnableTraceEx2(h, provA, regentry.ControlEnable, 5, 0, 0, &EnableParameters{EnableProperty: props}); err != nil {
			t.Fatal(err)
		}
		for i, w := range writes {
			write := func() {
				if err := w(); err != nil {
					t.Fatal(err)
				}
			}
			write() // the route, the first buffer and the pool's first item
			if n := testing.AllocsPerRun(200, write); n != 0 {
				t.Errorf("EnableProperty %#x, write %d (EventWrite, EventWriteTransfer, EventWriteEx): %v allocations an event, want 0", props, i, n)
			}
		}
	}
}

// Each EVENT_ENABLE_PROPERTY_* bit has one row in propertySince, and EnableTraceEx2
// refuses a bit its version predates with ERROR_INVALID_PARAMETER, naming it, while the
// version that has it takes it.
func TestPropertiesByVersion(t *testing.T) {
	var seen uint32
	for _, p := range propertySince {
		if p.bit&(p.bit-1) != 0 || seen&p.bit != 0 {
			t.Errorf("row %#x: not one bit, or a second row for it", p.bit)
		}
		seen |= p.bit
	}
	if seen != guidtable.PropertyAll {
		t.Fatalf("propertySince covers %#x, want %#x", seen, guidtable.PropertyAll)
	}
	for _, c := range []struct {
		v     winver.Version
		props uint32
		want  string // "" for accepted
	}{
		{winver.V6_0, guidtable.PropertySID | guidtable.PropertyTSID | guidtable.PropertyStackTrace, ""},
		{winver.V6_3, guidtable.PropertyProcessStartKey, "EVENT_ENABLE_PROPERTY_PROCESS_START_KEY (0x80)"},
		{winver.V6_3, guidtable.PropertySID | guidtable.PropertyEventKey, "EVENT_ENABLE_PROPERTY_EVENT_KEY (0x100)"},
		{winver.V6_1, guidtable.PropertyIgnoreKeyword0, "EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0"},
		{winver.V6_2, guidtable.PropertyProviderGroup, "EVENT_ENABLE_PROPERTY_PROVIDER_GROUP"},
		{winver.V10_0, guidtable.PropertyProcessStartKey | guidtable.PropertyEventKey | guidtable.PropertyIgnoreKeyword0, ""},
	} {
		k := newKernel(t, c.v)
		h, _ := startMem(t, k, "Props", 0)
		err := k.EnableTraceEx2(h, provA, regentry.ControlEnable, 5, 0, 0, &EnableParameters{EnableProperty: c.props})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%v, %#x: %v, want it taken", c.v, c.props, err)
		case c.want != "" && (!errors.Is(err, winerr.ErrInvalidParameter) || !strings.Contains(fmt.Sprint(err), c.want)):
			t.Errorf("%v, %#x: %v, want ERROR_INVALID_PARAMETER naming %s", c.v, c.props, err, c.want)
		}
	}
}
