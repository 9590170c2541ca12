package bench

import (
	"testing"

	"github.com/etwemu/etwemu/internal/benchsuite"
)

// BenchmarkWrite is EventWrite through the public API, the whole suite of
// internal/benchsuite: payloads of 16, 64, 512 and 4096 bytes to 1, 2 and 8 sessions;
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
