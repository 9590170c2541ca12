// Package benchsuite defines etwemu's write benchmark suite once, for the three places
// that run it: `go test -bench` in bench/, `etwemu bench`, and the peers module in
// bench/peers, which adds other loggers to the same run.
package benchsuite

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/etwemu/etwemu/bench/benchbase"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/internal/hw"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
)

// Case is one benchmark: its name under BenchmarkWrite, the payload and parallelism it
// is compared at, and whether it is a baseline (the floor, the ratios' denominator).
type Case struct {
	Name     string
	Payload  int
	Parallel bool
	Floor    bool // the floor baseline for this payload and parallelism
	// Baseline names the baseline a case is (floor, mutex, ..., or a logger bench/peers
	// compares with; "" for the emulator's cases), and About says in one line what it
	// measures, for the table's legend.
	Baseline, About string
	// Unwritten: no session takes the case's events (a disabled provider, a level the
	// session filters out), so nothing is written. Its rate is of calls (calls/s, no
	// MB/s), and Table does not compare it with the floor, which writes every event.
	Unwritten bool
	Run       func(b *testing.B)
}

// Sessions describes the sessions an emulator case writes to.
type Sessions struct {
	Count    int    // sessions enabling the provider
	BufferKB uint32 // BufferSize
	Min, Max uint32 // MinimumBuffers, MaximumBuffers
	Shared   bool   // EVENT_TRACE_NO_PER_PROCESSOR_BUFFERING
	Level    uint8  // level the sessions enable; events are written at level 4
	Disabled bool   // register the provider but enable nothing
	// PMC, if not nil, is the counter source of a TotalCycles counter list set on every
	// session; PMCSelect selects the written events' id (else another id is selected,
	// and what is measured is the check alone).
	PMC       pmc.Source
	PMCSelect bool
}

// standard is the session every case uses unless it varies one setting: 64 KB buffers,
// 64 to 256 of them, level 5, per-processor buffering, a discarding sink.
var standard = Sessions{Count: 1, BufferKB: 64, Min: 64, Max: 256, Level: 5}

