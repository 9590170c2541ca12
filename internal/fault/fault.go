// Package fault holds the test-only fault switches: deliberate bugs that tests turn on to
// show that the fuzz model and the invariant checker catch them. Every switch is off
// unless a test sets it, and each is read only on a cold path (enable and disable, never
// event writes).
package fault

import "sync/atomic"

// Fault is one deliberate bug.
type Fault uint32

const (
	// KeepMaskOnDisable leaves a registration's EnableMask bit set when its slot is
	// disabled: the bug the issue names, "a mask bit not cleared on disable".
	KeepMaskOnDisable Fault = 1 << iota
	// SkipCallbackOnEnable drops the enable callbacks of an enable that changed a slot.
	SkipCallbackOnEnable
)

func (f Fault) String() string {
	switch f {
	case KeepMaskOnDisable:
		return "KeepMaskOnDisable"
	case SkipCallbackOnEnable:
		return "SkipCallbackOnEnable"
	}
	return "Fault(?)"
}

var active atomic.Uint32

// Set turns faults on (and every other fault off) and returns a function that restores
// the previous set. Tests that call it must not run in parallel with other tests.
func Set(f Fault) (restore func()) {
	old := active.Swap(uint32(f))
	return func() { active.Store(old) }
}

// On reports whether fault f is on.
func On(f Fault) bool { return active.Load()&uint32(f) != 0 }
