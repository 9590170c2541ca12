package benchbase

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// Parallel runs b.N iterations of a benchmark on GOMAXPROCS goroutines, as
// testing.B.RunParallel does, but each goroutine counts its iterations in its own loop:
// body(n) runs n iterations, and its count lives in a register. RunParallel's goroutines
// count in a testing.PB each, a 32-byte object allocated by the goroutine, decremented
// and loaded back every iteration; objects of that size share a 64-byte cache line, so
// two goroutines whose PBs were allocated side by side wrote one line every event. On
// the 16-CPU machine the load after that store took 14 ns an event in one emulator
// profile and 1 ns in the profile of the floor with recycled buffers taken after it
// (bench/HISTORY.md): a cost of the harness, drawn by chance per run, and none of the
// designs'. Here the shared work is one atomic add per grain, on a counter of its own
// cache line. The caller resets the timer first (Start), as before RunParallel.
func Parallel(b *testing.B, body func(n int)) {
	parallel(uint64(b.N), runtime.GOMAXPROCS(0), body)
}

// parallel is Parallel for total iterations on procs goroutines.
func parallel(total uint64, procs int, body func(n int)) {
	// A grain is a hundredth of a goroutine's share, at most 10,000 iterations as in
	// RunParallel (at 1 ns an iteration, 10 µs between adds): the goroutines that finish
	// early wait for at most one grain of the others'.
	grain := min(max(total/uint64(100*procs), 1), 10_000)
	var next struct {
		_ [64]byte
		n atomic.Uint64
		_ [56]byte
	}
	var wg sync.WaitGroup
	wg.Add(procs)
	for range procs {
		go func() {
			defer wg.Done()
			for {
				end := next.n.Add(grain)
				start := end - grain
				if start >= total {
					return
				}
				body(int(min(end, total) - start))
			}
		}()
	}
	wg.Wait()
}
