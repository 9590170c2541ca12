package benchbase

import (
	"testing"
	"unsafe"
)

// Each slab is 128 bytes and starts on a 128-byte boundary, so no two processors' offsets
// share a pair of cache lines.
func TestSlabLayout(t *testing.T) {
	if s := unsafe.Sizeof(slab{}); s != 128 {
		t.Fatalf("slab is %d bytes, want 128", s)
	}
	for i, s := range newSlabs(64) {
		if a := uintptr(unsafe.Pointer(s)) % 128; a != 0 {
			t.Fatalf("slab %d starts %d bytes past a 128-byte boundary", i, a)
		}
	}
}
