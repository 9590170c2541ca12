package benchbase

import (
	"runtime"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// With PinEnv naming a CPU the thread may run on, Pin confines the calling thread to that
// CPU, and what it returns gives the thread its affinity back.
func TestPinConfinesThread(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var before unix.CPUSet
	if err := unix.SchedGetaffinity(0, &before); err != nil {
		t.Skipf("no affinity here: %v", err)
	}
	cpu := 0
	for !before.IsSet(cpu) {
		cpu++
	}
	t.Setenv(PinEnv, strconv.Itoa(cpu))
	undo := Pin(t)
	var inside, after unix.CPUSet
	if err := unix.SchedGetaffinity(0, &inside); err != nil {
		t.Fatal(err)
	}
	undo()
	if err := unix.SchedGetaffinity(0, &after); err != nil {
		t.Fatal(err)
	}
	if inside.Count() != 1 || !inside.IsSet(cpu) {
		t.Errorf("pinned to CPU %d, the thread's affinity holds %d CPUs", cpu, inside.Count())
	}
	if after != before {
		t.Errorf("after undo the thread may run on %d CPUs, before %d", after.Count(), before.Count())
	}
}

// A value that is not a number, or not a CPU the thread may run on, is refused, and an
// empty one pins nothing.
func TestPinRefusesOtherValues(t *testing.T) {
	for _, v := range []string{"x", "-1", "1.5", strconv.Itoa(1 << 20)} {
		t.Setenv(PinEnv, v)
		if cpu, ok, err := PinCPU(); err == nil {
			t.Errorf("%s=%q accepted as CPU %d (%v)", PinEnv, v, cpu, ok)
		}
	}
	t.Setenv(PinEnv, "")
	if _, ok, err := PinCPU(); ok || err != nil {
		t.Errorf("%s empty: ok %v, err %v; want nothing to pin", PinEnv, ok, err)
	}
}
