package benchbase

import (
	"flag"
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

// fill leaves bf as a writer whose reservation crossed its end finds it: full, with three
// complete records before that reservation.
func fill(bf *recycleBuf) {
	bf.word.Store(recycleBufSize + 1 | 4*oneRecord)
	bf.fit.Store(3)
	for i := range 3 {
		bf.flags[i] = 1
	}
}

// A buffer is switched once its space runs out: the writer that crosses the end takes
// the next buffer of the ring, in order, emptied and with its completion flags cleared.
func TestRecycleSwitch(t *testing.T) {
	p := &recycleProc{bufs: new([recycleBufs]*recycleBuf)}
	for j := range p.bufs {
		p.bufs[j] = newRecycleBuf()
		fill(p.bufs[j])
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
		if cur.fit.Load() != 0 || cur.flags[0] != 0 || cur.flags[2] != 0 {
			t.Fatalf("switch %d: the new buffer keeps its last use's completion flags", i)
		}
		fill(cur)
		p.switchTo(old) // stale: no longer current, left alone
		if p.cur.Load() != cur {
			t.Fatalf("switch %d: a stale buffer moved the current one", i)
		}
	}
}

// What a benchmark sets up before Run is neither timed nor counted, on one goroutine
// (b.Loop resets it) and with RunParallel (Run resets it): 8 MB allocated before Run
// shows in no row's B/op.
func TestRunLeavesSetupOut(t *testing.T) {
	f := flag.Lookup("test.benchtime")
	saved := f.Value.String()
	if err := f.Value.Set("100x"); err != nil {
		t.Fatal(err)
	}
	defer f.Value.Set(saved)
	for _, parallel := range []bool{false, true} {
		var sink []byte
		r := testing.Benchmark(func(b *testing.B) {
			sink = make([]byte, 8<<20)
			Run(b, 8, parallel, func() {})
		})
		if r.N == 0 || r.AllocedBytesPerOp() > 1024 || len(sink) == 0 {
			t.Errorf("parallel %v: N %d, %d B/op; want the setup's 8 MB left out", parallel, r.N, r.AllocedBytesPerOp())
		}
	}
}
