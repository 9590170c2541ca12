package callstack

import (
	"runtime"
	"strings"
	"testing"
)

// Through functions that are never inlined, Callers gives the addresses
// runtime.Callers(2) gives. Past tRunner the two differ: the goroutine's first frame is
// a wrapper the compiler made for the go statement, which runtime.Callers leaves out.
func TestCallersMatchesRuntime(t *testing.T) {
	var got, want [64]uintptr
	var n, m int
	chainA(func() {
		n = Callers(got[:])
		m = runtime.Callers(2, want[:])
	})
	if n < 5 {
		t.Fatalf("Callers wrote %d addresses, want at least 5 (chainC, chainB, chainA, the test, tRunner)", n)
	}
	if m < 5 {
		t.Fatalf("runtime.Callers wrote %d addresses", m)
	}
	for i := range 5 {
		if got[i] != want[i] {
			t.Errorf("address %d: Callers %#x (%s), runtime.Callers %#x (%s)", i, got[i], funcName(got[i]), want[i], funcName(want[i]))
		}
	}
	for i, name := range []string{"callstack.chainC", "callstack.chainB", "callstack.chainA",
		"callstack.TestCallersMatchesRuntime", "testing.tRunner"} {
		if f := funcName(got[i]); !strings.HasSuffix(f, "/"+name) && f != name {
			t.Errorf("address %d is in %s, want %s", i, f, name)
		}
	}
}

// Callers stops at the end of pcs, and a caller Deep put Frames frames down fills it.
func TestCallersFull(t *testing.T) {
	var pcs [Frames]uintptr
	var n int
	Deep(Frames, func() { n = Callers(pcs[:]) })
	if n != Frames {
		t.Fatalf("Callers at depth %d wrote %d addresses, want %d", Frames, n, Frames)
	}
	if n := Callers(pcs[:0]); n != 0 {
		t.Errorf("Callers into an empty slice wrote %d", n)
	}
	if n := Callers(pcs[:1]); n != 1 || funcName(pcs[0]) != "testing.tRunner" {
		t.Errorf("Callers(pcs[:1]) = %d, %s; want 1 in testing.tRunner", n, funcName(pcs[0]))
	}
}

//go:noinline
func chainA(fn func()) { chainB(fn) }

//go:noinline
func chainB(fn func()) { chainC(fn) }

//go:noinline
func chainC(fn func()) { fn() }

func funcName(pc uintptr) string {
	if f := runtime.FuncForPC(pc - 1); f != nil {
		return f.Name()
	}
	return "?"
}

var sink int

// BenchmarkCallers reads the Frames innermost return addresses 40 frames down, with
// Callers and with runtime.Callers.
func BenchmarkCallers(b *testing.B) {
	for _, bc := range []struct {
		name string
		fn   func([]uintptr) int
	}{
		{"callstack", Callers},
		{"runtime", func(pcs []uintptr) int { return runtime.Callers(2, pcs) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var pcs [Frames]uintptr
			Deep(40, func() {
				for b.Loop() {
					sink += bc.fn(pcs[:])
				}
			})
		})
	}
}
