package benchsuite

import (
	"encoding/xml"
	"fmt"
	"math"
	"strings"
	"testing"
)

var samplePoints = []SweepPoint{
	{Writers: 1, Design: "emulator", NsPerEvent: 30, EventsPerSec: 1e9 / 30, SlowestNs: 32, XFloor: 2.25, ProbeVar: 0.04},
	{Writers: 1, Design: "floor", NsPerEvent: 13, EventsPerSec: 1e9 / 13, SlowestNs: 14, ProbeVar: 0.04},
	{Writers: 1, Design: "mutex", NsPerEvent: 20, EventsPerSec: 1e9 / 20, SlowestNs: 21, ProbeVar: 0.04},
	{Writers: 2, Design: "emulator", NsPerEvent: 15, EventsPerSec: 1e9 / 15, SlowestNs: 16, XFloor: 2.4},
	{Writers: 2, Design: "floor", NsPerEvent: 6.5, EventsPerSec: 1e9 / 6.5, SlowestNs: 7},
	{Writers: 2, Design: "mutex", NsPerEvent: 27, EventsPerSec: 1e9 / 27, SlowestNs: 28},
}

// The table has a row per writer count, a column per design, the emulator's rate
// against its own with one writer, its time against the floor's of the same round, and
// the machine probe's spread where it ran more than once.
func TestSweepTable(t *testing.T) {
	got := SweepTable(samplePoints)
	for _, want := range []string{
		"| writers | emulator M events/s | floor M events/s | mutex M events/s | emulator vs 1 writer | emulator × floor, same round | machine probe varied |",
		"|---:|---:|---:|---:|---:|---:|---:|",
		"| 1 | 33.3 (31.2) | 76.9 (71.4) | 50.0 (47.6) | 1.00 × | 2.25 × | 4 % |",
		"| 2 | 66.7 (62.5) | 153.8 (142.9) | 37.0 (35.7) | 2.00 × | 2.40 × |  |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
}

// A sweep of chosen writer counts (-writers 2,8) has a row for each, in order, and
// compares the emulator with its rate at the fewest writers measured.
func TestSweepTableOfChosenCounts(t *testing.T) {
	var pts []SweepPoint
	for _, p := range samplePoints {
		if p.Design == "emulator" {
			p.Writers *= 4 // 1 and 2 writers become 4 and 8
			pts = append(pts, p)
		}
	}
	got := SweepTable(pts)
	for _, want := range []string{"emulator vs 4 writers |", "| 4 | 33.3 (31.2) | 1.00 × |", "| 8 | 66.7 (62.5) | 2.00 × |"} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "| 1 |") || strings.Index(got, "| 4 |") > strings.Index(got, "| 8 |") {
		t.Errorf("rows are not the counts measured, in order:\n%s", got)
	}
}

// The chart is well-formed SVG with a line per design, a point per measurement, a
// legend, and higher throughput drawn higher.
func TestSweepSVG(t *testing.T) {
	svg := SweepSVG(samplePoints, "events/s against writers <test>")
	var doc struct {
		Polylines []struct {
			Points string `xml:"points,attr"`
			Stroke string `xml:"stroke,attr"`
		} `xml:"polyline"`
		Circles []struct{} `xml:"circle"`
		Texts   []string   `xml:"text"`
	}
	if err := xml.Unmarshal([]byte(svg), &doc); err != nil {
		t.Fatalf("not well-formed: %v\n%s", err, svg)
	}
	if len(doc.Polylines) != 3 || len(doc.Circles) != 6 {
		t.Fatalf("%d lines and %d points, want 3 and 6", len(doc.Polylines), len(doc.Circles))
	}
	for _, name := range []string{"emulator", "floor", "mutex", "writer goroutines", "events/s against writers <test>"} {
		found := false
		for _, s := range doc.Texts {
			found = found || s == name
		}
		if !found {
			t.Errorf("no text %q", name)
		}
	}
	// The emulator doubles from 1 to 2 writers: its second point is higher (smaller y).
	var x1, y1, x2, y2 float64
	if _, err := fmtSscan(doc.Polylines[0].Points, &x1, &y1, &x2, &y2); err != nil {
		t.Fatal(err)
	}
	if !(x2 > x1 && y2 < y1) {
		t.Errorf("emulator line %q does not rise to the right", doc.Polylines[0].Points)
	}
}

func TestNiceStep(t *testing.T) {
	for raw, want := range map[float64]float64{0: 1, 0.3: 0.5, 1: 1, 1.5: 2, 3: 5, 7: 10, 13: 20, 31: 50} {
		if got := niceStep(raw); got != want {
			t.Errorf("niceStep(%g) = %g, want %g", raw, got, want)
		}
	}
}

// fmtSscan reads "x1,y1 x2,y2" into the four floats.
func fmtSscan(points string, v ...*float64) (int, error) {
	return fmt.Sscanf(strings.ReplaceAll(points, ",", " "), "%g %g %g %g", v[0], v[1], v[2], v[3])
}

// The sweep compares the emulator with the floor, the floor with recycled buffers and the
// mutex, each under its own name.
func TestScalingCases(t *testing.T) {
	var got []string
	for _, c := range ScalingCases() {
		if !c.Parallel || c.Payload != 64 {
			t.Errorf("%s: parallel %v, payload %d; want RunParallel with 64 bytes", c.Name, c.Parallel, c.Payload)
		}
		got = append(got, designName(c))
	}
	if want := "emulator floor floor+recycle mutex"; strings.Join(got, " ") != want {
		t.Fatalf("designs %q, want %q", strings.Join(got, " "), want)
	}
}

