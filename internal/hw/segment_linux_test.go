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

// A cached segment reading is used only by the stack it was read on: the slot cpuTSC
// wrote answers the same stack from the cache, and once the slot names another stack,
// cpuTSC reads the segment again instead of taking that stack's CPU. Decided by the
// cache's contents, not by timing: the planted readings carry the current TSC.
func TestSegmentCacheKey(t *testing.T) {
	if !Features.CPUSegment || !HasTSC() {
		t.Skip("no CPU segment or no invariant TSC")
	}
	saved := cpuMethod
	cpuMethod = CPUBySegment
	defer func() { cpuMethod = saved }()
	const planted = 0xABC // no machine this runs on has that many CPUs
	read := func() int { c, _ := CPUAndTSC(); return c }
	for i := range segmentCache {
		segmentCache[i].key, segmentCache[i].val = 0, 0
	}
	if c := read(); c >= runtime.NumCPU() {
		t.Fatalf("CPUAndTSC() = %d with %d CPUs", c, runtime.NumCPU())
	}
	slot := -1
	for i := range segmentCache {
		if segmentCache[i].key != 0 {
			if slot >= 0 {
				t.Fatalf("one read filled slots %d and %d", slot, i)
			}
			slot = i
		}
	}
	if slot < 0 {
		t.Fatal("CPUAndTSC filled no cache slot")
	}
	s := &segmentCache[slot]
	s.val = uint64(TSC())&^0xFFF | planted
	if c := read(); c != planted {
		t.Fatalf("the stack's own fresh reading was not used: got %d, planted %d", c, planted)
	}
	own := s.key
	s.key++ // the neighbouring 2 KB chunk: another goroutine's stack
	s.val = uint64(TSC())&^0xFFF | planted
	if c := read(); c == planted || c >= runtime.NumCPU() {
		t.Fatalf("another stack's reading was used: got %d with %d CPUs", c, runtime.NumCPU())
	}
	if s.key != own || s.val&0xFFF == planted {
		t.Fatalf("the slot was not refreshed: key %#x val %#x", s.key, s.val)
	}
}
