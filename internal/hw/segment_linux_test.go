//go:build linux && amd64

package hw

import (
	"runtime"
	"testing"

	"golang.org/x/sys/unix"
)

// A thread pinned to one CPU reads that CPU's number from the segment, directly (CPU) and,
// once the cached reading of a previous CPU has aged past the window, through CPUAndTSC.
// Decided by the pinning and the TSC, not by timing.
func TestSegmentCPUFollowsPinnedThread(t *testing.T) {
	if !Features.CPUSegment || !HasTSC() {
		t.Skip("no CPU segment or no invariant TSC")
	}
	saved := cpuMethod
	cpuMethod = CPUBySegment
	defer func() { cpuMethod = saved }()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		t.Skip(err)
	}
	defer unix.SchedSetaffinity(0, &all)
	tested := 0
	for c := 0; c < runtime.NumCPU() && tested < 4; c++ {
		if !all.IsSet(c) {
			continue
		}
		var one unix.CPUSet
		one.Set(c)
		if err := unix.SchedSetaffinity(0, &one); err != nil {
			t.Fatalf("pin to CPU %d: %v", c, err)
		}
		tested++
		if got := CPU(); got != c {
			t.Fatalf("pinned to CPU %d, CPU() says %d", c, got)
		}
		for start := TSC(); TSC()-start <= 2*0x10000; {
		}
		for i := 0; i < 100; i++ {
			if got, _ := CPUAndTSC(); got != c {
				t.Fatalf("pinned to CPU %d, CPUAndTSC() says %d (call %d)", c, got, i)
			}
		}
	}
	if tested == 0 {
		t.Skip("no CPU in this thread's affinity mask")
	}
}