// summarize pairs each run with the floor's of the same round: where the machine's speed
// steps between rounds, the ratio of the medians (here 24/15) misreads what the ratios of
// the rounds agree on (1.2). Runs that timed nothing count in neither.
func TestSummarizePairsRounds(t *testing.T) {
	names := []string{"emulator", "floor", "mutex"}
	ns := [][]float64{
		{12, 24, 24, 0},
		{10, 10, 20, 20},
		{30, 0, 40, 50},
	}
	got := summarize(2, names, ns, nil)
	want := []SweepPoint{
		{Writers: 2, Design: "emulator", NsPerEvent: 24, EventsPerSec: 1e9 / 24, SlowestNs: 24, Runs: 3, XFloor: 1.2},
		{Writers: 2, Design: "floor", NsPerEvent: 15, EventsPerSec: 1e9 / 15, SlowestNs: 20, Runs: 4, XFloor: 1},
		{Writers: 2, Design: "mutex", NsPerEvent: 40, EventsPerSec: 1e9 / 40, SlowestNs: 50, Runs: 3, XFloor: 2.5},
	}
	if len(got) != len(want) {
		t.Fatalf("summarize gave %d points, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.Design != w.Design || g.Writers != w.Writers || g.Runs != w.Runs ||
			!near(g.NsPerEvent, w.NsPerEvent) || !near(g.EventsPerSec, w.EventsPerSec) ||
			!near(g.SlowestNs, w.SlowestNs) || !near(g.XFloor, w.XFloor) {
			t.Errorf("point %d = %+v, want %+v", i, g, w)
		}
	}

	// Without a floor among the designs there is no ratio; a design that timed nothing
	// has no point.
	got = summarize(1, []string{"emulator", "mutex"}, [][]float64{{5, 7}, {0, 0}}, nil)
	if len(got) != 1 || got[0].XFloor != 0 || !near(got[0].NsPerEvent, 6) {
		t.Errorf("summarize without a floor = %+v, want one emulator point of 6 ns and no ratio", got)
	}
}

// The probe's runs give every point of their writer count the probe's spread, and no
// point of their own; runs that timed nothing do not count, and one run has no spread.
func TestSummarizeProbe(t *testing.T) {
	names := []string{"emulator", "floor", "probe"}
	ns := [][]float64{
		{20, 30, 22},
		{15, 24, 16},
		{300, 0, 450},
	}
	got := summarize(2, names, ns, nil)
	if len(got) != 2 {
		t.Fatalf("summarize gave %d points, want the emulator and the floor: %+v", len(got), got)
	}
	for _, p := range got {
		if p.Design == "probe" || !near(p.ProbeVar, 0.5) {
			t.Errorf("point %+v, want a design with ProbeVar 0.5", p)
		}
	}
	got = summarize(1, names, [][]float64{{20}, {15}, {300}}, nil)
	if len(got) != 2 || got[0].ProbeVar != 0 || got[1].ProbeVar != 0 {
		t.Errorf("one probe run: %+v, want no spread", got)
	}
}

// The sweep's rounds run the scaling cases and the probe, which SweepRuns counts.
func TestSweepCases(t *testing.T) {
	cs := sweepCases()
	if last := cs[len(cs)-1]; designName(last) != "probe" || !last.Parallel {
		t.Errorf("last sweep case %q (%s), want the probe from RunParallel goroutines", last.Name, designName(last))
	}
	if got, want := SweepRuns(UpTo(3), 5), 3*5*(len(ScalingCases())+1); got != want {
		t.Errorf("SweepRuns(UpTo(3), 5) = %d, want %d", got, want)
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

// Spread leaves out runs that timed nothing and does not reorder what it is given.
func TestSpread(t *testing.T) {
	v := []float64{0, 4, 2}
	if got := Spread(v); !near(got, 1) {
		t.Errorf("Spread(0, 4, 2) = %g, want 1", got)
	}
	if v[0] != 0 || v[1] != 4 || v[2] != 2 {
		t.Errorf("Spread changed its argument to %v", v)
	}
	if got := Spread([]float64{3, 0}); got != 0 {
		t.Errorf("Spread of one timed run = %g, want 0", got)
	}
}

// A design that lost events counts only the accepted ones in its rate, and the table
// says which points lost more than LossyAt.
func TestSweepCountsAcceptedEvents(t *testing.T) {
	names := []string{"emulator", "floor"}
	got := summarize(1, names, [][]float64{{10, 10, 10}, {10, 10, 10}}, [][]float64{{0.5, 0.4, 0.6}, {0, 0, 0}})
	if len(got) != 2 || got[0].LostPerEvent != 0.5 || got[0].EventsPerSec != 0.5e8 || got[1].EventsPerSec != 1e8 {
		t.Fatalf("summarize = %+v, want the emulator at half the floor's 100 M events/s, having lost half", got)
	}
	if table := SweepTable(got); !strings.Contains(table, "| 1 | 50.0 (50.0) | 100.0 (100.0) |") || !strings.Contains(table, "emulator at 1 writers lost 50 %") {
		t.Errorf("the table counts lost events or does not say so:\n%s", table)
	}
}
