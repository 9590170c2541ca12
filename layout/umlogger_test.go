package layout

import (
	"strconv"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/layout/internal/cells"
	"github.com/etwemu/etwemu/winver"
)

// Every offset and size Geoff Chappell's "ETW_UM_LOGGER_CONTEXT" states, read from the
// generated umSeedRows and umSeedSizes, is the catalogue's, except in the cells umLost
// lists, where the published cell reads what umLost says it does (or is empty).
func TestUMLoggerContextSeed(t *testing.T) {
	used := make([]bool, len(umLost))
	lost := func(name string, a Arch, v winver.Version, cell string) bool {
		for i, l := range umLost {
			if l.name == name && l.arch == a && l.versions.Contains(v) {
				used[i] = true
				if !strings.HasSuffix(cell, l.published) || (l.published == "") != (cell == "") {
					t.Errorf("umLost[%d] says the published %s %v cell reads %q; it reads %q", i, name, a, l.published, cell)
				}
				return true
			}
		}
		return false
	}
	checked := 0
	for _, r := range umSeedRows {
		vs, err := cells.Versions(r.versions)
		if err != nil {
			t.Fatalf("%s: %v", r.def, err)
		}
		var vs64 []winver.Version
		for _, v := range vs {
			if v >= winver.V5_2 {
				vs64 = append(vs64, v)
			}
		}
		for a, cell := range [2]string{r.x86, r.x64} {
			if cell == "" { // lost from the published rendering: nothing stated
				if Arch(a) == X64 && !lost(r.name, X64, vs[0], cell) {
					t.Errorf("%s: the article has no x64 cell, and umLost does not say so", r.name)
				}
				continue
			}
			row := vs
			if Arch(a) == X64 {
				row = vs64
			}
			offs, err := cells.Offsets(cell, row)
			if err != nil {
				t.Fatalf("%s: %v", r.def, err)
			}
			for v, want := range offs {
				checked++
				got := UMLoggerContext.At(v, Arch(a)).Offset(r.name)
				if got != want && !lost(r.name, Arch(a), v, cell) {
					t.Errorf("%s %v %v: catalogue %#x, article %#x (%q)", r.name, v, Arch(a), got, want, cell)
				}
				if got == want && lost(r.name, Arch(a), v, cell) {
					t.Errorf("%s %v %v: listed as lost, but the catalogue reads the article's %#x", r.name, v, Arch(a), want)
				}
			}
		}
	}
	for i, u := range used {
		if !u {
			t.Errorf("umLost[%d] (%s %v %v) matches no cell of the article", i, umLost[i].name, umLost[i].arch, umLost[i].versions)
		}
	}
	if checked < 600 {
		t.Errorf("only %d offsets checked", checked)
	}
	t.Logf("%d offsets of the article checked, %d cells read as rebuilt", checked, len(umLost))
	for _, s := range umSeedSizes {
		vs, err := cells.Versions(s[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range vs {
			for a, cell := range [2]string{s[1], s[2]} {
				want := 0
				if cell != "" && (Arch(a) == X86 || v >= winver.V5_2) { // x64 starts with 5.2
					n, err := strconv.ParseInt(cell, 0, 32)
					if err != nil {
						t.Fatal(err)
					}
					want = int(n)
				}
				if got := UMLoggerContext.At(v, Arch(a)).Size; got != want {
					t.Errorf("%v %v: size %#x, seed %#x", v, Arch(a), got, want)
				}
			}
		}
	}
}

func TestCellsNotation(t *testing.T) {
	row, err := cells.Versions("5.0 to 5.2; not in 6.0; 6.1 and higher")
	if err != nil || row[0] != winver.V5_0 || row[3] != winver.V6_1 || row[len(row)-1] != winver.Newest {
		t.Fatalf("Versions: %v, %v", row, err)
	}
	offs, err := cells.Offsets("0x1C (5.0); 0x20 (5.1 to 5.2); not in 6.0; 0x1C", row)
	if err != nil {
		t.Fatal(err)
	}
	for v, want := range map[winver.Version]int{winver.V5_0: 0x1C, winver.V5_1: 0x20, winver.V5_2: 0x20, winver.V6_1: 0x1C, winver.V2004: 0x1C} {
		if offs[v] != want {
			t.Errorf("%v: %#x, want %#x", v, offs[v], want)
		}
	}
	if _, ok := offs[winver.V6_0]; ok {
		t.Error("6.0 has an offset")
	}
	for _, bad := range []string{"0x10; 0x14 (6.1)", "0x10 (6.1); 0x14 (6.1)", "0xZZ", "0x10 (7.0)"} {
		if _, err := cells.Offsets(bad, row); err == nil {
			t.Errorf("Offsets(%q) accepted", bad)
		}
	}
}
