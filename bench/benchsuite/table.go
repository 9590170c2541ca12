package benchsuite

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Result is one case's measurement: the run it reports (the median of its runs, or for
// a floor the fastest) and the time per event of every run.
type Result struct {
	Case
	testing.BenchmarkResult
	Runs []float64 // ns per event of each run, in the order run
}

// Runs is how many times Measure runs each case. The table reports the median run (a
// floor's fastest, since the floor is a lower bound: one run of it in a slow mode of the
// machine made a whole column of a table read 0.25 – 0.39 × the floor, bench/HISTORY.md)
// and the runs' spread, which says whether the row can be trusted.
const Runs = 3

// UnsteadyAt is the spread of a row's runs, (slowest − fastest) / fastest, past which
// Table marks the row unsteady rather than print a ratio to the floor: on the 2-core
// development machine the probe alone varied 17 – 69 % between runs (bench/HISTORY.md).
const UnsteadyAt = 0.25

// LossyAt is the share of a row's events lost (its lost/op) past which Table gives the
// row no ratio to the floor but the loss: its time per call mixes writes with cheaper
// refusals. Its events/s and MB/s count the accepted events only, whatever the loss.
const LossyAt = 0.01

// Measure runs each case Runs times with testing.Benchmark (so -test.benchtime applies)
// and calls progress before each case; it returns the results in order. Once ctx is done
// it runs no more (the run under way finishes) and returns the cases it measured whole.
func Measure(ctx context.Context, cases []Case, progress func(i int, c Case)) []Result {
	return measure(ctx, cases, progress, testing.Benchmark)
}

// measure is Measure with the function that runs one benchmark.
func measure(ctx context.Context, cases []Case, progress func(i int, c Case), bench func(func(*testing.B)) testing.BenchmarkResult) []Result {
	out := make([]Result, 0, len(cases))
	for i, c := range cases {
		if ctx.Err() != nil {
			break
		}
		if progress != nil {
			progress(i, c)
		}
		runs := make([]testing.BenchmarkResult, Runs)
		r := Result{Case: c, Runs: make([]float64, Runs)}
		for j := range runs {
			if ctx.Err() != nil {
				return out // this case is not whole
			}
			runs[j] = bench(c.Run)
			r.Runs[j] = Result{BenchmarkResult: runs[j]}.NsPerOp()
		}
		// The runs that timed something, fastest first: a floor reports the fastest,
		// any other case the median.
		var timed []int
		for j, t := range r.Runs {
			if t > 0 {
				timed = append(timed, j)
			}
		}
		slices.SortStableFunc(timed, func(a, b int) int { return cmp.Compare(r.Runs[a], r.Runs[b]) })
		pick := 0
		switch {
		case len(timed) == 0:
		case c.Floor:
			pick = timed[0]
		default:
			pick = timed[len(timed)/2]
		}
		r.BenchmarkResult = runs[pick]
		out = append(out, r)
	}
	return out
}

// Spread is the spread of the result's runs (see Spread).
func (r Result) Spread() float64 { return Spread(r.Runs) }

// NsPerOp is the time per event, in nanoseconds.
func (r Result) NsPerOp() float64 {
	if r.N == 0 {
		return 0
	}
	return float64(r.T.Nanoseconds()) / float64(r.N)
}

