package benchbase

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// PinCPU reports the CPU that PinEnv names: ok is false when it is unset or empty, and
// err says why a value is not a CPU the calling thread may run on.
func PinCPU() (cpu int, ok bool, err error) {
	v := os.Getenv(PinEnv)
	if v == "" {
		return 0, false, nil
	}
	if cpu, err = strconv.Atoi(v); err != nil {
		return 0, false, fmt.Errorf("%s=%q: not a CPU number", PinEnv, v)
	}
	var allowed unix.CPUSet
	if err := unix.SchedGetaffinity(0, &allowed); err != nil {
		return 0, false, fmt.Errorf("%s=%q: %v", PinEnv, v, err)
	}
	if cpu < 0 || !allowed.IsSet(cpu) {
		return 0, false, fmt.Errorf("%s=%q: CPU %d is not one of the %d CPUs this process may run on", PinEnv, v, cpu, allowed.Count())
	}
	return cpu, true, nil
}

// Pin applies PinEnv to the calling goroutine and returns what undoes it; with the
// variable unset or empty it does nothing. A value PinCPU refuses fails the benchmark.
func Pin(tb testing.TB) (undo func()) {
	cpu, ok, err := PinCPU()
	if err != nil {
		tb.Fatal(err)
	}
	if !ok {
		return func() {}
	}
	runtime.LockOSThread()
	var old, set unix.CPUSet
	set.Set(cpu)
	if err := unix.SchedGetaffinity(0, &old); err == nil {
		err = unix.SchedSetaffinity(0, &set)
	}
	if err != nil {
		runtime.UnlockOSThread()
		tb.Fatalf("%s: %v", PinEnv, err)
	}
	return func() {
		unix.SchedSetaffinity(0, &old)
		runtime.UnlockOSThread()
	}
}
