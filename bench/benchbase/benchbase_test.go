package benchbase

import (
	"flag"
	"runtime"
	"sync/atomic"
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

// A writer that finds a FloorRecycle buffer full while the writer that crossed its end
// has not yet switched (it was preempted) waits for the switch: it adds to the full
// buffer's word at most once, so the 32-bit offset cannot run on and wrap. The test plays
// the preempted switcher: the waiting writer's recycleWait reports each wait, and the
// switch is made only after many of them.
func TestRecycleWaiterDoesNotRunOn(t *testing.T) {
	e := newFloorEvent(4096)
	p := &recycleProc{bufs: new([recycleBufs]*recycleBuf)}
	for j := range p.bufs {
		p.bufs[j] = newRecycleBuf()
	}
	bf := p.bufs[0]
	p.cur.Store(bf)
	fill(bf) // a reservation crossed the end; its writer has not switched
	waits := make(chan struct{})
	release := make(chan struct{})
	old := recycleWait
	recycleWait = func() {
		select {
		case waits <- struct{}{}:
		case <-release:
		}
	}
	defer func() { recycleWait = old }()

	w := bf.word.Add(uint64(e.rec) | oneRecord) // the waiting writer's first try
	done := make(chan struct{})
	go func() {
		p.writeSlow(e, bf, w, 1)
		close(done)
	}()
	const waited = 1000
	limit := uint32(recycleBufSize + 1 + e.rec)
	for i := 0; i < waited; {
		select {
		case <-waits:
			i++
		case <-done:
			t.Fatalf("the writer returned after %d waits, before the buffer was switched", i)
		default:
			if end := uint32(bf.word.Load()); end > limit {
				t.Fatalf("after %d waits the full buffer's offset is %#x, past %#x: the waiting writer kept reserving", i, end, limit)
			}
			runtime.Gosched()
		}
	}
	if end := uint32(bf.word.Load()); end > limit {
		t.Fatalf("after %d waits the full buffer's offset is %#x, past %#x: the waiting writer kept reserving", waited, end, limit)
	}
	p.switchTo(bf) // the preempted writer runs at last
	close(release)
	<-done
	if cur := p.cur.Load(); cur != p.bufs[1] {
		t.Fatal("the buffer was not switched")
	} else if got, want := cur.word.Load(), uint64(recycleStart+e.rec)|oneRecord; got != want {
		t.Fatalf("the new buffer's word is %#x, want %#x: the writer's record after the switch", got, want)
	}
}

// A writer that held a buffer since a ring ago and reserved in it while it was full, just
// before it was emptied and installed again, does not wait for another switch: it may be
// the only writer left, and then none would come.
func TestRecycleStaleWriterGoesOn(t *testing.T) {
	e := newFloorEvent(64)
	p := &recycleProc{bufs: new([recycleBufs]*recycleBuf)}
	for j := range p.bufs {
		p.bufs[j] = newRecycleBuf()
	}
	bf := p.bufs[0]
	fill(bf)
	w := bf.word.Add(uint64(e.rec) | oneRecord) // its reservation in the full buffer
	bf.word.Store(recycleStart)                 // the switch a ring later empties it...
	p.cur.Store(bf)                             // ...and installs it
	old := recycleWait
	recycleWait = func() { t.Fatal("the writer waited for a switch that no writer will make") }
	defer func() { recycleWait = old }()
	p.writeSlow(e, bf, w, 1)
	if got, want := bf.word.Load(), uint64(recycleStart+e.rec)|oneRecord; got != want {
		t.Fatalf("the buffer's word is %#x, want %#x: the writer's record", got, want)
	}
}

// parallel runs exactly total iterations in all, in bodies of at least one iteration,
// however the total divides among the goroutines.
func TestParallelRunsEveryIteration(t *testing.T) {
	for _, c := range []struct{ total, procs int }{{0, 4}, {1, 4}, {7, 16}, {1000, 3}, {123_457, 8}, {5_000_000, 2}} {
		var ran atomic.Int64
		parallel(uint64(c.total), c.procs, func(k int) {
			if k <= 0 {
				t.Errorf("total %d: a body asked to run %d iterations", c.total, k)
			}
			ran.Add(int64(k))
		})
		if got := ran.Load(); got != int64(c.total) {
			t.Errorf("total %d on %d goroutines: ran %d iterations", c.total, c.procs, got)
		}
	}
}