// setup builds a kernel with the sessions s and returns it with the provider's
// registration.
func setup(b *testing.B, s Sessions) (*emu.Kernel, *emu.Registration) {
	k, err := emu.New(emu.Config{PMCSource: s.PMC, PMCCounters: pmc.MaxPlatformCounters})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(k.Close)
	prov := guid.FromName("etwemu.bench")
	r, err := k.EventRegister(prov, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	mode := uint32(logmode.RealTime) // the consumer discards what it receives
	if s.Shared {
		mode |= logmode.NoPerProcessorBufs
	}
	for i := 0; i < s.Count && !s.Disabled; i++ {
		h, err := k.StartTrace(fmt.Sprintf("bench-%d", i), &emu.Properties{BufferSize: s.BufferKB,
			MinimumBuffers: s.Min, MaximumBuffers: s.Max, LogFileMode: mode, Sink: session.Discard{}})
		if err != nil {
			b.Fatal(err)
		}
		if err := k.EnableTraceEx2(h, prov, regentry.ControlEnable, s.Level, 0, 0, nil); err != nil {
			b.Fatal(err)
		}
		if s.PMC != nil {
			id := uint32(2) // not the events' id
			if s.PMCSelect {
				id = 1
			}
			if err := k.TraceSetInformation(h, pmc.TracePmcCounterListInfo, []byte{byte(pmc.ProfileTotalCycles), 0, 0, 0}); err != nil {
				b.Fatal(err)
			}
			if err := k.SetSystemInformation(pmc.SystemPerformanceTraceInformation, pmc.EventInformation(uint64(h), id)); err != nil {
				b.Fatal(err)
			}
		}
	}
	runtime.GC() // start each measurement without the previous benchmark's garbage
	return k, r
}

// eventLevel is the level every emulator case writes its events at.
const eventLevel = 4

// Emulator returns a case writing payload-byte events through EventWrite to sessions s.
//
// It is not inlined. Inlined into Full's closures, it left there copies of its own
// closures in which Go 1.26 did not inline EventWrite, while a user's loop has the
// disabled test in line and calls only the enabled path: the benchmarks timed a call, a
// frame and a spill per event that no caller pays (.ci/run checks the bench binary has
// no such call).
//
//go:noinline
func Emulator(name string, payload int, parallel bool, s Sessions) Case {
	if parallel {
		name += "/parallel"
	}
	unwritten := s.Disabled || (s.Level != 0 && s.Level < eventLevel) // level 0 passes every level, as in ETW
	return Case{Name: name, Payload: payload, Parallel: parallel, Unwritten: unwritten, Run: func(b *testing.B) {
		k, r := setup(b, s)
		desc := &emu.EventDescriptor{ID: 1, Level: eventLevel, Keyword: 1}
		data := make([]byte, payload)
		if unwritten {
			loop(b, k, r, desc, data, parallel, false)
			return
		}
		loop(b, k, r, desc, data, parallel, true)
		var lost uint64
		for _, l := range k.Sessions() {
			lost += l.Stats().EventsLost
		}
		b.ReportMetric(float64(lost)/float64(b.N), "lost/op")
	}}
}

// loop times EventWrite calls with the call written in the loop, as a user's loop has it
// and as the fair floor's loop has its event, rather than in a closure called each
// round. The loop counts to b.N in a register, rather than with b.Loop, which keeps its
// count in the B (loaded, added to and stored back every round) and stores the call's
// arguments and result to the stack to keep them alive. written says the session takes
// the events: the loop reports events/s and bytes; otherwise calls/s, no event being
// written.
//
// For a disabled provider what is measured is the inlined load and compare, which a
// closure call would be several times larger than: on the 2.45 GHz machine a disabled
// call timed 2.8 to 3.3 ns in b.Loop, 0.7 to 1.7 in this loop (bench/RESULTS.md). For a
// written event, the closure and b.Loop cost about 2 ns of a single writer's 21
// (bench/HISTORY.md, "The emulator's loop written out").
func loop(b *testing.B, k *emu.Kernel, r *emu.Registration, desc *emu.EventDescriptor, data []byte, parallel, written bool) {
	if written {
		b.SetBytes(int64(len(data)))
	}
	defer benchbase.Start(b, parallel)()
	if parallel {
		benchbase.Parallel(b, func(n int) {
			for range n {
				k.EventWrite(r, desc, data)
			}
		})
	} else {
		b.ResetTimer() // what b.Loop does on its first call
		for range b.N {
			k.EventWrite(r, desc, data)
		}
	}
	b.StopTimer() // what b.Loop does after its last: the caller's reporting is not timed
	if written {
		benchbase.EventsPerSecond(b)
	} else {
		benchbase.PerSecond(b, "calls/s")
	}
}

// baselines names the baselines, says what each measures, and runs it: one table, from
// which Baselines makes the cases and Table the legend.
var baselines = []struct {
	name, about string
	run         func(b *testing.B, payload int, parallel bool)
}{
	{"floor", "the least any EVENT_HEADER tracer must do, nothing more: the processor and the time-stamp counter in one call, one atomic add on that processor's slab, the 0x50-byte header copied from a template with its timestamp patched, the payload copied; its loop written out, no call but the clock's. The × floor column and the sweep are against it", benchbase.FloorFair},
	{"floor+call", "the floor's work through a closure called each event, as floor+commit, floor+ref, floor+recycle, mutex and chan are (compare them with it), the timestamp's low byte patched, the ring wrapped by a modulo", benchbase.Floor},
	{"floor+commit", "the floor plus the emulator's publication: the add also numbers the record, and a plain store sets its completion flag", benchbase.FloorCommit},
	{"floor+ref", "the floor plus the Windows protocol's publication: a reference taken by the add and dropped by a second atomic add", benchbase.FloorRef},
	{"floor+recycle", "floor+commit in fixed 64 KB buffers, four a processor, switched and reused without a logger", benchbase.FloorRecycle},
	{"mutex", "the naive design: the same clock read and copy into one shared buffer under a sync.Mutex", benchbase.Mutex},
	{"chan", "the Go-idiomatic design: a preallocated record encoded, sent on a buffered channel to one consumer goroutine and handed back", benchbase.Chan},
}

// Baselines returns the baselines at payload bytes: the floor (the ratios' denominator),
// the floor through a closure as the others are (floor+call), the floor with the
// emulator's completion flag per record (floor+commit), the floor with the Windows
// protocol's reference per record instead (floor+ref), the floor with recycled buffers
// (floor+recycle), the mutex and the channel.
func Baselines(payload int, parallel bool) []Case {
	suffix := ""
	if parallel {
		suffix = "/parallel"
	}
	out := make([]Case, 0, len(baselines))
	for _, bl := range baselines {
		run := bl.run
		out = append(out, Case{Name: fmt.Sprintf("payload=%d/%s%s", payload, bl.name, suffix), Payload: payload, Parallel: parallel,
			Floor: bl.name == "floor", Baseline: bl.name, About: bl.about,
			Run: func(b *testing.B) { run(b, payload, parallel) }})
	}
	return out
}

// Full is the whole suite: payloads 16, 64, 512 and 4096 bytes to 1, 2 and 8 sessions;
// the disabled and level-filtered cases; buffer size and count; per-processor buffering
// against EVENT_TRACE_NO_PER_PROCESSOR_BUFFERING; each on one goroutine and with
// RunParallel (GOMAXPROCS goroutines), and the baselines at every payload.
func Full() []Case {
	var out []Case
	both := func(f func(parallel bool) []Case) {
		out = append(out, f(false)...)
		out = append(out, f(true)...)
	}
	for _, payload := range []int{16, 64, 512, 4096} {
		for _, n := range []int{1, 2, 8} {
			s := standard
			s.Count = n
			both(func(p bool) []Case {
				return []Case{Emulator(fmt.Sprintf("payload=%d/sessions=%d", payload, n), payload, p, s)}
			})
		}
		both(func(p bool) []Case { return Baselines(payload, p) })
	}
	variants := []struct {
		name string
		s    Sessions
	}{
		{"payload=64/disabled", Sessions{Disabled: true}},
		{"payload=64/sessions=1/filtered", Sessions{Count: 1, BufferKB: 64, Min: 64, Max: 256, Level: 2}},
		{"payload=64/sessions=1/buffers=4KBx16", Sessions{Count: 1, BufferKB: 4, Min: 16, Max: 16, Level: 5}},
		{"payload=64/sessions=1/buffers=1MBx8", Sessions{Count: 1, BufferKB: 1024, Min: 8, Max: 8, Level: 5}},
		{"payload=64/sessions=1/shared", Sessions{Count: 1, BufferKB: 64, Min: 64, Max: 256, Level: 5, Shared: true}},
		// PMC capture: configured but not selecting the event (the check alone), and
		// selecting it with the synthetic and the TSC source. Off is sessions=1 itself.
		{"payload=64/sessions=1/pmc=unselected", Sessions{Count: 1, BufferKB: 64, Min: 64, Max: 256, Level: 5, PMC: pmc.Synthetic{}}},
		{"payload=64/sessions=1/pmc=synthetic", Sessions{Count: 1, BufferKB: 64, Min: 64, Max: 256, Level: 5, PMC: pmc.Synthetic{}, PMCSelect: true}},
	}
	if hw.HasTSC() {
		variants = append(variants, struct {
			name string
			s    Sessions
		}{"payload=64/sessions=1/pmc=tsc", Sessions{Count: 1, BufferKB: 64, Min: 64, Max: 256, Level: 5, PMC: pmc.TSC{}, PMCSelect: true}})
	}
	for _, v := range variants {
		both(func(p bool) []Case { return []Case{Emulator(v.name, 64, p, v.s)} })
	}
	return out
}

// Short is the part of the suite `etwemu bench` runs by default: 64- and 512-byte events
// to one and two sessions, the disabled case and the baselines, single and parallel.
func Short() []Case {
	var out []Case
	for _, p := range []bool{false, true} {
		out = append(out, Emulator("payload=64/disabled", 64, p, Sessions{Disabled: true}))
		for _, payload := range []int{64, 512} {
			for _, n := range []int{1, 2} {
				s := standard
				s.Count = n
				out = append(out, Emulator(fmt.Sprintf("payload=%d/sessions=%d", payload, n), payload, p, s))
			}
			out = append(out, Baselines(payload, p)...)
		}
	}
	return out
}
