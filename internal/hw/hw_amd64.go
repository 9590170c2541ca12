package hw

import "runtime"

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
func rdtsc() int64
func rdpid() uint32
func rdtscpAux() uint32

// lsl reads the limit of Linux's per-CPU GDT segment (selector 0x7b); ok is false when
// the selector is not valid (another operating system, or a kernel without it).
func lsl() (v uint32, ok bool)

// segmentCache is, by stack hash, a goroutine's last segment CPU reading: the TSC at the
// reading in the high bits, the CPU in the low 12. Written and read only by cpuTSC (plain
// 8-byte moves, atomic on amd64); two goroutines sharing a hash share a hint, which is
// all it is.
var segmentCache [4096]uint64

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
