package benchsuite

import (
	"context"
	"fmt"
	"html"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/bench/benchbase"
	"github.com/etwemu/etwemu/internal/quote"
)

// ScalingCases are the designs the processor sweep compares, each written from
// RunParallel goroutines with 64-byte events: the emulator (one session of the standard
// settings), the floor, the floor with recycled buffers and the mutex.
func ScalingCases() []Case {
	out := []Case{Emulator("payload=64/sessions=1", 64, true, standard)}
	for _, c := range Baselines(64, true) {
		switch designName(c) {
		case "floor", "floor+recycle", "mutex":
			out = append(out, c)
		}
	}
	return out
}

// probe is the machine probe's name among the sweep's cases (ProbeCase).
const probe = "probe"

// sweepCases are what each round of the sweep runs: the scaling cases and the probe.
func sweepCases() []Case { return append(ScalingCases(), ProbeCase(true)) }

// SweepRuns is how many measurements Sweep takes for these arguments, for progress.
func SweepRuns(writers []int, count int) int { return len(writers) * count * len(sweepCases()) }

// UpTo is the writer counts 1 to n, the sweep of every count up to n.
func UpTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

// ProbeCase is the machine probe (benchbase.Probe), on one goroutine or from
// RunParallel goroutines: no design, but what tells whether the machine's speed moved
// under the designs' runs.
func ProbeCase(parallel bool) Case {
	name := probe
	if parallel {
		name += "/parallel"
	}
	return Case{Name: name, Parallel: parallel, Unwritten: true, Run: func(b *testing.B) { benchbase.Probe(b, parallel) }}
}

// designName is the short name of a scaling case, for tables and charts: a baseline's
// own name (Case.Baseline), the probe, or the emulator.
func designName(c Case) string {
	switch {
	case c.Baseline != "":
		return c.Baseline
	case strings.HasPrefix(c.Name, "probe"):
		return probe
	}
	return "emulator"
}

// SweepPoint is one design's throughput at one number of writer goroutines: the median
// over the sweep's runs, with the slowest run beside it, and its time against the floor's
// of the same round.
type SweepPoint struct {
	Writers      int     `json:"writers"`
	Design       string  `json:"design"`
	NsPerEvent   float64 `json:"ns_per_event"`   // median, per call
	EventsPerSec float64 `json:"events_per_sec"` // median: the events accepted, calls whose event was lost left out
	SlowestNs    float64 `json:"slowest_ns_per_event"`
	Runs         int     `json:"runs"`
	// LostPerEvent is the median over the rounds of the share of calls whose event the
	// sessions lost (the emulator's lost/op; 0 for the baselines, which lose nothing).
	LostPerEvent float64 `json:"lost_per_event,omitempty"`
	// XFloor is the median, over the rounds where both were measured, of this design's
	// time an event divided by the floor's in the same round (0 if there was none). A
	// machine whose speed moves in steps moves both runs of a round together, so this
	// ratio holds steadier than the ratio of the two medians.
	XFloor float64 `json:"x_floor_same_round,omitempty"`
	// ProbeVar is how much the machine probe (benchsuite.ProbeCase, as many goroutines as
	// writers), run in every round, varied at this writer count: (slowest − fastest) /
	// fastest, the same for every design's point; 0 if it ran fewer than twice.
	ProbeVar float64 `json:"probe_var"`
}

// Sweep measures every scaling case with each count of writer goroutines in writers
// (GOMAXPROCS set to the count, RunParallel with parallelism 1), count times each, and
// returns the medians, in the order of writers. The runs go in rounds: each round measures every case once, and the machine
// probe, so that runs that are compared were taken seconds apart, not a design's whole
// series apart, and the probe's spread is that of the designs' time.
// progress, if not nil, is called before each measurement. GOMAXPROCS is restored at
// the end. Once ctx is done it measures no more (the run under way finishes) and
// returns the points of the writer counts with at least one whole round, from their
// whole rounds.
func Sweep(ctx context.Context, writers []int, count int, progress func(writers int, design string, run int)) []SweepPoint {
	saved := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(saved)
	var out []SweepPoint
	for _, w := range writers {
		runtime.GOMAXPROCS(w)
		cases := sweepCases()
		names := make([]string, len(cases))
		ns := make([][]float64, len(cases))   // by case, then round; 0 where a run timed nothing
		lost := make([][]float64, len(cases)) // the same runs' lost/op
		for i, c := range cases {
			names[i] = designName(c)
		}
		rounds := 0 // whole rounds
	measure:
		for run := 0; run < count; run++ {
			for i, c := range cases {
				if ctx.Err() != nil {
					break measure
				}
				if progress != nil {
					progress(w, names[i], run)
					if ctx.Err() != nil { // ended during progress: no run to throw away
						break measure
					}
				}
				r := Result{Case: c, BenchmarkResult: testing.Benchmark(c.Run)}
				ns[i] = append(ns[i], r.NsPerOp())
				lost[i] = append(lost[i], r.Extra["lost/op"])
			}
			rounds++
		}
		if rounds == 0 {
			break
		}
		for i := range cases {
			ns[i], lost[i] = ns[i][:rounds], lost[i][:rounds]
		}
		out = append(out, summarize(w, names, ns, lost)...)
		if ctx.Err() != nil {
			break
		}
	}
	return out
}

