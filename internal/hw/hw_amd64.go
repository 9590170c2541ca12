package hw

func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
func rdtsc() int64
func rdpid() uint32
func rdtscpAux() uint32

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
}
