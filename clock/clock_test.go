package clock

import (
	"math"
	"testing"
	"time"
)

func TestRealClocksAdvance(t *testing.T) {
	for _, typ := range []Type{QPC, System, CPUCycles} {
		c, err := New(typ)
		if err != nil {
			t.Fatal(err)
		}
		// The two readings are bracketed by the wall clock, so the bounds hold however long
		// a busy machine keeps this goroutine off a processor.
		t0 := time.Now()
		a := c.Now()
		time.Sleep(2 * time.Millisecond)
		b := c.Now()
		wall := time.Since(t0).Seconds()
		if b <= a {
			t.Fatalf("%v (%s) did not advance: %d then %d", typ, c.Source(), a, b)
		}
		// At least the 2 ms slept (less the system clock's 100 ns unit), at most the wall
		// time around both readings (plus 1% and 1 ms for the clocks' own error).
		elapsed := float64(b-a) / float64(c.Frequency())
		if elapsed < 0.0019 || elapsed > wall*1.01+0.001 {
			t.Fatalf("%v: 2 ms sleep measured as %.4f s within %.4f s of wall time (freq %d)", typ, elapsed, wall, c.Frequency())
		}
	}
}

func TestSystemClockIsFileTime(t *testing.T) {
	c, _ := New(System)
	before := FileTime(time.Now())
	now := c.Now()
	after := FileTime(time.Now())
	if now < before-10_000 || now > after+10_000 { // 1 ms either side for the clocks' resolution
		t.Fatalf("system clock %d is not between FILETIMEs %d and %d read around it", now, before, after)
	}
	// 2000-01-01T00:00:00Z is FILETIME 125911584000000000.
	if got := FileTime(time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)); got != 125911584000000000 {
		t.Fatalf("FileTime(2000-01-01) = %d", got)
	}
}

func TestManualSteps(t *testing.T) {
	m := NewManualSource(100, 10)
	c := NewManual(QPC, m, 10_000_000)
	if a, b := c.Now(), c.Now(); a != 100 || b != 110 {
		t.Fatalf("manual reads %d, %d; want 100, 110", a, b)
	}
	m.Advance(1000)
	if got := c.Now(); got != 1120 {
		t.Fatalf("after Advance: %d, want 1120", got)
	}
	still := NewManual(System, NewManualSource(5, 0), 1)
	if first, second := still.Now(), still.Now(); first != 5 || second != 5 {
		t.Fatalf("a zero-step manual clock read %d then %d", first, second)
	}
}

func TestUnknownType(t *testing.T) {
	if _, err := New(0); err == nil {
		t.Fatal("clock type 0 accepted")
	}
	if _, err := New(4); err == nil {
		t.Fatal("clock type 4 accepted")
	}
}

// The default clock must be cheap: compare each source with time.Now in the same run.
func BenchmarkClock(b *testing.B) {
	for _, typ := range []Type{QPC, System, CPUCycles} {
		c, _ := New(typ)
		b.Run(typ.String(), func(b *testing.B) {
			for b.Loop() {
				_ = c.Now()
			}
		})
	}
	b.Run("Manual", func(b *testing.B) {
		c := NewManual(QPC, NewManualSource(0, 1), 1)
		for b.Loop() {
			_ = c.Now()
		}
	})
	b.Run("baseline=time.Now", func(b *testing.B) {
		for b.Loop() {
			_ = time.Now()
		}
	})
}

// FromFileTime covers FILETIME's whole range: nanoseconds since 1970 in an int64 stop in
// 2262, and a FILETIME past that printed a year before 1970.
func TestFromFileTimeRange(t *testing.T) {
	for _, c := range []struct {
		ft   int64
		want time.Time
	}{
		{FileTime(time.Date(2026, 11, 26, 12, 0, 0, 300, time.UTC)), time.Date(2026, 11, 26, 12, 0, 0, 300, time.UTC)},
		{0, time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC)},
		{math.MaxInt64, time.Date(30828, 9, 14, 2, 48, 5, 477580700, time.UTC)},
		{FileTime(time.Date(2262, 4, 11, 23, 47, 16, 0, time.UTC)) + 1e7*3600*24*365, time.Date(2263, 4, 11, 23, 47, 16, 0, time.UTC)},
	} {
		if got := FromFileTime(c.ft); !got.Equal(c.want) {
			t.Errorf("FromFileTime(%d) = %v, want %v", c.ft, got, c.want)
		}
	}
}

// FileTime and FromFileTime round-trip every time FILETIME holds, to its 100 ns: the
// zero time.Time, 1601, and dates past 2262, where nanoseconds since 1970 in an int64
// end (etw.Time wrote year 1 as 1754 and 3000 as 1830).
func TestFileTimeRoundTrip(t *testing.T) {
	for _, tm := range []time.Time{
		{},
		time.Date(1601, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(1677, 1, 1, 0, 0, 0, 100, time.UTC),
		time.Date(2026, 11, 26, 21, 0, 0, 123456700, time.UTC),
		time.Date(2262, 6, 1, 0, 0, 0, 0, time.UTC),
		time.Date(3000, 1, 1, 0, 0, 0, 0, time.FixedZone("x", 3600)),
		time.Date(30828, 9, 14, 2, 48, 5, 477580700, time.UTC),
	} {
		if got := FromFileTime(FileTime(tm)); !got.Equal(tm) {
			t.Errorf("%v came back as %v (FILETIME %d)", tm, got, FileTime(tm))
		}
	}
	if FileTime(time.Date(40000, 1, 1, 0, 0, 0, 0, time.UTC)) != math.MaxInt64 || FileTime(time.Date(-40000, 1, 1, 0, 0, 0, 0, time.UTC)) != math.MinInt64 {
		t.Error("times past FILETIME's range do not take its ends")
	}
}
