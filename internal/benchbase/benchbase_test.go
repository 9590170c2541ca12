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

// FloorRecycle's per-processor structures are 128 bytes each, like the slabs.
func TestRecycleLayout(t *testing.T) {
	if s := unsafe.Sizeof(recycleBuf{}); s != 128 {
		t.Fatalf("recycleBuf is %d bytes, want 128", s)
	}
	if s := unsafe.Sizeof(recycleProc{}); s != 128 {
		t.Fatalf("recycleProc is %d bytes, want 128", s)
	}
}

// A buffer is switched once its space runs out: the writer that crosses the end takes
// the next buffer of the ring, in order, emptied.
func TestRecycleSwitch(t *testing.T) {
	p := &recycleProc{bufs: new([recycleBufs]*recycleBuf)}
	for j := range p.bufs {
		p.bufs[j] = &recycleBuf{data: make([]byte, recycleBufSize)}
		p.bufs[j].word.Store(recycleBufSize + 1) // as if filled a ring ago
	}
	p.cur.Store(p.bufs[0])
	for i := 1; i <= 2*recycleBufs; i++ {
		old := p.cur.Load()
		p.switchTo(old)
		cur := p.cur.Load()
		if want := p.bufs[i%recycleBufs]; cur != want {
			t.Fatalf("switch %d installed the wrong buffer", i)
		}
		if w := cur.word.Load(); w != recycleStart {
			t.Fatalf("switch %d: the new buffer's word is %#x, want %#x", i, w, recycleStart)
		}
		cur.word.Store(recycleBufSize + 1)
		p.switchTo(old) // stale: no longer current, left alone
		if p.cur.Load() != cur {
			t.Fatalf("switch %d: a stale buffer moved the current one", i)
		}
	}
}
