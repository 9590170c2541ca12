package benchsuite

import (
	"strings"
	"testing"
	"time"
)

// The full suite covers every dimension the benchmark names promise, once each.
func TestFullSuiteNames(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Full() {
		if seen[c.Name] {
			t.Errorf("duplicate benchmark %s", c.Name)
		}
		seen[c.Name] = true
	}
	for _, want := range []string{
		"payload=16/sessions=1", "payload=4096/sessions=8/parallel", "payload=64/disabled",
		"payload=64/sessions=1/filtered", "payload=64/sessions=1/buffers=4KBx16",
		"payload=64/sessions=1/shared/parallel", "payload=512/floor", "payload=4096/chan/parallel",
	} {
		if !seen[want] {
			t.Errorf("suite has no %s", want)
		}
	}
}

// Ratios are to the floor of the same payload and parallelism.
func TestTableRatios(t *testing.T) {
	mk := func(name string, payload int, parallel, floor bool, ns time.Duration) Result {
		r := Result{Case: Case{Name: name, Payload: payload, Parallel: parallel, Floor: floor}}
		r.N, r.T = 1000, 1000*ns
		return r
	}
	off := mk("a/filtered", 64, false, false, 5)
	off.Unwritten = true
	table := Table([]Result{
		mk("a/floor", 64, false, true, 20), mk("a/emu", 64, false, false, 30),
		mk("a/floor/parallel", 64, true, true, 10), mk("a/emu/parallel", 64, true, false, 30), off,
	})
	for _, want := range []string{"| `a/emu` | 30.00 |", "| 1.50 |", "| `a/emu/parallel` | 30.00 |", "| 3.00 |",
		"| `a/filtered` | 5.00 |  | none written |  | 0 | 0 |  |"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "| 0.25 |") {
		t.Errorf("a row that writes nothing is compared with the floor:\n%s", table)
	}
}

// The cases whose events no session takes, and only those, are marked Unwritten: the
// disabled provider and the level the session filters out.
func TestUnwrittenCases(t *testing.T) {
	want := map[string]bool{
		"payload=64/disabled": true, "payload=64/disabled/parallel": true,
		"payload=64/sessions=1/filtered": true, "payload=64/sessions=1/filtered/parallel": true,
	}
	for _, c := range Full() {
		if c.Unwritten != want[c.Name] {
			t.Errorf("%s: Unwritten %v, want %v", c.Name, c.Unwritten, want[c.Name])
		}
		delete(want, c.Name)
	}
	for name := range want {
		t.Errorf("suite has no %s", name)
	}
}

// A floor case runs floorRuns times and keeps its fastest run; any other case runs once.
func TestMeasureKeepsFastestFloor(t *testing.T) {
	runs := map[string]int{}
	var current string
	times := map[string][]time.Duration{"floor": {30, 10, 20}, "emu": {50}}
	bench := func(func(*testing.B)) testing.BenchmarkResult {
		d := times[current][runs[current]]
		runs[current]++
		return testing.BenchmarkResult{N: 1000, T: 1000 * d}
	}
	cases := []Case{{Name: "floor", Floor: true}, {Name: "emu"}}
	got := measure(cases, func(i int, c Case) { current = c.Name }, bench)
	if runs["floor"] != floorRuns || runs["emu"] != 1 {
		t.Fatalf("runs %v, want the floor %d times and the emulator once", runs, floorRuns)
	}
	if got[0].NsPerOp() != 10 || got[1].NsPerOp() != 50 {
		t.Errorf("kept %.0f and %.0f ns/op, want the floor's fastest (10) and the emulator's one run (50)", got[0].NsPerOp(), got[1].NsPerOp())
	}
}
