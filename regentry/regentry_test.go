package regentry

import (
	"errors"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

func TestMasksFollowTheGuidTable(t *testing.T) {
	tab := guidtable.New(winver.V2004)
	g := guid.FromName("Prov")
	e := New(winver.V2004, Options{Flags: FlagUser | FlagModern})
	ge, err := tab.Register(g, guidtable.TraceGuid, e)
	if err != nil {
		t.Fatal(err)
	}
	e.Link(ge)
	if e.Masks() != 0 {
		t.Fatalf("fresh registration has masks %#x", e.Masks())
	}
	tab.Enable(g, guidtable.TraceGuid, guidtable.EnableInfo{LoggerID: 2})
	tab.Enable(g, guidtable.TraceGuid, guidtable.EnableInfo{LoggerID: 3})
	if e.EnableMask() != 0b11 {
		t.Fatalf("EnableMask %08b, want 00000011", e.EnableMask())
	}
	grp := guid.FromName("Group")
	gg, _ := tab.Register(grp, guidtable.GroupGuid, e)
	e.SetGroupEntry(gg)
	tab.Enable(grp, guidtable.GroupGuid, guidtable.EnableInfo{LoggerID: 9})
	if e.GroupEnableMask() != 1 || e.EnableMask() != 0b11 {
		t.Fatalf("group %08b enable %08b", e.GroupEnableMask(), e.EnableMask())
	}
	en, gr := RoutingMasks(e.Masks())
	if en != 0b11 || gr != 1 || e.HostEnableMask() != 0 || e.HostGroupEnableMask() != 0 {
		t.Fatal("routing masks wrong")
	}
	tab.Disable(g, guidtable.TraceGuid, 2)
	if e.EnableMask() != 0b10 {
		t.Fatalf("after disable %08b", e.EnableMask())
	}
	e.Close()
	if !e.Closed() || !IsClosedWord(e.Masks()) || e.EnableMask() != 0 {
		t.Fatal("close did not clear the masks and set the closed bit")
	}
	// A late update from the table must not reopen a closed registration.
	e.SetEnableMask(guidtable.TraceGuid, 0xFF)
	if e.EnableMask() != 0 {
		t.Fatal("closed registration took a mask")
	}
	if e.Flags()&FlagClosed == 0 || e.Flags()&FlagInserted != 0 {
		t.Fatalf("flags after close: %v", e.Flags())
	}
}

func TestFlagsByVersion(t *testing.T) {
	f := FlagUser | FlagModern | FlagClosed | FlagInserted | FlagWow64
	cases := []struct {
		v    winver.Version
		want uint16
	}{
		{winver.V6_1, 0x0002 | 0x1000 | 0x2000}, // no Modern or Wow64 yet; closed/inserted high
		{winver.V6_2, 0x0002 | 0x0020 | 0x0040 | 0x0080},
		{winver.V1511, 0x0002 | 0x0020 | 0x0040 | 0x0080},
		{winver.V1607, 0x0002 | 0x0020 | 0x0040 | 0x0080 | 0x0100},
	}
	for _, c := range cases {
		if got := f.Value(c.v); got != c.want {
			t.Errorf("Value(%v) = %#x, want %#x", c.v, got, c.want)
		}
	}
	if FlagModern.Known(winver.V6_1) || !FlagModern.Known(winver.V6_2) {
		t.Fatal("DbgModernRegistration boundary is not 6.2")
	}
	if FlagUseDescriptorType.Known(winver.V1703) || !FlagUseDescriptorType.Known(winver.V1709) {
		t.Fatal("DbgUseDescriptorType boundary is not 1709")
	}
	if s := (FlagKernel | FlagModern).String(); s != "DbgKernelRegistration|DbgModernRegistration" {
		t.Fatal(s)
	}
}

func TestTraitsParseAndDedup(t *testing.T) {
	grp := guid.FromName("MyGroup")
	blob := BuildTraits("MyProvider", GroupTrait(grp), Trait{Type: TraitTypeDecodeGUID, Data: make([]byte, 16)})
	tr, err := ParseTraits(blob)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Name != "MyProvider" || len(tr.Traits) != 2 {
		t.Fatalf("parsed %+v", tr)
	}
	if g, ok := tr.Group(); !ok || g != grp {
		t.Fatal("group GUID not found")
	}
	// A group trait is 2 + 1 + 16 = 19 bytes.
	if blob[2+len("MyProvider")+1] != 19 {
		t.Fatalf("TraitSize = %d, want 19", blob[2+len("MyProvider")+1])
	}
	var tt TraitsTable
	a, _ := tt.Acquire(blob)
	b, _ := tt.Acquire(append([]byte(nil), blob...))
	if a != b || tt.Len() != 1 || tt.Refs(a) != 2 {
		t.Fatal("equal blobs were not shared")
	}
	tt.Release(a)
	tt.Release(b)
	if tt.Len() != 0 {
		t.Fatal("blob kept after its last reference")
	}
	for name, bad := range map[string][]byte{
		"short":       {1},
		"total":       {9, 0, 'a', 0},
		"no nul":      {4, 0, 'a', 'b'},
		"trait size":  {7, 0, 'a', 0, 9, 0, 1},
		"group bytes": {9, 0, 'a', 0, 5, 0, 1, 1, 2},
	} {
		if _, err := ParseTraits(bad); !errors.Is(err, winerr.ErrInvalidParameter) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestReplySlotsAndQueue(t *testing.T) {
	user := New(winver.V2004, Options{Flags: FlagUser, Index: 1})
	reply := New(winver.V2004, Options{Flags: FlagReply, Index: 2})
	for i := 0; i < ReplySlots; i++ {
		if slot, err := user.HoldNotification(&Notification{Data: []byte{byte(i)}, ReplyTo: reply}); err != nil || slot != i {
			t.Fatalf("hold %d: slot %d, %v", i, slot, err)
		}
	}
	if _, err := user.HoldNotification(&Notification{ReplyTo: reply}); !errors.Is(err, winerr.ErrNoSystemResources) {
		t.Fatalf("fifth notification: %v", err)
	}
	if err := user.Reply(2, []byte("two")); err != nil {
		t.Fatal(err)
	}
	if err := user.Reply(2, nil); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatal("replied twice to one slot")
	}
	if user.PendingReplies() != 3 {
		t.Fatalf("pending %d", user.PendingReplies())
	}
	got, err := reply.ReceiveReplies()
	if err != nil || len(got) != 1 || string(got[0]) != "two" {
		t.Fatalf("replies %q, %v", got, err)
	}
	if _, err := user.ReceiveReplies(); err == nil {
		t.Fatal("a user registration has a reply queue")
	}
	if _, err := reply.HoldNotification(&Notification{ReplyTo: reply}); err == nil {
		t.Fatal("a reply registration held a notification")
	}
}

// TestTraitsRefusedBlobs: a name with a NUL, or traits too big for the 16-bit sizes, make
// no blob: EncodeTraits says why, and BuildTraits gives nothing that ParseTraits takes,
// rather than a blob whose name ends early or whose TotalSize wrapped.
func TestTraitsRefusedBlobs(t *testing.T) {
	grp := GroupTrait(guid.FromName("G"))
	for _, c := range []struct {
		what   string
		name   string
		traits []Trait
		want   string
	}{
		{"a NUL in the name", "X\x00" + string([]byte{19, 0, 1}) + string(grp.Data), nil, "holds a NUL at byte 1"},
		{"a name over 65,532 bytes", strings.Repeat("n", 0xFFFF-2), nil, "TotalSize, a 16-bit count"},
		{"a name and a group over 65,535 bytes", strings.Repeat("n", 0xFFFF-21), []Trait{grp}, "TotalSize, a 16-bit count"},
		{"a trait over 65,532 bytes", "p", []Trait{{Type: TraitTypeDecodeGUID, Data: make([]byte, 0xFFFF-2)}}, "TraitSize, a 16-bit count"},
		{"a group trait of 4 bytes", "p", []Trait{{Type: TraitTypeGroup, Data: make([]byte, 4)}}, "not a 16-byte GUID"},
	} {
		if b, err := EncodeTraits(c.name, c.traits...); !errors.Is(err, winerr.ErrInvalidParameter) || b != nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("EncodeTraits, %s: %d bytes, %v", c.what, len(b), err)
		}
		b := BuildTraits(c.name, c.traits...)
		if _, err := ParseTraits(b); b != nil || !errors.Is(err, winerr.ErrInvalidParameter) {
			t.Errorf("BuildTraits, %s: %d bytes, parsed with %v", c.what, len(b), err)
		}
	}
	// The longest name fits exactly, and reads back.
	long := strings.Repeat("n", 0xFFFF-3)
	b, err := EncodeTraits(long)
	if err != nil || len(b) != 0xFFFF {
		t.Fatalf("a name of 65,532 bytes: %d bytes, %v", len(b), err)
	}
	if tr, err := ParseTraits(b); err != nil || tr.Name != long || len(tr.Traits) != 0 {
		t.Errorf("a name of 65,532 bytes read back: %v", err)
	}
}
