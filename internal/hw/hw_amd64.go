package hw

import "runtime"

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
func rdtsc() int64
func rdpid() uint32
func rdtscpAux() uint32

// lsl reads the limit of Linux's per-CPU GDT segment (selector 0x7b); ok is false when
// the selector is not valid (another operating system, or a kernel without it).
func lsl() (v uint32, ok bool)

// segmentCache holds, for each goroutine stack, its last segment CPU reading. A slot is
// chosen by a multiplicative hash of the stack's 2 KB chunk (SP>>11) and names the chunk
// it belongs to (key). Go stacks are at least 2 KB and aligned to their size, so no two
// live goroutines share a chunk, and a reading under another key is refreshed rather
// than taken. val is the TSC at the reading in the high bits and the CPU in the low 12.
// Written and read only by cpuTSC (plain 8-byte moves, atomic on amd64); a reader that
// races a writer of its slot may pair one goroutine's key with another's val, a wrong
// hint once, which is all it is.
//
// The slot used to be the 8 KB chunk's fold (SP>>13), with no key: goroutines started
// together get adjacent 2 KB stacks in one 8 KB chunk, and so did both RunParallel
// goroutines of a benchmark in about half the runs. They then took each other's
// readings, wrote under the wrong processor about half the time, and the parallel floor
// ran at 90-140 ns an event instead of 6 (TestSegmentCacheKey, bench/RESULTS.md).
var segmentCache [segmentSlots]struct{ key, val uint64 }

// segmentSlots is the number of segmentCache slots; the assembly shifts the hash right
// by 64-12 and scales the slot by 16.
const segmentSlots = 4096

// segmentCPU is the Go version of the assembly's SEGMENT_CPU.
func segmentCPU() int {
	v, _ := lsl()
	return int(v & 0xFFF)
}

// cpu is CPU in assembly; it reads cpuMethod, whose values it hard-codes (TestCPUMethodValues).
func cpu() int

// cpuTSC is CPUAndTSC in assembly: one call, so the caller spills its registers once.
func cpuTSC() (cpu int, tsc int64)

func detect() {
	maxLeaf, _, _, _ := cpuid(0, 0)
	if maxLeaf >= 1 {
		_, _, _, edx := cpuid(1, 0)
		Features.TSC = edx&(1<<4) != 0
	}
	if maxLeaf >= 7 {
		_, _, ecx, _ := cpuid(7, 0)
		Features.RDPID = ecx&(1<<22) != 0
	}
	maxExt, _, _, _ := cpuid(0x80000000, 0)
	if maxExt >= 0x80000001 {
		_, _, _, edx := cpuid(0x80000001, 0)
		Features.RDTSCP = edx&(1<<27) != 0
	}
	if maxExt >= 0x80000007 {
		_, _, _, edx := cpuid(0x80000007, 0)
		Features.InvariantTSC = edx&(1<<8) != 0
	}
	if runtime.GOOS == "linux" {
		v, ok := lsl()
		Features.CPUSegment = ok && int(v&0xFFF) < max(runtime.NumCPU(), 1)
	}
}
