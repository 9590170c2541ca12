package layout

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/layout/internal/cells"
	"github.com/etwemu/etwemu/winver"
)

// ETW_REG_ENTRY reproduces Geoff Chappell's "ETW_REG_ENTRY" at each boundary of its table.
func TestRegEntrySeed(t *testing.T) {
	for _, w := range []struct {
		v              winver.Version
		sx86, sx64     int
		member         string
		offx86, offx64 int
		absent         string
	}{
		{winver.V6_1, 0x2C, 0x50, "EnableMask", 0x10, 0x1C, "GroupEntry"},
		{winver.V6_2, 0x28, 0x50, "EnableMask", 0x27, 0x4B, "Traits"},
		{winver.V6_3, 0x28, 0x50, "Index", 0x24, 0x48, "GroupEnableMask"},
		{winver.V10_0, 0x3C, 0x70, "EnableMask", 0x33, 0x63, "HostEnableMask"},
		{winver.V1511, 0x3C, 0x70, "UseDescriptorType", 0x35, 0x65, "HostEnableMask"},
		{winver.V1607, 0x3C, 0x70, "EnableMask", 0x34, 0x64, "HostEnableMask"},
		{winver.V1703, 0x3C, 0x70, "UseDescriptorType", 0x36, 0x66, "HostEnableMask"},
		{winver.V1709, 0x3C, 0x70, "GroupEnableMask", 0x35, 0x65, "UseDescriptorType"},
		{winver.V2004, 0x3C, 0x70, "HostGroupEnableMask", 0x37, 0x67, "UseDescriptorType"},
	} {
		x86, x64 := RegEntry.At(w.v, X86), RegEntry.At(w.v, X64)
		if x86.Size != w.sx86 || x64.Size != w.sx64 {
			t.Errorf("%v: sizes %#x/%#x, want %#x/%#x", w.v, x86.Size, x64.Size, w.sx86, w.sx64)
		}
		if a, b := x86.Offset(w.member), x64.Offset(w.member); a != w.offx86 || b != w.offx64 {
			t.Errorf("%v: %s at %#x/%#x, want %#x/%#x", w.v, w.member, a, b, w.offx86, w.offx64)
		}
		if _, ok := x64.Member(w.absent); ok {
			t.Errorf("%v has %s", w.v, w.absent)
		}
	}
	if w := RegEntry.At(winver.V5_2, X64); w.Exists || len(w.Members) != 0 {
		t.Fatal("5.2 has an ETW_REG_ENTRY")
	}
}

// ETW_PMC_SUPPORT reproduces every row of Geoff Chappell's "ETW_PMC_SUPPORT".
func TestPMCSupportSeed(t *testing.T) {
	for _, w := range []struct {
		vs   []winver.Version
		size [2]int
		src  string
		offs map[string][2]int
	}{
		{[]winver.Version{winver.V6_2, winver.V1607}, [2]int{0x24, 0x28}, "KPROFILE_SOURCE [4]",
			map[string][2]int{"HookIdCount": {0x10, 0x10}, "HookId": {0x14, 0x14}, "CountersCount": {0x1C, 0x1C}, "ProcessorCtrs": {0x20, 0x20}}},
		{[]winver.Version{winver.V1703, winver.V1809}, [2]int{0x34, 0x38}, "KPROFILE_SOURCE [8]",
			map[string][2]int{"HookIdCount": {0x20, 0x20}, "HookId": {0x24, 0x24}, "CountersCount": {0x2C, 0x2C}, "ProcessorCtrs": {0x30, 0x30}}},
		{[]winver.Version{winver.V1903, winver.V2004}, [2]int{0x18, 0x20}, "KPROFILE_SOURCE *",
			map[string][2]int{"HookIdCount": {0x04, 0x08}, "HookId": {0x08, 0x0C}, "CountersCount": {0x10, 0x14}, "ProcessorCtrs": {0x14, 0x18}}},
	} {
		for _, v := range w.vs {
			for a := X86; a <= X64; a++ {
				view := PMCSupport.At(v, a)
				src, _ := view.Member("Source")
				if view.Size != w.size[a] || src.Type != w.src || src.Off[a] != 0 {
					t.Errorf("%v %v: size %#x, Source %q at %#x", v, a, view.Size, src.Type, src.Off[a])
				}
				for name, off := range w.offs {
					if got := view.Offset(name); got != off[a] {
						t.Errorf("%v %v: %s at %#x, want %#x", v, a, name, got, off[a])
					}
				}
			}
		}
	}
	if PMCSupport.At(winver.V6_1, X64).Exists {
		t.Fatal("6.1 has an ETW_PMC_SUPPORT")
	}
}

