package benchsuite

import (
	"fmt"
	"strings"
	"testing"
)

// Result is one case's measurement.
type Result struct {
	Case
	testing.BenchmarkResult
}

// floorRuns is how many times Measure runs each floor case, keeping the fastest run. The
// floor is a lower bound, and every ratio of its payload and parallelism is taken
// against it: one run of it in a slow mode of the machine made a whole column of a table
// read 0.25 – 0.39 × the floor (bench/RESULTS.md, the table). The other rows run once.
const floorRuns = 3

// Measure runs each case with testing.Benchmark (so -test.benchtime applies), a floor
// case floorRuns times keeping the fastest, and calls progress before each case; it
// returns the results in order.
func Measure(cases []Case, progress func(i int, c Case)) []Result {
	return measure(cases, progress, testing.Benchmark)
}

// measure is Measure with the function that runs one benchmark.
func measure(cases []Case, progress func(i int, c Case), bench func(func(*testing.B)) testing.BenchmarkResult) []Result {
	out := make([]Result, 0, len(cases))
	for i, c := range cases {
		if progress != nil {
			progress(i, c)
		}
		r := Result{c, bench(c.Run)}
		for j := 1; c.Floor && j < floorRuns; j++ {
			if next := (Result{c, bench(c.Run)}); next.N > 0 && (r.N == 0 || next.NsPerOp() < r.NsPerOp()) {
				r = next
			}
		}
		out = append(out, r)
	}
	return out
}

// NsPerOp is the time per event, in nanoseconds.
func (r Result) NsPerOp() float64 {
	if r.N == 0 {
		return 0
	}
	return float64(r.T.Nanoseconds()) / float64(r.N)
}

// Table formats results as a Markdown table with, for every row that writes its events,
// its time per event against the floor's at the same payload and parallelism; a row
// whose events no session takes (Case.Unwritten) has its time per call, "none written"
// and no ratio.
func Table(results []Result) string {
	floor := map[string]float64{}
	key := func(c Case) string { return fmt.Sprint(c.Payload, c.Parallel) }
	for _, r := range results {
		if r.Floor {
			floor[key(r.Case)] = r.NsPerOp()
		}
	}
	var b strings.Builder
	b.WriteString("| benchmark | ns/op | MB/s | events/s | lost/op | B/op | allocs/op | × floor |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range results {
		ns := r.NsPerOp()
		mbs, evs, ratio := "", "", ""
		switch {
		case r.Unwritten:
			evs = "none written"
		case ns > 0:
			mbs = fmt.Sprintf("%.0f", float64(r.Payload)*1e3/ns)
			evs = fmt.Sprintf("%.1f M", 1e3/ns)
			if f := floor[key(r.Case)]; f > 0 {
				ratio = fmt.Sprintf("%.2f", ns/f)
			}
		}
		lost := ""
		if v, ok := r.Extra["lost/op"]; ok {
			lost = fmt.Sprintf("%.3g", v)
		}
		fmt.Fprintf(&b, "| `%s` | %.2f | %s | %s | %s | %d | %d | %s |\n",
			r.Name, ns, mbs, evs, lost, r.AllocedBytesPerOp(), r.AllocsPerOp(), ratio)
	}
	return b.String()
}
