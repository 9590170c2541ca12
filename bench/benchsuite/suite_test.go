package benchsuite

import (
	"context"
	"slices"
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
	off := mk("a/filtered", 64, false, false, 5)
	off.Unwritten = true
	table := Table([]Result{
		mk("a/floor", 64, false, true, 20), mk("a/emu", 64, false, false, 30),
		mk("a/floor/parallel", 64, true, true, 10), mk("a/emu/parallel", 64, true, false, 30), off,
	})
	for _, want := range []string{"| `a/emu` | 30.00 | 0 % |", "| 1.50 |", "| `a/emu/parallel` | 30.00 | 0 % |", "| 3.00 |",
		"| `a/filtered` | 5.00 | 0 % |  | none written |  | 0 | 0 |  |"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Contains(table, "| 0.25 |") {
		t.Errorf("a row that writes nothing is compared with the floor:\n%s", table)
	}
}

// mk is a result of Runs runs of ns nanoseconds an event each, or of the times given.
func mk(name string, payload int, parallel, floor bool, ns time.Duration, runs ...float64) Result {
	r := Result{Case: Case{Name: name, Payload: payload, Parallel: parallel, Floor: floor}}
	r.N, r.T = 1000, 1000*ns
	if runs == nil {
		for range Runs {
			runs = append(runs, float64(ns))
		}
	}
	r.Runs = runs
	return r
}

// A row whose runs disagree by more than UnsteadyAt, or whose floor's runs do, is marked
// unsteady instead of given a ratio; its spread is printed either way.
func TestTableMarksUnsteadyRows(t *testing.T) {
	table := Table([]Result{
		mk("b/floor", 64, false, true, 20, 20, 21, 22),
		mk("b/steady", 64, false, false, 30, 29, 30, 31),
		mk("b/jumpy", 64, false, false, 30, 20, 30, 45),
		mk("b/floor/parallel", 64, true, true, 10, 10, 14, 20),
		mk("b/emu/parallel", 64, true, false, 30, 30, 30, 30),
	})
	for _, want := range []string{
		"| `b/steady` | 30.00 | 7 % |", "| 1.50 |",
		"| `b/jumpy` | 30.00 | 125 % |", "| unsteady |",
		"| `b/emu/parallel` | 30.00 | 0 % |", "| unsteady floor |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
	if strings.Count(table, "| 1.50 |") != 1 {
		t.Errorf("an unsteady row got a ratio:\n%s", table)
	}
}

// Every baseline row is explained once under the table, in the suite's order.
func TestTableExplainsBaselines(t *testing.T) {
	var results []Result
	for _, c := range append(Baselines(64, false), Baselines(64, true)...) {
		results = append(results, Result{Case: c, Runs: []float64{1, 1, 1}})
	}
	table := Table(results)
	last := 0
	for _, bl := range baselines {
		line := "- `" + bl.name + "`: " + bl.about
		if n := strings.Count(table, line); n != 1 {
			t.Errorf("the legend has %q %d times, want once:\n%s", line, n, table)
		}
		i := strings.Index(table, line)
		if i < last {
			t.Errorf("the legend's %s is out of the suite's order", bl.name)
		}
		last = i
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

// Every case runs Runs times; a floor keeps its fastest run, any other case its median,
// and a run that timed nothing is never reported while another did.
func TestMeasurePicksRuns(t *testing.T) {
	runs := map[string]int{}
	var current string
	times := map[string][]time.Duration{"floor": {30, 10, 20}, "emu": {50, 70, 40}, "empty": {0, 60, 0}}
	bench := func(func(*testing.B)) testing.BenchmarkResult {
		d := times[current][runs[current]]
		runs[current]++
		if d == 0 {
			return testing.BenchmarkResult{}
		}
		return testing.BenchmarkResult{N: 1000, T: 1000 * d}
	}
	cases := []Case{{Name: "floor", Floor: true}, {Name: "emu"}, {Name: "empty"}}
	got := measure(context.Background(), cases, func(i int, c Case) { current = c.Name }, bench)
	for _, c := range cases {
		if runs[c.Name] != Runs {
			t.Errorf("%s ran %d times, want %d", c.Name, runs[c.Name], Runs)
		}
	}
	if got[0].NsPerOp() != 10 || got[1].NsPerOp() != 50 || got[2].NsPerOp() != 60 {
		t.Errorf("kept %.0f, %.0f and %.0f ns/op, want the floor's fastest (10), the emulator's median (50) and the one run that timed (60)",
			got[0].NsPerOp(), got[1].NsPerOp(), got[2].NsPerOp())
	}
	if want := []float64{50, 70, 40}; !slices.Equal(got[1].Runs, want) {
		t.Errorf("runs %v, want %v in the order run", got[1].Runs, want)
	}
}

// A row that lost events counts only the accepted ones in events/s and MB/s, and past
// LossyAt shows its loss instead of a ratio to the floor.
func TestTableCountsAcceptedEvents(t *testing.T) {
	lossy := mk("b/lossy", 100, false, false, 10)
	lossy.Extra = map[string]float64{"lost/op": 0.5}
	clean := mk("b/clean", 100, false, false, 10)
	clean.Extra = map[string]float64{"lost/op": 0}
	table := Table([]Result{mk("b/floor", 100, false, true, 10), lossy, clean})
	for _, want := range []string{
		"| `b/lossy` | 10.00 | 0 % | 5000 | 50.0 M | 0.5 |", "| lost 50 % |",
		"| `b/clean` | 10.00 | 0 % | 10000 | 100.0 M | 0 |", "| 1.00 |",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q:\n%s", want, table)
		}
	}
}
