package clock

import (
	"testing"
	"time"
)

func TestRealClocksAdvance(t *testing.T) {
	for _, typ := range []Type{QPC, System, CPUCycles} {
		c, err := New(typ)
		if err != nil {
			t.Fatal(err)
		}
		a := c.Now()
		time.Sleep(2 * time.Millisecond)
		b := c.Now()
		if b <= a {
			t.Fatalf("%v (%s) did not advance: %d then %d", typ, c.Source(), a, b)
		}
		// 2 ms must show up as roughly 2 ms worth of ticks (generous bounds for a busy machine).
		elapsed := float64(b-a) / float64(c.Frequency())
		if elapsed < 0.0015 || elapsed > 0.5 {
			t.Fatalf("%v: 2 ms sleep measured as %.4f s (freq %d)", typ, elapsed, c.Frequency())
		}
	}
}

func TestSystemClockIsFileTime(t *testing.T) {
	c, _ := New(System)
	now := c.Now()
	want := FileTime(time.Now())
	if d := want - now; d < 0 || d > 10_000_000 {
		t.Fatalf("system clock %d is not within 1 s of FILETIME %d", now, want)
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
