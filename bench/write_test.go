package bench

import (
	"testing"

	// Imported ahead of benchsuite, which imports the emulator, so that the linker lays
	// the baselines' code out before the emulator's packages: their addresses then do not
	// move when the emulator's code changes. One such move made the floor 60 % slower
	// (bench/HISTORY.md, "The floor's code address"); TestBaselinesComeFirst checks the order.
	_ "github.com/etwemu/etwemu/bench/benchbase"
	"github.com/etwemu/etwemu/bench/benchsuite"
)

// BenchmarkWrite is EventWrite through the public API, the whole suite of
// bench/benchsuite: payloads of 16, 64, 512 and 4096 bytes to 1, 2 and 8 sessions;
// the provider disabled and level-filtered; buffer size and count; per-processor
// buffering against EVENT_TRACE_NO_PER_PROCESSOR_BUFFERING; one goroutine and
// RunParallel; and the baselines at every payload, in the same run: the floor, the floor
// with a completion flag per record (floor+commit), the floor with a reference per record
// (floor+ref), the floor with recycled buffers (floor+recycle), the mutex and the
// channel. Names read
// BenchmarkWrite/payload=64/sessions=1[/variant][/parallel].
func BenchmarkWrite(b *testing.B) {
	for _, c := range benchsuite.Full() {
		b.Run(c.Name, c.Run)
	}
}

// BenchmarkScaling writes 64-byte events from RunParallel goroutines through the
// emulator (one session), the floor, the floor with recycled buffers and the mutex. Run
// it with -cpu 1,2,4,... : go test sets GOMAXPROCS, and so the number of writers, to each
// value in turn. `etwemu bench -sweep` runs the same cases and draws the chart.
func BenchmarkScaling(b *testing.B) {
	for _, c := range benchsuite.ScalingCases() {
		b.Run(c.Name, c.Run)
	}
}

// BenchmarkProbe times the machine probe (benchbase.Probe), which does no tracing: ALU
// work whose time moves only when the machine's speed does. Run it beside the write
// benchmarks (-test.bench 'Write/...|Probe') to see whether the machine held still.
func BenchmarkProbe(b *testing.B) {
	for _, c := range []benchsuite.Case{benchsuite.ProbeCase(false), benchsuite.ProbeCase(true)} {
		b.Run(c.Name, c.Run)
	}
}