// ETW_GUID_ENTRY reproduces Geoff Chappell's "ETW_GUID_ENTRY" table (x64 offsets, sizes on
// both), and each version's last member ends at the size where its type's size is plain.
func TestGuidEntryTable(t *testing.T) {
	for _, w := range []struct {
		v      winver.Version
		sizes  [2]int
		member string
		off    int
		absent string
	}{
		{winver.V6_0, [2]int{0x158, 0x170}, "EnableInfo", 0x70, "FilterData"},
		{winver.V6_1, [2]int{0x178, 0x1B0}, "FilterData", 0x170, "SiloState"},
		{winver.V6_2, [2]int{0x160, 0x178}, "LastEnable / MatchId", 0x40, "ServerSilo"},
		{winver.V10_0, [2]int{0x160, 0x180}, "ServerSilo", 0x178, "Lock"},
		{winver.V1511, [2]int{0x168, 0x190}, "LockOwner", 0x188, "HostEntry"},
		{winver.V1909, [2]int{0x168, 0x190}, "RefCount", 0x10, "SiloGuidList"},
		{winver.V2004, [2]int{0x178, 0x1A8}, "HostEntry", 0x190, "ServerSilo"},
		{winver.V2004, [2]int{0x178, 0x1A8}, "EnableInfo", 0x80, "LegacyEnableContext; LegacyProviderEnabled"},
	} {
		x86, x64 := GuidEntry.At(w.v, X86), GuidEntry.At(w.v, X64)
		if x86.Size != w.sizes[0] || x64.Size != w.sizes[1] {
			t.Errorf("%v: sizes %#x/%#x, want %#x/%#x", w.v, x86.Size, x64.Size, w.sizes[0], w.sizes[1])
		}
		if got := x64.Offset(w.member); got != w.off {
			t.Errorf("%v: %s at %#x, want %#x", w.v, w.member, got, w.off)
		}
		if _, ok := x64.Member(w.absent); ok {
			t.Errorf("%v has %s", w.v, w.absent)
		}
		if len(x86.Members) != 0 {
			t.Errorf("%v: x86 members %v, but the source gives no x86 offsets", w.v, x86.Members)
		}
	}
	if n := EnableInfo.At(winver.V6_1, X86); n.Size != 0x20 || n.Offset("MatchAllKeyword") != 0x18 {
		t.Errorf("TRACE_ENABLE_INFO: size %#x, MatchAllKeyword at %#x", n.Size, n.Offset("MatchAllKeyword"))
	}
}

