// Package benchbase holds the baselines every write benchmark is compared with in the
// same run: the floor (what any per-processor tracer must do) and the naive design (one
// buffer behind a mutex).
package benchbase

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/internal/hw"
)

// ringSize is the region each baseline writes round and round: 256 KB, about what a
// session of 64 KB buffers cycles through (a few buffers per processor, reused from the
// top of the free list), so the baselines and the emulator write to memory equally warm.
// slabSize leaves room past the ring for the one record that starts near its end.
const (
	ringSize = 256 << 10
	slabSize = ringSize + 1<<16 + abi.EventHeaderSize
)

// slab is one processor's preallocated region. It is exactly 128 bytes and allocated on
// its own, so Go's allocator puts it in the 128-byte size class, whose objects start on
// 128-byte boundaries: the offset that its processor adds to on every event shares no
// pair of cache lines with another processor's (the adjacent-line prefetcher moves lines
// in 128-byte pairs). TestSlabLayout checks both.
//
// The layout alone does not make the parallel floor steady on a VM whose processor
// numbers come from the CPU segment: see "The parallel floor" in bench/RESULTS.md.
type slab struct {
	off  atomic.Uint64 // atomic; added to by the writers on this processor
	data []byte        // slabSize bytes; immutable slice header
	_    [128 - 8 - 24]byte
}

// Floor benchmarks the physical floor of writing one event of size payload bytes. It
// includes what any per-processor tracer must do for an event: read the processor number
// and the session's clock (one call, hw.CPUAndTSC, where the clock is the time-stamp
// counter, as on the emulator's write path), reserve the record with one atomic add on
// that processor's offset, and copy an EVENT_HEADER's bytes and the payload into that
// processor's preallocated slab. It leaves out what the emulator does beyond that:
// reference counts, sealing full buffers, handing them to a logger and recycling them
// through a free list; the slab is a ring that is written round and round.
func Floor(b *testing.B, size int, parallel bool) {
	clk, _ := clock.New(clock.QPC)
	tsc := clk.ReadsTSC()
	slabs := newSlabs(64)
	var hdr [abi.EventHeaderSize]byte
	payload := make([]byte, size)
	rec := uint64(abi.Align(abi.EventHeaderSize + size))
	Run(b, size, parallel, func() {
		var cpu int
		var ts int64
		if tsc {
			cpu, ts = hw.CPUAndTSC()
		} else {
			cpu, ts = hw.CPU(), clk.Now()
		}
		s := slabs[cpu&63]
		off := (s.off.Add(rec) - rec) % ringSize
		copy(s.data[off:], hdr[:])
		s.data[off+abi.OffEventTimeStamp] = byte(ts)
		copy(s.data[off+abi.EventHeaderSize:], payload)
	})
}

// newSlabs allocates n slabs, each on its own 128-byte boundary, with their data.
func newSlabs(n int) []*slab {
	slabs := make([]*slab, n)
	for i := range slabs {
		slabs[i] = &slab{data: make([]byte, slabSize)}
	}
	return slabs
}

// Mutex benchmarks the naive design: the same clock read and copy into one shared buffer
// under a sync.Mutex.
func Mutex(b *testing.B, size int, parallel bool) {
	clk, _ := clock.New(clock.QPC)
	var mu sync.Mutex
	data := make([]byte, slabSize)
	off := 0
	var hdr [abi.EventHeaderSize]byte
	payload := make([]byte, size)
	rec := abi.Align(abi.EventHeaderSize + size)
	Run(b, size, parallel, func() {
		mu.Lock()
		if off+rec > ringSize {
			off = 0
		}
		ts := clk.Now()
		copy(data[off:], hdr[:])
		data[off+abi.OffEventTimeStamp] = byte(ts)
		copy(data[off+abi.EventHeaderSize:], payload)
		off += rec
		mu.Unlock()
	})
}

// chanDepth is the channel baseline's depth: records in flight between the writers and
// the consumer.
const chanDepth = 1024

// Chan benchmarks the Go-idiomatic design: a writer takes a preallocated record from a
// free channel, encodes the event into it (the same clock read and copy) and sends it on a
// buffered channel, which one consumer goroutine drains, handing each record back, as a
// logger goroutine would.
func Chan(b *testing.B, size int, parallel bool) {
	clk, _ := clock.New(clock.QPC)
	rec := abi.Align(abi.EventHeaderSize + size)
	free := make(chan []byte, chanDepth)
	for i := 0; i < chanDepth; i++ {
		free <- make([]byte, rec)
	}
	ch := make(chan []byte, chanDepth)
	done := make(chan struct{})
	go func() {
		for r := range ch {
			_ = r[0] // the consumer touches what it receives
			free <- r
		}
		close(done)
	}()
	var hdr [abi.EventHeaderSize]byte
	payload := make([]byte, size)
	Run(b, size, parallel, func() {
		r := <-free
		ts := clk.Now()
		copy(r, hdr[:])
		r[abi.OffEventTimeStamp] = byte(ts)
		copy(r[abi.EventHeaderSize:], payload)
		ch <- r
	})
	close(ch)
	<-done
}

// Run times one(), on one goroutine or with RunParallel, and reports bytes/s (of
// payload), allocations and events/s.
func Run(b *testing.B, size int, parallel bool, one func()) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	if parallel {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				one()
			}
		})
	} else {
		for b.Loop() {
			one()
		}
	}
	EventsPerSecond(b)
}

// EventsPerSecond reports b.N over the elapsed time as "events/s".
func EventsPerSecond(b *testing.B) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "events/s")
	}
}
