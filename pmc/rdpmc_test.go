package pmc

import (
	"sync"
	"sync/atomic"
	"testing"
)

// fakePage is a page in ordinary memory that says what the test wants, and an RDPMC that
// returns what the test wants and records the counter asked for.
func fakePage(index uint32, width uint16, offset int64, caps uint64) *mmapPage {
	return &mmapPage{lock: 2, index: index, pmcWidth: width, offset: offset, capabilities: caps}
}

func TestReadSelfWidthAndOffset(t *testing.T) {
	cases := []struct {
		width  uint16
		raw    uint64
		offset int64
		want   uint64
	}{
		{48, 1000, 5, 1005},
		// A 48-bit counter that has wrapped negative: the kernel's offset compensates.
		{48, 0xFFFF_FFFF_FFFF, 10, 9},
		{48, 0x8000_0000_0000, 1 << 48, 1 << 47},
		// Bits above the width are not the counter's and are dropped.
		{40, 0xABCD_0000_0000_0010, 0, 0x10},
		{64, 0xFFFF_FFFF_FFFF_FFFF, 2, 1},
		{32, 0xFFFF_FFFF, 0x1_0000_0000, 0xFFFF_FFFF},
	}
	for _, c := range cases {
		pg := fakePage(3, c.width, c.offset, capUserRDPMC)
		var asked uint32 = 99
		got, ok := readSelf(pg, func(counter uint32) uint64 { asked = counter; return c.raw })
		if !ok || got != c.want || asked != 2 {
			t.Errorf("width %d raw %#x offset %d: got %#x ok %v (counter %d), want %#x from counter 2", c.width, c.raw, c.offset, got, ok, asked, c.want)
		}
	}
}

// TestReadSelfRefuses checks that a page that does not allow RDPMC is never read with it.
func TestReadSelfRefuses(t *testing.T) {
	for _, pg := range []*mmapPage{
		fakePage(1, 48, 0, 0),                                         // cap_user_rdpmc clear (rdpmc = 0)
		fakePage(0, 48, 0, capUserRDPMC),                              // index 0: not on the PMU
		fakePage(1, 0, 0, capUserRDPMC),                               // no width
		fakePage(1, 48, 0, capUserRDPMC>>1),                           // only cap_bit0_is_deprecated
		{lock: 3, index: 1, pmcWidth: 48, capabilities: capUserRDPMC}, // update never finishes
	} {
		if v, ok := readSelf(pg, func(uint32) uint64 { t.Fatalf("RDPMC executed for page %+v", *pg); return 0 }); ok {
			t.Errorf("page %+v read %d", *pg, v)
		}
	}
}

// TestReadSelfRetries simulates the kernel updating the page between the reader's two
// looks at the lock: the first value must be dropped and the page read again.
func TestReadSelfRetries(t *testing.T) {
	pg := fakePage(1, 48, 100, capUserRDPMC)
	calls := 0
	got, ok := readSelf(pg, func(uint32) uint64 {
		calls++
		if calls == 1 {
			// The counter was rescheduled: offset and index change under the seqlock.
			atomic.AddUint32(&pg.lock, 1)
			atomic.StoreInt64(&pg.offset, 7000)
			atomic.StoreUint32(&pg.index, 4)
			atomic.AddUint32(&pg.lock, 1)
			return 1
		}
		return 5
	})
	if !ok || got != 7005 || calls != 2 {
		t.Fatalf("got %d ok %v after %d reads; want 7005 after 2", got, ok, calls)
	}
}

// TestReadSelfConcurrent runs a writer that keeps updating the page the way the kernel
// does (lock odd, fields, lock even) against readers: every value a reader returns must
// come from one consistent update, where offset+counter always equals 1000*generation.
func TestReadSelfConcurrent(t *testing.T) {
	pg := fakePage(1, 48, 0, capUserRDPMC)
	var gen atomic.Int64 // what "the hardware counter" holds: offset + counter = 1000*gen
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for g := int64(1); ; g++ {
			select {
			case <-stop:
				return
			default:
			}
			atomic.AddUint32(&pg.lock, 1)
			atomic.StoreInt64(&pg.offset, 1000*g-g)
			gen.Store(g)
			atomic.AddUint32(&pg.lock, 1)
		}
	}()
	for i := 0; i < 20000; i++ {
		v, ok := readSelf(pg, func(uint32) uint64 { return uint64(gen.Load()) })
		// A consistent read is offset(g)+g = 1000g; a torn one mixes two generations.
		if ok && v%1000 != 0 {
			t.Fatalf("torn read %d", v)
		}
	}
	close(stop)
	wg.Wait()
}
