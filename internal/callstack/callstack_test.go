package callstack

import (
	"runtime"
	"testing"
)

// A function Deep calls sees at least the frames asked for below the caller.
func TestDeep(t *testing.T) {
	var pcs [64]uintptr
	base := runtime.Callers(1, pcs[:])
	for _, frames := range []int{0, 1, 32} {
		var n int
		Deep(frames, func() { n = runtime.Callers(1, pcs[:]) })
		if n < base+frames {
			t.Errorf("Deep(%d): %d frames, want at least %d", frames, n, base+frames)
		}
	}
}