// summarize turns the times of one writer count's rounds (ns[case][round], 0 for a run
// that timed nothing), and their lost/op (lost[case][round]; nil for none), into a point
// per design that has any; the probe's runs give each point its ProbeVar.
func summarize(writers int, names []string, ns, lost [][]float64) []SweepPoint {
	floor := slices.Index(names, "floor")
	probeVar := 0.0
	if i := slices.Index(names, probe); i >= 0 {
		probeVar = Spread(ns[i])
	}
	var out []SweepPoint
	for i, name := range names {
		if name == probe {
			continue
		}
		var times, ratios []float64
		for round, t := range ns[i] {
			if t <= 0 {
				continue
			}
			times = append(times, t)
			if floor >= 0 && ns[floor][round] > 0 {
				ratios = append(ratios, t/ns[floor][round])
			}
		}
		if len(times) == 0 {
			continue
		}
		med, lostMed := median(times), 0.0
		if lost != nil {
			lostMed = min(1, median(slices.Clone(lost[i])))
		}
		out = append(out, SweepPoint{Writers: writers, Design: name, NsPerEvent: med,
			EventsPerSec: (1 - lostMed) * 1e9 / med, SlowestNs: slices.Max(times), Runs: len(times),
			LostPerEvent: lostMed, XFloor: median(ratios), ProbeVar: probeVar})
	}
	return out
}

// Spread is (slowest − fastest) / fastest over the times in v that are not 0 (runs that
// timed nothing), or 0 for fewer than two.
func Spread(v []float64) float64 {
	t := slices.DeleteFunc(slices.Clone(v), func(t float64) bool { return t <= 0 })
	if len(t) < 2 {
		return 0
	}
	lo := slices.Min(t)
	return (slices.Max(t) - lo) / lo
}

// median returns the median of v (the mean of the middle two for an even count), or 0
// for none. It sorts v.
func median(v []float64) float64 {
	n := len(v)
	if n == 0 {
		return 0
	}
	slices.Sort(v)
	if n%2 == 0 {
		return (v[n/2-1] + v[n/2]) / 2
	}
	return v[n/2]
}

// designs lists the designs in points, in the order they first appear.
func designs(points []SweepPoint) []string {
	return distinct(points, func(p SweepPoint) string { return p.Design })
}

// SweepTable renders points as a Markdown table: a row per writer count, M events/s per
// design (median, with the slowest run's rate in brackets), the emulator against itself
// with one writer, the emulator's time an event against the floor's of the same round
// (SweepPoint.XFloor), and how much the machine probe varied (SweepPoint.ProbeVar).
func SweepTable(points []SweepPoint) string {
	ds := designs(points)
	var b strings.Builder
	b.WriteString("| writers |")
	for _, d := range ds {
		fmt.Fprintf(&b, " %s M events/s |", d)
	}
	counts := writerCounts(points)
	first := 1
	if len(counts) > 0 {
		first = counts[0]
	}
	fmt.Fprintf(&b, " emulator vs %d writer%s | emulator × floor, same round | machine probe varied |\n|---:|", first, quote.S(first))
	for range ds {
		b.WriteString("---:|")
	}
	b.WriteString("---:|---:|---:|\n")
	var one float64
	var lossy []string
	for _, w := range counts {
		row := pointsAt(points, w)
		fmt.Fprintf(&b, "| %d |", w)
		ratio, xFloor, probeVar := "", "", ""
		for _, d := range ds {
			p, ok := row[d]
			if !ok {
				b.WriteString(" |")
				continue
			}
			if p.ProbeVar > 0 {
				probeVar = fmt.Sprintf("%.0f %%", 100*p.ProbeVar)
			}
			fmt.Fprintf(&b, " %.1f (%.1f) |", p.EventsPerSec/1e6, (1-p.LostPerEvent)*1e3/p.SlowestNs)
			if p.LostPerEvent > LossyAt {
				lossy = append(lossy, fmt.Sprintf("%s at %d writers lost %.0f %%", d, w, 100*p.LostPerEvent))
			}
			if d == "emulator" {
				if w == first {
					one = p.EventsPerSec
				}
				if one > 0 {
					ratio = fmt.Sprintf("%.2f ×", p.EventsPerSec/one)
				}
				if p.XFloor > 0 {
					xFloor = fmt.Sprintf("%.2f ×", p.XFloor)
				}
			}
		}
		fmt.Fprintf(&b, " %s | %s | %s |\n", ratio, xFloor, probeVar)
	}
	if len(lossy) > 0 {
		fmt.Fprintf(&b, "\nThe rates count the events the sessions accepted; %s of its events.\n", strings.Join(lossy, ", "))
	}
	return b.String()
}

