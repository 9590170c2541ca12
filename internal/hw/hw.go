// Package hw reads the two processor facts the write path needs on every event: which
// CPU the goroutine is on (a hint: it can migrate right after) and a cheap timestamp.
//
// On amd64 it uses RDPID (or RDTSCP) for the CPU and RDTSC for time, after checking
// CPUID; nothing is executed that CPUID did not advertise. Without either, on Linux it
// reads the CPU from the kernel's per-CPU GDT segment with LSL, an instruction every
// x86-64 processor has, as the vDSO's getcpu does. Elsewhere it falls back to portable
// code (a hash of the goroutine's stack address).
package hw

import "time"

// CPUMethod names how CPU() finds the current processor.
type CPUMethod uint8

const (
	CPUByStack  CPUMethod = iota // portable: a hash of the goroutine's stack address
	CPUByRDPID                   // RDPID: reads IA32_TSC_AUX, which Linux sets to node<<12 | cpu
	CPUByRDTSCP                  // RDTSCP: the same register, with a serialising timestamp read
	// CPUBySegment: LSL on Linux's per-CPU GDT segment, whose limit is node<<12 | cpu, as
	// the vDSO's getcpu reads it where there is no RDPID (virtual machines often hide
	// RDPID and RDTSCP). About 18 ns, so CPUAndTSC keeps a goroutine's reading for a few
	// tens of microseconds.
	CPUBySegment
)

func (m CPUMethod) String() string {
	switch m {
	case CPUByRDPID:
		return "RDPID"
	case CPUByRDTSCP:
		return "RDTSCP"
	case CPUBySegment:
		return "CPU segment (LSL)"
	}
	return "stack-hash"
}

// Features is what CPUID told us; it is filled once at package init.
var Features struct {
	RDPID        bool // CPUID.(EAX=7,ECX=0):ECX[22]
	RDTSCP       bool // CPUID.80000001H:EDX[27]
	InvariantTSC bool // CPUID.80000007H:EDX[8]
	TSC          bool // CPUID.01H:EDX[4]
	CPUSegment   bool // Linux's per-CPU GDT segment answers LSL with a CPU number
}

// cpuMethod is chosen at init from Features; read-only afterwards.
var cpuMethod CPUMethod

func init() {
	detect()
	switch {
	case Features.RDPID:
		cpuMethod = CPUByRDPID
	case Features.RDTSCP:
		cpuMethod = CPUByRDTSCP
	case Features.CPUSegment:
		cpuMethod = CPUBySegment
	default:
		cpuMethod = CPUByStack
	}
}

// Method reports how CPU finds the current processor on this machine.
func Method() CPUMethod { return cpuMethod }

// CPU returns a hint of the processor the calling goroutine runs on. With RDPID or
// RDTSCP it is the operating system's CPU number (low 12 bits of TSC_AUX, as Linux
// encodes it); with the portable fallback it is a stable per-goroutine number that spreads
// goroutines over processors. Callers map it onto their own processor count.
//
// On amd64 it is one assembly function that branches on the method (cpu_amd64.s): a Go
// switch around an assembly call cost about 20 instructions per event (BenchmarkWrite).
func CPU() int { return cpu() }

// cpuGo is CPU in Go, for machines without the assembly version and for tests.
func cpuGo() int {
	switch cpuMethod {
	case CPUByRDPID:
		return int(rdpid() & 0xFFF)
	case CPUByRDTSCP:
		return int(rdtscpAux() & 0xFFF)
	case CPUBySegment:
		return segmentCPU()
	}
	return stackCPU()
}

// HasTSC reports whether TSC() reads the processor's invariant time-stamp counter.
func HasTSC() bool { return Features.TSC && Features.InvariantTSC }

// TSC reads the time-stamp counter. Only call it when HasTSC reports true.
func TSC() int64 { return rdtsc() }

// CopyReleaseMax is the largest block the write path hands to CopyRelease; larger ones
// go to copy (runtime.memmove, with its wide moves) and StoreRelease.
const CopyReleaseMax = 256

// CPUAndTSC returns CPU and TSC from one call: RDPID then RDTSC, or RDTSCP alone (which
// reads both), or the portable hint then RDTSC. RDPID costs nothing beside RDTSC, while a
// separate call for each costs the caller a second round of register spills. Only call it
// when HasTSC reports true.
func CPUAndTSC() (cpu int, tsc int64) { return cpuTSC() }

// TSCFrequency measures the time-stamp counter against the monotonic clock over the
// given interval and returns ticks per second. It returns 0 without an invariant TSC.
func TSCFrequency(over time.Duration) int64 {
	if !HasTSC() {
		return 0
	}
	t0, c0 := time.Now(), rdtsc()
	for time.Since(t0) < over {
	}
	t1, c1 := time.Now(), rdtsc()
	ns := t1.Sub(t0).Nanoseconds()
	if ns <= 0 {
		return 0
	}
	return (c1 - c0) * int64(time.Second) / ns
}
