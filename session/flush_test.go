package session

import (
	"math"
	"testing"
	"time"

	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/winver"
)

// TestFlushDefault checks each session kind's timed flush against EVENT_TRACE_PROPERTIES'
// FlushTimer: a real-time session with FlushTimer 0 flushes every second, any session with
// FlushTimer N every N seconds (N ms with EVENT_TRACE_USE_MS_FLUSH_TIMER), a file or
// buffering session with FlushTimer 0 never. Elapsed time is counted in ticks of the
// session's manual clock (10 MHz).
func TestFlushDefault(t *testing.T) {
	const second = 10_000_000
	never := int64(math.MaxInt64)
	for _, c := range []struct {
		name  string
		mode  uint32
		timer uint32
		want  time.Duration
		due   int64 // the first elapsed tick count that is due
	}{
		{"real-time, FlushTimer 0", logmode.RealTime, 0, time.Second, second},
		{"real-time, FlushTimer 3", logmode.RealTime, 3, 3 * time.Second, 3 * second},
		{"real-time, ms, FlushTimer 0", logmode.RealTime | logmode.MSFlushTimer, 0, time.Second, second},
		{"real-time, ms, FlushTimer 250", logmode.RealTime | logmode.MSFlushTimer, 250, 250 * time.Millisecond, second / 4},
		{"real-time and file, FlushTimer 0", logmode.RealTime | logmode.Sequential, 0, time.Second, second},
		{"file, FlushTimer 0", logmode.Sequential, 0, 0, never},
		{"file, FlushTimer 2", logmode.Sequential, 2, 2 * time.Second, 2 * second},
		{"buffering, FlushTimer 0", logmode.Buffering, 0, 0, never},
	} {
		for _, v := range []winver.Version{winver.V6_1, winver.V2004} {
			p := Properties{LogFileMode: c.mode, FlushTimer: c.timer, BufferSize: 4, MinimumBuffers: 4, MaximumBuffers: 8}
			if c.mode&logmode.Sequential != 0 {
				p.LogFileName = "flush.etl"
			}
			a, err := Adjust(v, 1, "flush", &p)
			if err != nil {
				t.Fatalf("%s on %s: %v", c.name, v, err)
			}
			l := mustStart(t, Config{Version: v, ID: 3, Name: "flush", Processors: 1, Synchronous: true, FileSystem: &etl.MemFS{},
				Clock: clock.NewManual(clock.QPC, clock.NewManualSource(1, 0), second), Props: p, Adjusted: a})
			if got := l.FlushInterval(); got != c.want {
				t.Errorf("%s on %s: FlushInterval() = %v, want %v", c.name, v, got, c.want)
			}
			if c.due != never && (l.flushDue(c.due-1) || !l.flushDue(c.due)) {
				t.Errorf("%s on %s: flushDue(%d) = %v, flushDue(%d) = %v; want due from %d ticks", c.name, v, c.due-1, l.flushDue(c.due-1), c.due, l.flushDue(c.due), c.due)
			}
			if c.due == never && l.flushDue(never) {
				t.Errorf("%s on %s: a timed flush is due", c.name, v)
			}
			l.Stop()
		}
	}
}

func TestTicksIn(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		freq int64
		want int64
	}{
		{time.Second, 10_000_000, 10_000_000},
		{time.Millisecond, 3_000_000_000, 3_000_000},
		{math.MaxUint32 * time.Second, 10_000_000, math.MaxUint32 * 10_000_000},
		{math.MaxUint32 * time.Second, 10_000_000_000, math.MaxInt64},
		{0, 10, 0},
		{time.Second, 0, 0},
	} {
		if got := ticksIn(c.d, c.freq); got != c.want {
			t.Errorf("ticksIn(%v, %d) = %d, want %d", c.d, c.freq, got, c.want)
		}
	}
}
