package benchsuite

import (
	"encoding/xml"
	"fmt"
	"strings"
	"testing"
)

var samplePoints = []SweepPoint{
	{Writers: 1, Design: "emulator", NsPerEvent: 30, EventsPerSec: 1e9 / 30, SlowestNs: 32},
	{Writers: 1, Design: "floor", NsPerEvent: 13, EventsPerSec: 1e9 / 13, SlowestNs: 14},
	{Writers: 1, Design: "mutex", NsPerEvent: 20, EventsPerSec: 1e9 / 20, SlowestNs: 21},
	{Writers: 2, Design: "emulator", NsPerEvent: 15, EventsPerSec: 1e9 / 15, SlowestNs: 16},
	{Writers: 2, Design: "floor", NsPerEvent: 6.5, EventsPerSec: 1e9 / 6.5, SlowestNs: 7},
	{Writers: 2, Design: "mutex", NsPerEvent: 27, EventsPerSec: 1e9 / 27, SlowestNs: 28},
}

// The table has a row per writer count, a column per design, and the emulator's rate
// against its own with one writer.
func TestSweepTable(t *testing.T) {
	got := SweepTable(samplePoints)
	for _, want := range []string{
		"| writers | emulator M events/s | floor M events/s | mutex M events/s | emulator vs 1 writer |",
		"| 1 | 33.3 (31.2) | 76.9 (71.4) | 50.0 (47.6) | 1.00 × |",
		"| 2 | 66.7 (62.5) | 153.8 (142.9) | 37.0 (35.7) | 2.00 × |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
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