func pointsAt(points []SweepPoint, writers int) map[string]SweepPoint {
	row := map[string]SweepPoint{}
	for _, p := range points {
		if p.Writers == writers {
			row[p.Design] = p
		}
	}
	return row
}

// writerCounts lists the writer counts points hold, in their order, each once.
func writerCounts(points []SweepPoint) []int {
	return distinct(points, func(p SweepPoint) int { return p.Writers })
}

// distinct lists key of each point, in the order they first appear, each once.
func distinct[K comparable](points []SweepPoint, key func(SweepPoint) K) []K {
	var out []K
	for _, p := range points {
		if k := key(p); !slices.Contains(out, k) {
			out = append(out, k)
		}
	}
	return out
}

// chartColors are the lines' colours, by design.
var chartColors = map[string]string{"emulator": "#d62728", "floor": "#2ca02c", "floor+recycle": "#9467bd", "mutex": "#1f77b4"}

// SweepSVG renders points as a line chart: events/s (millions) against writer
// goroutines, one line per design, with axes, grid lines and a legend. title goes above.
func SweepSVG(points []SweepPoint, title string) string {
	const w, h, left, right, top, bottom = 640.0, 400.0, 70.0, 150.0, 40.0, 50.0
	maxW, maxY := 1, 0.0
	for _, p := range points {
		maxW = max(maxW, p.Writers)
		maxY = max(maxY, p.EventsPerSec/1e6)
	}
	step := niceStep(maxY / 5)
	top5 := step * float64(int(maxY/step)+1)
	x := func(writers int) float64 {
		if maxW == 1 {
			return left + (w-left-right)/2
		}
		return left + float64(writers-1)/float64(maxW-1)*(w-left-right)
	}
	y := func(m float64) float64 { return h - bottom - m/top5*(h-top-bottom) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%g" height="%g" viewBox="0 0 %g %g" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%g" height="%g" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%g" y="22" font-size="14" font-weight="bold">%s</text>`+"\n", left, html.EscapeString(title))
	for v := 0.0; v <= top5+step/2; v += step {
		fmt.Fprintf(&b, `<line x1="%g" y1="%.1f" x2="%g" y2="%.1f" stroke="#ddd"/>`+"\n", left, y(v), w-right, y(v))
		fmt.Fprintf(&b, `<text x="%g" y="%.1f" text-anchor="end">%g</text>`+"\n", left-6, y(v)+4, v)
	}
	for n := 1; n <= maxW; n++ {
		fmt.Fprintf(&b, `<text x="%.1f" y="%g" text-anchor="middle">%d</text>`+"\n", x(n), h-bottom+18, n)
	}
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="black"/>`+"\n", left, h-bottom, w-right, h-bottom)
	fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="black"/>`+"\n", left, top, left, h-bottom)
	fmt.Fprintf(&b, `<text x="%g" y="%g" text-anchor="middle">writer goroutines</text>`+"\n", left+(w-left-right)/2, h-12)
	fmt.Fprintf(&b, `<text x="16" y="%g" text-anchor="middle" transform="rotate(-90 16 %g)">million events/s (64-byte events)</text>`+"\n", top+(h-top-bottom)/2, top+(h-top-bottom)/2)
	for i, d := range designs(points) {
		color := chartColors[d]
		if color == "" {
			color = "black"
		}
		var pts []string
		for _, p := range points {
			if p.Design == d {
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p.Writers), y(p.EventsPerSec/1e6)))
			}
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", color, strings.Join(pts, " "))
		for _, pt := range pts {
			xy := strings.Split(pt, ",")
			fmt.Fprintf(&b, `<circle cx="%s" cy="%s" r="3" fill="%s"/>`+"\n", xy[0], xy[1], color)
		}
		ly := top + 10 + float64(i)*20
		fmt.Fprintf(&b, `<line x1="%g" y1="%g" x2="%g" y2="%g" stroke="%s" stroke-width="2"/>`+"\n", w-right+14, ly, w-right+38, ly, color)
		fmt.Fprintf(&b, `<text x="%g" y="%g">%s</text>`+"\n", w-right+44, ly+4, d)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// niceStep rounds a grid step up to 1, 2 or 5 times a power of ten.
func niceStep(raw float64) float64 {
	if raw <= 0 {
		return 1
	}
	p := 1.0
	for p*10 <= raw {
		p *= 10
	}
	for p > raw {
		p /= 10
	}
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= raw {
			return m * p
		}
	}
	return 10 * p
}
