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

// stackHi reads the top of the goroutine's stack from the runtime's g: a local lies
// below it and within the stack's size, in a fresh goroutine and after its stack has
// been grown (copied elsewhere) several times; and Callers' walk, bounded by it, still
// reaches the goroutine's first frame.
func TestStackHi(t *testing.T) {
	check := func(where string) {
		var local byte
		at, hi := uintptr(unsafe.Pointer(&local)), stackHi()
		if at >= hi || hi-at > 1<<20 {
			t.Errorf("%s: a local at %#x, the stack top read as %#x", where, at, hi)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		check("a fresh goroutine")
		var grow func(n int) int
		grow = func(n int) int {
			var pad [256]byte // frames of about 300 bytes: 200 of them outgrow the first 8 KB
			pad[n%256] = byte(n)
			if n == 0 {
				check("200 frames down, after the stack grew")
				var pcs [300]uintptr
				if got, want := Callers(pcs[:]), runtime.Callers(2, pcs[:]); got != want {
					t.Errorf("the walk read %d frames, runtime.Callers %d", got, want)
				}
				return int(pad[0])
			}
			return grow(n-1) + int(pad[n%256])
		}
		grow(200)
		check("back at the top, after the stack grew")
	}()
	<-done
}
