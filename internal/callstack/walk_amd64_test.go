package callstack

import (
	"runtime"
	"testing"
	"unsafe"
)

// The walk follows a chain of frames it is given, and stops where a saved frame pointer
// leaves the stack: not above the frame before it (a C caller's BP, or a loop), or at or
// past the limit. Frame i of the chain is at f[2i]: the next frame's address, then a
// return address i+1.
func TestWalkStopsOffTheStack(t *testing.T) {
	var f [16]uintptr
	base := uintptr(unsafe.Pointer(&f[0]))
	at := func(i int) uintptr { return base + uintptr(16*i) }
	for i := range 8 {
		f[2*i], f[2*i+1] = at(i+1), uintptr(i+1)
	}
	limit := base + uintptr(len(f))*8
	for _, tc := range []struct {
		name  string
		third uintptr // frame 2's saved frame pointer
		want  int
	}{
		{"ends with 0", 0, 3},
		{"below the frame before", base - 4096, 3},
		{"the same frame", at(2), 3},
		{"a garbage pointer below the stack", 0xdead0000, 3},
		{"at the limit", limit, 3},
		{"far above", base + 1<<40, 3},
		{"whole chain", at(3), 8}, // frame 7's next, at(8), is the limit
	} {
		f[4] = tc.third
		var pcs [16]uintptr
		n := walk(at(0), limit, pcs[:])
		runtime.KeepAlive(&f)
		if n != tc.want {
			t.Errorf("%s: %d addresses, want %d", tc.name, n, tc.want)
		}
		for i := range n {
			if pcs[i] != uintptr(i+1) {
				t.Errorf("%s: address %d is %#x, want %#x", tc.name, i, pcs[i], i+1)
			}
		}
	}
	var pcs [2]uintptr
	f[4] = at(3)
	if n := walk(at(0), limit, pcs[:]); n != 2 {
		t.Errorf("a walk into 2 slots wrote %d", n)
	}
}
