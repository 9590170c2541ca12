package hw

import (
	"runtime"
	"testing"
	"time"
)

func TestCPUWithinEncodedRange(t *testing.T) {
	t.Logf("method %v, features %+v", Method(), Features)
	for i := 0; i < 100; i++ {
		if c := CPU(); c < 0 || c > 0xFFF {
			t.Fatalf("CPU() = %d, outside the 12-bit range", c)
		}
	}
	if Method() != CPUByStack {
		// The OS CPU number must be below the machine's CPU count.
		if c := CPU(); c >= runtime.NumCPU() && runtime.NumCPU() < 0xFFF {
			t.Fatalf("CPU() = %d with %d CPUs", c, runtime.NumCPU())
		}
	}
}

// Goroutines started together get adjacent 2 KB stacks, so the four 2 KB chunks of an
// 8 KB block must have four different stack hints; with the 8 KB chunks used before,
// they shared one. Checked over 64 MB of addresses, deterministically: how many hints 64
// live goroutines get depends on where the runtime put their stacks (an earlier form of
// this test, counting them, failed about once in 200 runs under -race).
func TestStackHintSeparatesAdjacentStacks(t *testing.T) {
	for base := uintptr(0xc0000000); base < 0xc0000000+64<<20; base += 8 << 10 { // within a 32-bit uintptr too
		seen := map[int]bool{}
		for i := uintptr(0); i < 4; i++ {
			seen[stackHint(base+i<<11)] = true
		}
		if len(seen) != 4 {
			t.Fatalf("the 2 KB chunks of the 8 KB block at %#x share stack hints (%d distinct)", base, len(seen))
		}
	}
}

func TestTSCAdvancesAndCalibrates(t *testing.T) {
	if !HasTSC() {
		t.Skip("no invariant TSC on this machine")
	}
	a := TSC()
	time.Sleep(time.Millisecond)
	if b := TSC(); b <= a {
		t.Fatalf("TSC did not advance: %d then %d", a, b)
	}
	f := TSCFrequency(5 * time.Millisecond)
	if f < 100e6 || f > 10e9 {
		t.Fatalf("implausible TSC frequency %d Hz", f)
	}
}

func BenchmarkCPU(b *testing.B) {
	for b.Loop() {
		_ = CPU()
	}
}

func BenchmarkStackCPU(b *testing.B) {
	for b.Loop() {
		_ = stackCPU()
	}
}

func BenchmarkTSC(b *testing.B) {
	if !HasTSC() {
		b.Skip("no invariant TSC")
	}
	for b.Loop() {
		_ = TSC()
	}
}

// BenchmarkCPUAndTSC times CPUAndTSC by each method this machine has, so that the
// choice init makes (RDPID first, then RDTSCP) can be checked against the machine: on
// the 2.45 GHz Zen 3 machine RDPID with RDTSC took 13.1 ns and RDTSCP alone 26.3,
// against 12.8 for RDTSC alone (BenchmarkTSC; bench/RESULTS.md).
func BenchmarkCPUAndTSC(b *testing.B) {
	if !HasTSC() {
		b.Skip("no invariant TSC")
	}
	saved := cpuMethod
	defer func() { cpuMethod = saved }()
	for _, m := range []struct {
		method CPUMethod
		has    bool
	}{{CPUByRDPID, Features.RDPID}, {CPUByRDTSCP, Features.RDTSCP}, {CPUBySegment, Features.CPUSegment}, {CPUByStack, true}} {
		b.Run(m.method.String(), func(b *testing.B) {
			if !m.has {
				b.Skipf("this processor has no %v", m.method)
			}
			cpuMethod = m.method
			var sum int64
			for range b.N {
				c, t := CPUAndTSC()
				sum += int64(c) + t
			}
			benchSink = sum
		})
	}
}

// benchSink keeps BenchmarkCPUAndTSC's readings alive.
var benchSink int64

func TestCPUMethodValues(t *testing.T) {
	// cpu_amd64.s hard-codes these.
	if CPUByStack != 0 || CPUByRDPID != 1 || CPUByRDTSCP != 2 || CPUBySegment != 3 {
		t.Fatal("CPUMethod values changed; update the assembly")
	}
}

// eachMethod runs fn with cpuMethod set to each method this machine has, then restores it.
func eachMethod(fn func(m CPUMethod)) {
	saved := cpuMethod
	defer func() { cpuMethod = saved }()
	for _, m := range []CPUMethod{CPUByStack, CPUByRDPID, CPUByRDTSCP, CPUBySegment} {
		if (m == CPUByRDPID && !Features.RDPID) || (m == CPUByRDTSCP && !Features.RDTSCP) || (m == CPUBySegment && !Features.CPUSegment) {
			continue
		}
		cpuMethod = m
		fn(m)
	}
}

// checkCPU fails t if c, what name returned by method m, is no processor number.
func checkCPU(t *testing.T, m CPUMethod, name string, c int) {
	t.Helper()
	if c < 0 || c > 0xFFF {
		t.Fatalf("%v: %s() = %d", m, name, c)
	}
	if m != CPUByStack && c >= runtime.NumCPU() {
		t.Fatalf("%v: %s() = %d with %d CPUs", m, name, c, runtime.NumCPU())
	}
}

// Every method gives a value in range, from the assembly and from the Go version alike.
// (They cannot be compared value for value: the goroutine may migrate between the two
// reads, and the stack hash sees two different frames.)
func TestCPUAllMethods(t *testing.T) {
	eachMethod(func(m CPUMethod) {
		for i := 0; i < 50; i++ {
			checkCPU(t, m, "CPU", CPU())
			checkCPU(t, m, "cpuGo", cpuGo())
		}
	})
}

// CPUAndTSC gives, by every method, a processor in range and a counter reading taken
// between two TSC reads around it.
func TestCPUAndTSCAllMethods(t *testing.T) {
	if !HasTSC() {
		t.Skip("no invariant TSC on this machine")
	}
	eachMethod(func(m CPUMethod) {
		for i := 0; i < 50; i++ {
			before := TSC()
			c, ts := CPUAndTSC()
			after := TSC()
			checkCPU(t, m, "CPUAndTSC", c)
			if ts < before || ts > after {
				t.Fatalf("%v: CPUAndTSC() read %d, outside the reads around it [%d, %d]", m, ts, before, after)
			}
		}
	})
}

// CopyRelease copies what copy copies, for every length from 0 to past twice
// CopyReleaseMax, with either slice the shorter and at unaligned addresses, touches
// nothing past it, and sets the flag.
func TestCopyReleaseCopiesAsCopy(t *testing.T) {
	const max = 600
	src := make([]byte, max+8)
	for i := range src {
		src[i] = byte(i*7 + 1)
	}
	for n := 0; n <= max; n++ {
		for _, c := range [][3]int{{n, n, 0}, {n, max, 0}, {max, n, 0}, {n, n, 3}} {
			dl, sl, off := c[0], c[1], c[2]
			got := make([]byte, max+16)
			want := make([]byte, max+16)
			for i := range got {
				got[i], want[i] = 0xAA, 0xAA
			}
			copy(want[off:off+dl], src[off:off+sl])
			var flag uint32
			CopyRelease(got[off:off+dl], src[off:off+sl], &flag)
			if flag != 1 || string(got) != string(want) {
				t.Fatalf("len(dst) %d, len(src) %d, offset %d: flag %d, bytes differ from copy's", dl, sl, off, flag)
			}
		}
	}
}