// Table formats results as a Markdown table with, for every row that writes its events,
// its time per event against the floor's at the same payload and parallelism, each
// row's spread over its runs, and a row whose runs (or whose floor's runs) disagree by
// more than UnsteadyAt marked unsteady instead of given a ratio that would mean nothing.
// A row whose events no session takes (Case.Unwritten) has its time per call, "none
// written" and no ratio. Under the table, one line per baseline says what it measures.
func Table(results []Result) string {
	floor := map[string]Result{}
	key := func(c Case) string { return fmt.Sprint(c.Payload, c.Parallel) }
	for _, r := range results {
		if r.Floor {
			floor[key(r.Case)] = r
		}
	}
	var b strings.Builder
	b.WriteString("| benchmark | ns/op | spread | MB/s | events/s | lost/op | B/op | allocs/op | × floor |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	var about []string // the baselines' lines, in the order they first appear
	seen := map[string]bool{}
	for _, r := range results {
		ns := r.NsPerOp()
		mbs, evs, ratio := "", "", ""
		switch {
		case r.Unwritten:
			evs = "none written"
		case ns > 0:
			// Events the sessions accepted: a call whose event was lost is cheaper than a
			// write, and counting it would make a session short of buffers look fast.
			accepted := 1 - min(1, r.Extra["lost/op"])
			mbs = fmt.Sprintf("%.0f", accepted*float64(r.Payload)*1e3/ns)
			evs = fmt.Sprintf("%.1f M", accepted*1e3/ns)
			if f, ok := floor[key(r.Case)]; ok && f.NsPerOp() > 0 {
				switch {
				case accepted < 1-LossyAt:
					ratio = fmt.Sprintf("lost %.0f %%", 100*(1-accepted))
				case r.Spread() > UnsteadyAt:
					ratio = "unsteady"
				case f.Spread() > UnsteadyAt:
					ratio = "unsteady floor"
				default:
					ratio = fmt.Sprintf("%.2f", ns/f.NsPerOp())
				}
			}
		}
		spread := ""
		if len(r.Runs) > 1 {
			spread = fmt.Sprintf("%.0f %%", 100*r.Spread())
		}
		lost := ""
		if v, ok := r.Extra["lost/op"]; ok {
			lost = fmt.Sprintf("%.3g", v)
		}
		fmt.Fprintf(&b, "| `%s` | %.2f | %s | %s | %s | %s | %d | %d | %s |\n",
			r.Name, ns, spread, mbs, evs, lost, r.AllocedBytesPerOp(), r.AllocsPerOp(), ratio)
		if r.Baseline != "" && !seen[r.Baseline] {
			seen[r.Baseline] = true
			about = append(about, fmt.Sprintf("- `%s`: %s", r.Baseline, r.About))
		}
	}
	if len(about) > 0 {
		b.WriteString("\nBaselines (what each row measures):\n\n")
		for _, l := range about {
			b.WriteString(l + "\n")
		}
	}
	fmt.Fprintf(&b, "\nEach row ran %d times: ns/op is the median run (a floor's fastest, as it is a lower bound),\nspread the runs' (slowest − fastest) / fastest. A row whose runs, or whose floor's, are more\nthan %.0f %% apart is \"unsteady\": the machine's speed moved, and a ratio would mean nothing.\n", Runs, 100*UnsteadyAt)
	return b.String()
}

// ProbeNs runs the machine probe on one goroutine once and returns its time a call (0 if
// it timed nothing): run before and after a suite, it shows whether the machine's speed
// moved meanwhile (Trailer).
func ProbeNs() float64 {
	return Measure(context.Background(), []Case{ProbeCase(false)}, nil)[0].NsPerOp()
}

// Trailer is what follows a suite's Table: the machine probe's times before and after
// the suite, and how to read the table.
func Trailer(before, after float64) string {
	probe := fmt.Sprintf("\nMachine probe (integer work alone, as BenchmarkProbe): %.1f ns before the suite, %.1f after,\n%.0f %% apart. Where they differ by more than a few percent, the machine's speed moved\nduring the run, and the rows with it.\n", before, after, 100*Spread([]float64{before, after}))
	if after == 0 {
		probe = fmt.Sprintf("\nMachine probe (integer work alone, as BenchmarkProbe): %.1f ns before the suite; not run after it.\n", before)
	}
	return probe +
		"\n× floor is the time per event against the floor's at the same payload and parallelism;\n" +
		"a row that lost more than 1 % of its events shows the loss instead. events/s and MB/s count\n" +
		"the events the sessions accepted.\n" +
		"Rows of \"none written\" time EventWrite calls whose events no session takes (a disabled\n" +
		"provider, a filtered level): ns/op is a call's, not compared with the floor, which writes.\n" +
		"For numbers to compare, use `go test -bench . -count 10 ./bench/` and benchstat.\n"
}
