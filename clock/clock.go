// Package clock provides the time sources a tracing session stamps events with, named
// after the ETW clock types (WNODE_HEADER.ClientContext, TRACE_LOGFILE_HEADER.ReservedFlags):
// QPC-like monotonic, system time and CPU cycles, plus a manual clock for deterministic
// tests and fuzzing.
//
// A Clock is a concrete value, not an interface, so the write path can read it without an
// interface call; Now switches on a small kind field.
package clock

import (
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/etwemu/etwemu/internal/hw"
)

// Type is an ETW clock type (EVENT_TRACE_CLOCK_*).
type Type uint32

// Clock types as StartTrace accepts them in Wnode.ClientContext.
const (
	QPC       Type = 1 // EVENT_TRACE_CLOCK_PERFCOUNTER: QueryPerformanceCounter, the default
	System    Type = 2 // EVENT_TRACE_CLOCK_SYSTEMTIME: FILETIME, 100 ns since 1601
	CPUCycles Type = 3 // EVENT_TRACE_CLOCK_CPUCYCLE: raw time-stamp counter
)

func (t Type) String() string {
	switch t {
	case QPC:
		return "QPC"
	case System:
		return "SystemTime"
	case CPUCycles:
		return "CPUCycle"
	}
	return fmt.Sprintf("ClockType(%d)", uint32(t))
}

// Valid reports whether t is one of the three ETW clock types.
func (t Type) Valid() bool { return t >= QPC && t <= CPUCycles }

type kind uint8

const (
	kindTSC      kind = iota // invariant TSC read with RDTSC
	kindMonotone             // time.Since(epoch) in the clock's units
	kindSystem               // time.Now() as FILETIME
	kindManual               // a Manual clock
)

// Clock is one session's time source. The zero value is not usable; call New or NewManual.
// A Clock is immutable after construction and safe for concurrent use.
type Clock struct {
	typ    Type
	kind   kind
	freq   int64 // ticks per second
	epoch  time.Time
	manual *Manual
	name   string
}

// FileTimeUnixEpoch is 1970-01-01 as a FILETIME: the 100 ns intervals since 1601-01-01.
const FileTimeUnixEpoch = 116444736000000000

// FileTime converts t to a Windows FILETIME value (100 ns units since 1601) over its whole
// range, as FromFileTime reads it back: a time before 1601 is negative, and one past
// what 64 bits hold (before about 27,000 BC or after 30,828 AD) takes the nearest end.
// Nanoseconds since 1970 in an int64 would end in 1678 and 2262.
func FileTime(t time.Time) int64 {
	s := t.Unix() + FileTimeUnixEpoch/1e7
	switch {
	case s > math.MaxInt64/10_000_000-1:
		return math.MaxInt64
	case s < math.MinInt64/10_000_000+1:
		return math.MinInt64
	}
	return s*1e7 + int64(t.Nanosecond()/100)
}

// FromFileTime converts a FILETIME value to a UTC time, the inverse of FileTime, over
// FILETIME's whole range (nanoseconds since 1970 in an int64 end in 2262).
func FromFileTime(ft int64) time.Time {
	return time.Unix(ft/1e7-FileTimeUnixEpoch/1e7, ft%1e7*100).UTC()
}

var (
	tscOnce sync.Once
	tscFreq int64
)

// TSCFrequency returns the time-stamp counter's frequency in Hz, measured once per process
// over 10 ms, or 0 when the machine has no invariant TSC.
func TSCFrequency() int64 {
	tscOnce.Do(func() { tscFreq = hw.TSCFrequency(10 * time.Millisecond) })
	return tscFreq
}

// New returns a real clock of type t.
//
// QPC and CPUCycles read the invariant time-stamp counter (about 12 ns on the reference
// machine) when the processor has one: Windows' QPC is itself TSC-derived on such
// machines, and its frequency is reported by Frequency. Without an invariant TSC they
// fall back to the monotonic clock in 100 ns (QPC) or 1 ns (CPUCycles) ticks. System
// reads time.Now as a FILETIME.
func New(t Type) (*Clock, error) {
	if !t.Valid() {
		return nil, fmt.Errorf("clock: unknown clock type %d (want 1 QPC, 2 system time, 3 CPU cycles)", uint32(t))
	}
	c := &Clock{typ: t, epoch: time.Now()}
	switch {
	case t == System:
		c.kind, c.freq, c.name = kindSystem, 10_000_000, "system time (FILETIME)"
	case hw.HasTSC() && TSCFrequency() > 0:
		c.kind, c.freq, c.name = kindTSC, TSCFrequency(), "invariant TSC (RDTSC)"
	case t == QPC:
		c.kind, c.freq, c.name = kindMonotone, 10_000_000, "monotonic clock, 100 ns ticks"
	default:
		c.kind, c.freq, c.name = kindMonotone, 1_000_000_000, "monotonic clock, 1 ns ticks"
	}
	return c, nil
}

// NewManual returns a clock of type t that reads m. Frequency reports freq.
func NewManual(t Type, m *Manual, freq int64) *Clock {
	return &Clock{typ: t, kind: kindManual, freq: freq, manual: m, epoch: time.Unix(0, 0), name: "manual"}
}

// Now returns the current time in the clock's ticks.
func (c *Clock) Now() int64 {
	switch c.kind {
	case kindTSC:
		return hw.TSC()
	case kindManual:
		return c.manual.read()
	case kindSystem:
		return FileTime(time.Now())
	}
	return int64(time.Since(c.epoch)) * c.freq / int64(time.Second)
}

// ReadsTSC reports whether Now is a plain read of the time-stamp counter (hw.TSC), so a
// hot path may read the counter itself and save the call and the switch.
func (c *Clock) ReadsTSC() bool { return c.kind == kindTSC }

// Type returns the ETW clock type the clock stands for.
func (c *Clock) Type() Type { return c.typ }

// Frequency returns ticks per second (the PerfFreq of a log file header).
func (c *Clock) Frequency() int64 { return c.freq }

// Source describes what the clock reads, for views and reports.
func (c *Clock) Source() string { return c.name }

// Manual is a clock that moves only when told to, for deterministic tests. Each read
// advances it by Step (0 means it stands still), so successive events get distinct,
// predictable timestamps.
type Manual struct {
	now  atomic.Int64 // atomic; written by Set, Advance and by reads when step != 0
	step int64        // immutable after NewManualSource
}

// NewManualSource returns a manual time source starting at start that advances by step on
// every read.
func NewManualSource(start, step int64) *Manual {
	m := &Manual{step: step}
	m.now.Store(start)
	return m
}

func (m *Manual) read() int64 {
	if m.step == 0 {
		return m.now.Load()
	}
	return m.now.Add(m.step) - m.step
}

// Set moves the clock to t.
func (m *Manual) Set(t int64) { m.now.Store(t) }

// Advance moves the clock forward by d ticks.
func (m *Manual) Advance(d int64) { m.now.Add(d) }

// Peek returns the time the next read will return, without advancing.
func (m *Manual) Peek() int64 { return m.now.Load() }
