package guidtable

import (
	"strings"
	"testing"
)

func pidData(pids ...uint32) []byte { return PIDFilter(pids...).Data }

func eventIDData(in bool, ids ...uint16) []byte { return EventIDFilter(in, ids...).Data }

func exeData(s string) []byte { return ExecutableNameFilter(s).Data }

// TestFilterAdmits: each filter type keeps what it names and drops the rest; an event
// passes only every filter set; a nil filter passes everything.
func TestFilterAdmits(t *testing.T) {
	f, unsupported, err := ParseFilters([]FilterDescriptor{
		{Type: FilterTypePID, Data: pidData(7, 9)},
		{Type: FilterTypeExecutableName, Data: exeData("svchost.exe; App.EXE")},
		{Type: FilterTypeEventID, Data: eventIDData(true, 12, 3)},
	})
	if err != nil || unsupported {
		t.Fatal(err, unsupported)
	}
	for _, c := range []struct {
		pid  uint32
		exe  string
		id   uint16
		want bool
	}{
		{7, "app.exe", 3, true}, {9, "SVCHOST.EXE", 12, true}, {8, "app.exe", 3, false},
		{7, "other.exe", 3, false}, {7, "app.exe", 4, false},
	} {
		if got := f.Admits(c.pid, c.exe, c.id); got != c.want {
			t.Errorf("Admits(%d, %q, %d) = %v, want %v", c.pid, c.exe, c.id, got, c.want)
		}
	}
	out, _, err := ParseFilters([]FilterDescriptor{{Type: FilterTypeEventID, Data: eventIDData(false, 1, 2)}})
	if err != nil || out.Admits(1, "", 1) || out.Admits(1, "", 2) || !out.Admits(1, "", 3) {
		t.Errorf("an EVENT_ID filter with FilterIn false must drop ids 1 and 2 only (%v)", err)
	}
	var none *Filter
	if !none.Admits(1, "x", 1) {
		t.Error("a nil filter dropped an event")
	}
	if f, _, err := ParseFilters(nil); f != nil || err != nil {
		t.Errorf("no descriptors gave %v, %v; want nil, nil", f, err)
	}
}

// TestParseFiltersRefuses: the rules of EnableTraceEx2's descriptors, each broken once.
func TestParseFiltersRefuses(t *testing.T) {
	many := make([]FilterDescriptor, MaxFilters+1)
	for i := range many {
		many[i] = FilterDescriptor{Type: FilterTypePID + uint32(i)<<20, Data: pidData(1)}
	}
	ids := make([]uint16, MaxFilterEventIDs+1)
	for _, c := range []struct {
		name        string
		descs       []FilterDescriptor
		unsupported bool
		says        string
	}{
		{"too many", many, false, "MAX_EVENT_FILTERS_COUNT"},
		{"a type twice", []FilterDescriptor{{FilterTypePID, pidData(1)}, {FilterTypePID, pidData(2)}}, false, "twice"},
		{"no pid", []FilterDescriptor{{FilterTypePID, nil}}, false, "EVENT_FILTER_TYPE_PID"},
		{"nine pids", []FilterDescriptor{{FilterTypePID, pidData(1, 2, 3, 4, 5, 6, 7, 8, 9)}}, false, "EVENT_FILTER_TYPE_PID"},
		{"a pid cut", []FilterDescriptor{{FilterTypePID, []byte{1, 0, 0}}}, false, "EVENT_FILTER_TYPE_PID"},
		{"no event id", []FilterDescriptor{{FilterTypeEventID, eventIDData(true)}}, false, "Count 0"},
		{"65 event ids", []FilterDescriptor{{FilterTypeEventID, eventIDData(true, ids...)}}, false, "Count 65"},
		{"an event id head cut", []FilterDescriptor{{FilterTypeEventID, []byte{1, 0}}}, false, "head"},
		{"a count past the data", []FilterDescriptor{{FilterTypeEventID, eventIDData(true, 1, 2)[:6]}}, false, "Count 2"},
		{"no executable", []FilterDescriptor{{FilterTypeExecutableName, exeData(" ; ")}}, false, "no executable"},
		{"odd executable bytes", []FilterDescriptor{{FilterTypeExecutableName, []byte{'a'}}}, false, "UTF-16"},
		{"a payload filter", []FilterDescriptor{{0x80000100, []byte{1}}}, true, "not emulated"},
	} {
		f, unsupported, err := ParseFilters(c.descs)
		if f != nil || err == nil || unsupported != c.unsupported || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, unsupported %v, %v; want an error saying %q", c.name, f, unsupported, err, c.says)
		}
	}
}

// TestParseFiltersBounds: an executable name list over MAX_EVENT_FILTER_DATA_SIZE and
// one with an unpaired surrogate are refused; a surrogate pair is a name like another.
// Admits compares names without allocating.
func TestParseFiltersBounds(t *testing.T) {
	big := exeData(strings.Repeat("a", MaxFilterDataSize) + ".exe")
	if _, _, err := ParseFilters([]FilterDescriptor{{FilterTypeExecutableName, big}}); err == nil || !strings.Contains(err.Error(), "at most") {
		t.Errorf("%d bytes of names: %v, want a refusal", len(big), err)
	}
	lone := []byte{0x00, 0xD8, 'a', 0, 0, 0}
	if _, _, err := ParseFilters([]FilterDescriptor{{FilterTypeExecutableName, lone}}); err == nil || !strings.Contains(err.Error(), "surrogate") {
		t.Errorf("an unpaired surrogate: %v, want a refusal", err)
	}
	f, _, err := ParseFilters([]FilterDescriptor{{FilterTypeExecutableName, exeData("\U0001F600.exe;MyService.exe")}})
	if err != nil || !f.Admits(1, "\U0001F600.EXE", 1) {
		t.Fatalf("a name with a surrogate pair: %v", err)
	}
	if n := testing.AllocsPerRun(100, func() { f.Admits(1, "MyService.exe", 1) }); n != 0 || !f.Admits(1, "MyService.exe", 1) {
		t.Errorf("Admits of a name with capitals: %v allocations, want 0 and admitted", n)
	}
}