// In every version and architecture of every structure: no two members share an offset
// unless they are one union, members are in offset order, and every member starts
// inside the structure's size.
func TestCatalogueConsistent(t *testing.T) {
	for _, s := range All() {
		for _, v := range winver.All() {
			for a := X86; a <= X64; a++ {
				w := s.At(v, a)
				for i, m := range w.Members {
					if m.Off[a] < 0 || m.Off[a] >= w.Size {
						t.Errorf("%s %v %v: %s at %#x outside size %#x", s.Name, v, a, m.Name, m.Off[a], w.Size)
					}
					if i > 0 {
						p := w.Members[i-1]
						if p.Off[a] == m.Off[a] && (p.Union == "" || p.Union != m.Union) {
							t.Errorf("%s %v %v: %s and %s both at %#x", s.Name, v, a, p.Name, m.Name, m.Off[a])
						}
					}
				}
			}
		}
		if len(s.Versions()) == 0 || s.Source == "" {
			t.Errorf("%s: no versions or no source", s.Name)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, name := range []string{"ETW_REG_ENTRY", "_etw_reg_entry", "nt!_ETW_REG_ENTRY", "Etw_Pmc_Support"} {
		if _, ok := Lookup(name); !ok {
			t.Errorf("Lookup(%q) found nothing", name)
		}
	}
	if _, ok := Lookup("ETW_NOTHING"); ok {
		t.Error("Lookup found ETW_NOTHING")
	}
}

// typeSize is the size of a catalogue type on an architecture, where the type is plain
// enough to know it; false for the rest (unions, structures the catalogue has not sized).
func typeSize(typ string, v winver.Version, a Arch) (int, bool) {
	ptr := 4
	if a == X64 {
		ptr = 8
	}
	t := strings.TrimSpace(strings.TrimSuffix(typ, " volatile"))
	if t == "[4 or 8 bytes]" {
		return ptr, true
	}
	if n, ok := strings.CutSuffix(strings.TrimPrefix(t, "["), " bytes]"); ok {
		size, err := strconv.Atoi(n)
		return size, err == nil
	}
	if base, count, ok := strings.Cut(t, "["); ok { // "ULONG [1]", "WMI_BUFFER_HEADER * [ANYSIZE_ARRAY]"
		n, err := strconv.Atoi(strings.TrimSuffix(count, "]"))
		if count == "ANYSIZE_ARRAY]" {
			n, err = 1, nil
		}
		size, known := typeSize(base, v, a)
		if err != nil || !known {
			return 0, false
		}
		return n * size, true
	}
	if strings.HasSuffix(t, "*") {
		return ptr, true
	}
	sizes := map[string][2]int{
		"UCHAR": {1, 1}, "BOOLEAN": {1, 1}, "USHORT": {2, 2}, "ULONG": {4, 4}, "LONG": {4, 4},
		"DWORD": {4, 4}, "LARGE_INTEGER": {8, 8}, "LONGLONG": {8, 8}, "ULONGLONG": {8, 8},
		"GUID": {16, 16}, "HANDLE": {4, 8}, "PVOID": {4, 8}, "LONG_PTR": {4, 8},
		"LIST_ENTRY": {8, 16}, "UNICODE_STRING": {8, 16}, "ETW_REF_CLOCK": {16, 16},
		"CRITICAL_SECTION": {0x18, 0x28}, "CONDITION_VARIABLE": {4, 8},
	}
	if s, ok := sizes[t]; ok {
		return s[a], true
	}
	if s, ok := Lookup(t); ok { // a structure of the catalogue: WNODE_HEADER, TRACE_ENABLE_INFO
		w := s.At(v, a)
		return w.Size, w.Exists
	}
	return 0, false
}

// In every version and architecture, a member whose type has a plain size ends before
// the next member starts (unless they are one union), and the last member ends within
// the structure's size, at most one alignment unit (8 bytes) before it.
func TestCatalogueMembersFit(t *testing.T) {
	checked := 0
	for _, s := range All() {
		for _, v := range winver.All() {
			for a := X86; a <= X64; a++ {
				w := s.At(v, a)
				for i, m := range w.Members {
					size, ok := typeSize(m.Type, v, a)
					if !ok {
						continue
					}
					end := m.Off[a] + size
					if i+1 < len(w.Members) {
						n := w.Members[i+1]
						if end > n.Off[a] && (m.Union == "" || m.Union != n.Union) {
							t.Errorf("%s %v %v: %s (%s) ends at %#x, after %s at %#x", s.Name, v, a, m.Name, m.Type, end, n.Name, n.Off[a])
						}
					} else if end > w.Size || w.Size-end >= 8 {
						t.Errorf("%s %v %v: last member %s ends at %#x, size %#x", s.Name, v, a, m.Name, end, w.Size)
					}
					checked++
				}
			}
		}
	}
	if checked < 1000 {
		t.Errorf("only %d members sized", checked)
	}
	t.Logf("%d members sized and fitted", checked)
}

// WMI_LOGGER_CONTEXT, WNODE_HEADER and EVENT_TRACE_PROPERTIES reproduce their sources
// (the build-19569 symbol header; wmistr.h and evntrace.h) at each kind of row.
func TestPublishedStructures(t *testing.T) {
	for _, w := range []struct {
		s      *Struct
		v      winver.Version
		a      Arch
		size   int
		offs   map[string]int
		absent bool
	}{
		{&LoggerContext, winver.V2004, X64, 0x550, map[string]int{"LoggerId": 0, "BufferQueue": 0x40, "LoggerName": 0x98,
			"ClockType": 0xD8, "EventsLost": 0x100, "ReferenceTime": 0x140, "LoggerEvent": 0x1D8, "PmcData": 0x3E8, "ScratchArray": 0x410}, false},
		{&LoggerContext, winver.V1909, X64, 0, nil, true},
		{&LoggerContext, winver.V2004, X86, 0, nil, true},
		{&WnodeHeader, winver.V6_1, X86, 0x30, map[string]int{"Guid": 0x18, "ClientContext": 0x28}, false},
		{&TraceProperties, winver.V2004, X64, 0x78, map[string]int{"BufferSize": 0x30, "AgeLimit": 0x4C, "LoggerThreadId": 0x68, "LogFileNameOffset": 0x70, "LoggerNameOffset": 0x74}, false},
		{&TraceProperties, winver.V5_0, X86, 0x78, map[string]int{"LoggerThreadId": 0x68, "LogFileNameOffset": 0x6C, "LoggerNameOffset": 0x70}, false},
	} {
		view := w.s.At(w.v, w.a)
		if view.Exists == w.absent || view.Size != w.size {
			t.Errorf("%s %v %v: exists %v, size %#x; want size %#x", w.s.Name, w.v, w.a, view.Exists, view.Size, w.size)
		}
		for name, off := range w.offs {
			if got := view.Offset(name); got != off {
				t.Errorf("%s %v %v: %s at %#x, want %#x", w.s.Name, w.v, w.a, name, got, off)
			}
		}
	}
	if n := len(All()); n < 10 {
		t.Errorf("the catalogue has %d structures; dt -list promises at least ten", n)
	}
}

// Every row of Geoff Chappell's "ETW_REG_ENTRY", its cells copied as the article writes
// them, holds in the catalogue at every version and architecture it names. A row of the
// article's second table names one arm of the union at the same place; arm matches it inside the
// catalogue's union row.
func TestRegEntryEverySeedRow(t *testing.T) {
	rows := []struct {
		name, x86, x64, versions string
		typ                      string // the catalogue's type where the article's differs by version; "" to skip
		arm                      bool
	}{
		{"RegList", "0x00", "0x00", "6.0 and higher", "LIST_ENTRY", false},
		{"GroupRegList", "0x08", "0x10", "10.0 and higher", "LIST_ENTRY", false},
		{"GuidEntry", "0x08 (6.0 to 6.3); 0x10", "0x10 (6.0 to 6.3); 0x20", "6.0 and higher", "ETW_GUID_ENTRY *", false},
		{"GroupEntry", "0x14", "0x28", "10.0 and higher", "ETW_GUID_ENTRY *", false},
		{"Index", "0x0C (6.0 to 6.1)", "0x18 (6.0 to 6.1)", "6.0 to 6.1", "USHORT", false},
		{"Flags", "0x0E (6.0 to 6.1)", "0x1A (6.0 to 6.1)", "6.0 to 6.1", "USHORT", false},
		{"EnableMask", "0x10 (6.0 to 6.1)", "0x1C (6.0 to 6.1)", "6.0 to 6.1", "UCHAR", false},
		{"ReplyQueue", "0x14 (6.0 to 6.1); 0x0C (6.2 to 6.3); 0x18", "0x20 (6.0 to 6.1); 0x18 (6.2 to 6.3); 0x30", "6.0 and higher", "union", true},
		{"Process", "0x24 (6.0 to 6.1); 0x1C (6.2 to 6.3); 0x28", "0x40 (6.0 to 6.1); 0x38 (6.2 to 6.3); 0x50", "6.0 and higher", "union", true},
		{"{Callback; CallbackContext}", "0x24 (6.0 to 6.1)", "0x40 (6.0 to 6.1)", "6.0 to 6.1", "union", true},
		{"{CallbackContext; Callback}", "0x1C (6.2 to 6.3); 0x28", "0x38 (6.2 to 6.3); 0x50", "6.2 and higher", "union", true},
		{"Index", "0x24 (6.2 to 6.3); 0x30", "0x48 (6.2 to 6.3); 0x60", "6.2 and higher", "USHORT", false},
		{"Flags", "0x26 (6.2 to 6.3); 0x32", "0x4A (6.2 to 6.3); 0x62", "6.2 to 1511", "UCHAR", false},
		{"Flags", "0x26 (6.2 to 6.3); 0x32", "0x4A (6.2 to 6.3); 0x62", "1607 and higher", "USHORT", false},
		{"EnableMask", "0x27 (6.2 to 6.3); 0x33 (10.0 to 1511); 0x34", "0x4B (6.2 to 6.3); 0x63 (10.0 to 1511); 0x64", "6.2 and higher", "UCHAR", false},
		{"GroupEnableMask", "0x34 (10.0 to 1511); 0x35", "0x64 (10.0 to 1511); 0x65", "10.0 and higher", "UCHAR", false},
		{"HostEnableMask", "0x36", "0x66", "2004 and higher", "UCHAR", false},
		{"HostGroupEnableMask", "0x37", "0x67", "2004 and higher", "UCHAR", false},
		{"UseDescriptorType", "0x35 (10.0 to 1511); 0x36 (1607 to 1703)", "0x65 (10.0 to 1511); 0x66 (1607 to 1703)", "10.0 to 1703", "BOOLEAN", false},
		{"Traits", "0x38", "0x68", "10.0 and higher", "ETW_PROVIDER_TRAITS *", false},
		// The article's second table: what the union holds.
		{"SessionId", "0x14 (6.1)", "0x20 (6.1)", "6.1 only", "union", true},
		{"ReplySlot[4]", "0x14 (6.0 to 6.1); 0x0C (6.2 to 6.3); 0x18", "0x20 (6.0 to 6.1); 0x18 (6.2 to 6.3); 0x30", "6.0 and higher", "union", true},
		{"{Caller; SessionId}", "0x0C (6.2 to 6.3); 0x18", "0x18 (6.2 to 6.3); 0x30", "6.2 and higher", "union", true},
	}
	checked := 0
	for _, r := range rows {
		vs, err := cells.Versions(r.versions)
		if err != nil {
			t.Fatal(err)
		}
		for a, cell := range [2]string{r.x86, r.x64} {
			offs, err := cells.Offsets(cell, vs)
			if err != nil {
				t.Fatal(err)
			}
			for v, want := range offs {
				found := false
				for _, m := range RegEntry.At(v, Arch(a)).Members {
					named := m.Name == r.name
					if r.arm {
						named = slices.Contains(strings.Split(m.Name, " / "), r.name)
					}
					if named && m.Off[a] == want && (r.typ == "" || m.Type == r.typ) {
						found = true
					}
				}
				if !found {
					t.Errorf("%s (%s) %v %v: not at %#x in the catalogue", r.name, r.typ, v, Arch(a), want)
				}
				checked++
			}
		}
	}
	for _, s := range []struct {
		versions string
		size     [2]int
	}{{"6.0 to 6.1", [2]int{0x2C, 0x50}}, {"6.2 to 6.3", [2]int{0x28, 0x50}}, {"10.0 to 2004", [2]int{0x3C, 0x70}}} {
		vs, _ := cells.Versions(s.versions)
		for _, v := range vs {
			if got := [2]int{RegEntry.At(v, X86).Size, RegEntry.At(v, X64).Size}; got != s.size {
				t.Errorf("%v: sizes %#x, article %#x", v, got, s.size)
			}
		}
	}
	if checked < 300 {
		t.Errorf("only %d offsets checked", checked)
	}
	t.Logf("%d rows of the ETW_REG_ENTRY article, %d offsets checked", len(rows), checked)
}

// A version the emulator does not know, or an architecture other than x86 and x64, has
// no layout: At says the structure does not exist rather than panic.
func TestAtOutOfRange(t *testing.T) {
	for _, c := range []struct {
		v winver.Version
		a Arch
	}{{0, X64}, {255, X64}, {winver.Default, -1}, {winver.Default, 2}} {
		if v := BufferHeader.At(c.v, c.a); v.Exists || v.Size != 0 || len(v.Members) != 0 {
			t.Errorf("At(%d, %d): %+v", c.v, c.a, v)
		}
	}
	if !BufferHeader.At(winver.Default, X64).Exists {
		t.Error("WMI_BUFFER_HEADER does not exist in the default version")
	}
}
