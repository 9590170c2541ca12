// Package benchbase holds the baselines every write benchmark is compared with in the
// same run: the floor (what any per-processor tracer must do) and the naive design (one
// buffer behind a mutex).
package benchbase

import (
	"encoding/binary"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

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
type slab struct {
	off   atomic.Uint64                 // atomic; added to by the writers on this processor
	data  []byte                        // slabSize bytes; immutable slice header
	flags *[commitFlags]uint32          // FloorCommit's completion flags, set by writers; immutable pointer
	race  sync.Mutex                    // held around each record's copy under the race detector only (put)
	_     [128 - 8 - 4*ptrSize - 8]byte // a slice header is three words, a pointer one
}

// ptrSize is a word: the paddings to 128 bytes hold on 32-bit systems too.
const ptrSize = unsafe.Sizeof(uintptr(0))

// put copies e's record, stamped ts, to offset off of the slab. The ring is written
// round and round without an owner, so two goroutines that the scheduler put on one
// processor can be handed the same offset a ring apart, and the one that was preempted
// writes over the other's record: nothing reads the floors' records, but the race
// detector reports the two copies. Under it, and only there (raceEnabled is a
// constant), the copy holds the slab's lock.
func (s *slab) put(e *floorEvent, off uint64, ts int64) {
	if raceEnabled {
		s.race.Lock()
	}
	e.put(s.data[off:], ts)
	if raceEnabled {
		s.race.Unlock()
	}
}

// putRelease is put, then the completion flag *flag set, with the payload's copy and the
// flag's store in one call (hw.CopyRelease), as the emulator's writers make them
// (session.Buffer.CopyPublish); the race lock is put's.
func (s *slab) putRelease(e *floorEvent, off uint64, ts int64, flag *uint32) {
	if raceEnabled {
		s.race.Lock()
	}
	e.putRelease(s.data[off:], ts, flag)
	if raceEnabled {
		s.race.Unlock()
	}
}

// Floor benchmarks the physical floor of writing one event of size payload bytes. It
// includes what any per-processor tracer must do for an event: read the processor number
// and the session's clock (one call, hw.CPUAndTSC, where the clock is the time-stamp
// counter, as on the emulator's write path), reserve the record with one atomic add on
// that processor's offset, and copy an EVENT_HEADER's bytes and the payload into that
// processor's preallocated slab. It leaves out what the emulator does beyond that:
// publishing each record for whoever closes its buffer (FloorCommit, FloorRef), sealing
// full buffers, handing them to a logger and recycling them through a free list; the
// slab is a ring that is written round and round.
func Floor(b *testing.B, size int, parallel bool) {
	e := newFloorEvent(size)
	slabs := newSlabs(64)
	rec := uint64(e.rec)
	Run(b, size, parallel, func() {
		cpu, ts := 0, int64(0)
		if e.tsc {
			cpu, ts = hw.CPUAndTSC()
		} else {
			cpu, ts = e.readClock()
		}
		s := slabs[cpu&63]
		s.put(e, (s.off.Add(rec)-rec)%ringSize, ts)
	})
}

// FloorFair is the floor written as fairly as a floor can be: the least any tracer of
// EVENT_HEADER records must do, and nothing it need not. Its loop is written out here, as
// a user's loop around EventWrite is, so no closure is called an event (Run's is); each
// event reads the processor number and the time-stamp counter in one call
// (hw.CPUAndTSC, as the emulator's write path does), takes its record with one atomic
// add on that processor's slab, copies the whole 0x50-byte EVENT_HEADER from a template
// with the 8-byte timestamp patched in, and copies the payload. The slab is a ring
// whose size is a power of two, so wrapping is a mask. Where the clock is not the
// time-stamp counter it is Floor.
func FloorFair(b *testing.B, size int, parallel bool) {
	e := newFloorEvent(size)
	if !e.tsc {
		Floor(b, size, parallel)
		return
	}
	slabs := newSlabs(64)
	rec := uint64(e.rec)
	hdr, payload := &e.hdr, e.payload
	b.SetBytes(int64(size))
	undo := Start(b, parallel)
	// The event is written out in both loops: as a function it does not inline (its
	// cost is over the compiler's budget), and a call would be the closure call again.
	if parallel {
		Parallel(b, func(n int) {
			for range n {
				cpu, ts := hw.CPUAndTSC()
				s := slabs[cpu&63]
				off := (s.off.Add(rec) - rec) & (ringSize - 1)
				dst := s.data[off : off+rec]
				if raceEnabled { // see slab.put; a constant, so gone from other builds
					s.race.Lock()
				}
				copy(dst, hdr[:])
				binary.LittleEndian.PutUint64(dst[abi.OffEventTimeStamp:], uint64(ts))
				copy(dst[abi.EventHeaderSize:], payload)
				if raceEnabled {
					s.race.Unlock()
				}
			}
		})
	} else {
		b.ResetTimer()
		for range b.N {
			cpu, ts := hw.CPUAndTSC()
			s := slabs[cpu&63]
			off := (s.off.Add(rec) - rec) & (ringSize - 1)
			dst := s.data[off : off+rec]
			copy(dst, hdr[:]) // one goroutine: no other writer to race with
			binary.LittleEndian.PutUint64(dst[abi.OffEventTimeStamp:], uint64(ts))
			copy(dst[abi.EventHeaderSize:], payload)
		}
	}
	undo()
	EventsPerSecond(b)
}

// floorEvent is what the floors write for each event and the clock they stamp it with,
// set up once per benchmark.
type floorEvent struct {
	clk     *clock.Clock
	tsc     bool // the clock reads the time-stamp counter: one call gives both readings
	hdr     [abi.EventHeaderSize]byte
	payload []byte
	rec     uint32 // the record's aligned size
}

func newFloorEvent(size int) *floorEvent {
	clk, _ := clock.New(clock.QPC)
	return &floorEvent{clk: clk, tsc: clk.ReadsTSC(), payload: make([]byte, size),
		rec: uint32(abi.Align(abi.EventHeaderSize + size))}
}

// readClock reads the processor number and a clock that is not the time-stamp counter.
// Each floor reads the counter with hw.CPUAndTSC in line, as the emulator's write path
// does; a helper choosing between the two would not inline and would add a call to the
// floor.
func (e *floorEvent) readClock() (int, int64) { return hw.CPU(), e.clk.Now() }

// put copies the header bytes, stamped ts, and the payload to the start of dst.
func (e *floorEvent) put(dst []byte, ts int64) {
	copy(dst, e.hdr[:])
	dst[abi.OffEventTimeStamp] = byte(ts)
	copy(dst[abi.EventHeaderSize:], e.payload)
}

// putRelease is put, then 1 stored at *flag after the record's bytes: the payload's copy
// and the store in one call, hw.CopyRelease, as the emulator's CopyPublish. As two calls
// (copy, then hw.StoreRelease) the call to the assembly store cost about 4 ns an event on
// one goroutine here, which the emulator does not pay.
func (e *floorEvent) putRelease(dst []byte, ts int64, flag *uint32) {
	copy(dst, e.hdr[:])
	dst[abi.OffEventTimeStamp] = byte(ts)
	hw.CopyRelease(dst[abi.EventHeaderSize:], e.payload, flag)
}

// The reservation word of FloorRef's slabs carries a writer reference in its high 32
// bits: CurrentOffset | ReferenceCount<<32, added to in one step. FloorCommit's slabs and
// FloorRecycle's buffers count reservations there instead, as the emulator's
// (session.Buffer.word) does.
const (
	refOne     = uint64(1) << 32
	refRelease = uint64(0xFFFFFFFF00000000) // adding it drops one reference
	oneRecord  = uint64(1) << 32            // one more reservation
)

// FloorRef is the floor plus the second atomic operation of the Windows reservation
// protocol (WMI_BUFFER_HEADER's ReferenceCount): the add that reserves the record also
// takes a reference, and the writer drops it after the copy, so that whoever closes a
// buffer can tell when its last record is complete. Nothing else changes from Floor: the
// difference between the two is what that publication costs. The emulator publishes
// records as FloorCommit does; this row shows what it would pay otherwise.
func FloorRef(b *testing.B, size int, parallel bool) {
	e := newFloorEvent(size)
	slabs := newSlabs(64)
	rec := uint64(e.rec)
	Run(b, size, parallel, func() {
		cpu, ts := 0, int64(0)
		if e.tsc {
			cpu, ts = hw.CPUAndTSC()
		} else {
			cpu, ts = e.readClock()
		}
		s := slabs[cpu&63]
		off := uint64(uint32(s.off.Add(rec|refOne))-uint32(rec)) % ringSize
		s.put(e, off, ts)
		s.off.Add(refRelease)
	})
}

// commitFlags is how many completion flags FloorCommit keeps a processor: the ordinals of
// its reservations wrap around them, as its offsets wrap around the ring.
const commitFlags = 1 << 12

// FloorCommit is the floor plus the publication the emulator's write path makes instead
// of a reference: the add that reserves the record also numbers it (a count in the high
// half of the word), and after the copy the writer sets that record's completion flag
// with a plain store (in the payload's copy, hw.CopyRelease, as the emulator's), so that
// whoever closes a buffer can tell when its last record is complete without a second
// locked instruction. The difference between it
// and Floor is what the emulator's publication costs; between it and FloorRef, what it
// saves.
func FloorCommit(b *testing.B, size int, parallel bool) {
	e := newFloorEvent(size)
	slabs := newSlabs(64)
	rec := uint64(e.rec)
	Run(b, size, parallel, func() {
		cpu, ts := 0, int64(0)
		if e.tsc {
			cpu, ts = hw.CPUAndTSC()
		} else {
			cpu, ts = e.readClock()
		}
		s := slabs[cpu&63]
		w := s.off.Add(rec | oneRecord)
		s.putRelease(e, uint64(uint32(w)-uint32(rec))%ringSize, ts, &s.flags[(w>>32-1)%commitFlags])
	})
}

// recycleBufSize and recycleBufs are FloorRecycle's buffers: four of 64 KB a processor,
// the floor's 256 KB ring cut into the emulator's standard buffer size.
const (
	recycleBufSize = 64 << 10
	recycleBufs    = ringSize / recycleBufSize
	recycleStart   = abi.BufferHeaderSize // records start after the buffer header
)

// recycleFlags is how many records a FloorRecycle buffer can hold, and so its number of
// completion flags.
const recycleFlags = (recycleBufSize-recycleStart)/abi.EventHeaderSize + 1

// recycleBuf is one of FloorRecycle's fixed-size buffers. It is exactly 128 bytes and
// allocated on its own, like slab.
type recycleBuf struct {
	word atomic.Uint64 // offset | reservations<<32; atomic, added to by writers, reset by the switcher
	// fit is how many reservations fitted before the one that crossed the end. Atomic;
	// stored by the crossing writer, read by the switcher a ring later.
	fit   atomic.Uint32
	data  []byte                    // recycleBufSize bytes; immutable slice header
	flags *[recycleFlags]uint32     // completion flags by ordinal: set by writers, read and cleared by the switcher
	_     [128 - 8 - 5*ptrSize]byte // fit and the padding after it take a word; the slice three, the pointer one
}

func newRecycleBuf() *recycleBuf {
	bf := &recycleBuf{data: make([]byte, recycleBufSize), flags: new([recycleFlags]uint32)}
	bf.word.Store(recycleStart)
	return bf
}

// recycleProc is one processor's current buffer and its free list: the ring of buffers
// it takes in order. Exactly 128 bytes, allocated on its own.
type recycleProc struct {
	cur  atomic.Pointer[recycleBuf] // atomic; installed by the writer that filled the last one
	next atomic.Uint32              // atomic; how many buffers this processor has taken
	bufs *[recycleBufs]*recycleBuf  // immutable
	_    [128 - 3*ptrSize]byte      // next and the padding after it take a word
}

// switchTo takes the processor's next free buffer in place of old, whose end the
// caller's reservation crossed: it waits until every record that fitted in the new buffer
// a ring ago is complete (none is in flight unless a writer was preempted a whole ring
// ago), clears their flags, empties it and installs it. A stale old (no longer current)
// is left alone. Only the writer whose reservation crossed old's end calls it, so one
// switch follows each buffer filled.
func (p *recycleProc) switchTo(old *recycleBuf) {
	if p.cur.Load() != old {
		return
	}
	nb := p.bufs[p.next.Add(1)%recycleBufs]
	fit := nb.fit.Load()
	for i := range fit {
		for atomic.LoadUint32(&nb.flags[i]) == 0 {
		}
	}
	clear(nb.flags[:fit])
	nb.fit.Store(0)
	nb.word.Store(recycleStart)
	p.cur.CompareAndSwap(old, nb)
}

// FloorRecycle is FloorCommit with fixed-size buffers recycled without a logger: each
// processor writes into its current 64 KB buffer; the writer whose reservation crosses
// the buffer's end takes the next buffer of that processor's free list (a ring of four,
// taken in order) and installs it, while other writers that find the buffer full try
// again. It leaves out what the emulator's logger does with a full buffer (sealing its
// header, handing it to the sink, the shared free list and waking the logger), so the
// difference between it and the emulator's write path is that hand-off, the event
// encoding and the API.
func FloorRecycle(b *testing.B, size int, parallel bool) {
	e := newFloorEvent(size)
	procs := make([]*recycleProc, 64)
	for i := range procs {
		p := &recycleProc{bufs: new([recycleBufs]*recycleBuf)}
		for j := range p.bufs {
			p.bufs[j] = newRecycleBuf()
		}
		p.cur.Store(p.bufs[0])
		procs[i] = p
	}
	rec := e.rec
	Run(b, size, parallel, func() {
		cpu, ts := 0, int64(0)
		if e.tsc {
			cpu, ts = hw.CPUAndTSC()
		} else {
			cpu, ts = e.readClock()
		}
		p := procs[cpu&63]
		bf := p.cur.Load()
		w := bf.word.Add(uint64(rec) | oneRecord)
		if end := uint32(w); end <= recycleBufSize {
			e.putRelease(bf.data[end-rec:], ts, &bf.flags[w>>32-1])
			return
		}
		p.writeSlow(e, bf, w, ts)
	})
}

// recycleWait is what a FloorRecycle writer does while it waits for another writer to
// switch a full buffer: it lets that writer run, which matters when writers outnumber
// the processors (that writer may be preempted). Tests replace it.
var recycleWait = runtime.Gosched

// writeSlow is the rest of a FloorRecycle write whose reservation (word w) did not fit
// in bf, out of line as the emulator's ReserveSlow is. The writer whose reservation
// crossed the end switches buffers; every other writer that finds the buffer full waits
// until the switch is done instead of adding to bf's word again. Adding again would let
// the offset, 32 bits in the word, run past 4 GB and wrap into the reservation count
// while the switching writer is preempted: a few milliseconds of 4 KB records, which
// two writers sharing one processor reach (the offset then read back as an end below
// the record's size).
func (p *recycleProc) writeSlow(e *floorEvent, bf *recycleBuf, w uint64, ts int64) {
	rec := e.rec
	for {
		if uint32(w)-rec <= recycleBufSize { // this reservation crossed the end
			bf.fit.Store(uint32(w>>32 - 1))
			p.switchTo(bf)
		} else {
			// Wait while bf is current and full. A writer that held bf since a ring ago
			// may find it emptied and installed again: then it goes on at once, for no
			// switch may come while it is the only writer.
			for p.cur.Load() == bf && uint32(bf.word.Load()) > recycleBufSize {
				recycleWait()
			}
		}
		bf = p.cur.Load()
		w = bf.word.Add(uint64(rec) | oneRecord)
		if end := uint32(w); end <= recycleBufSize {
			e.putRelease(bf.data[end-rec:], ts, &bf.flags[w>>32-1])
			return
		}
	}
}

// newSlabs allocates n slabs, each on its own 128-byte boundary, with their data.
func newSlabs(n int) []*slab {
	slabs := make([]*slab, n)
	for i := range slabs {
		slabs[i] = &slab{data: make([]byte, slabSize), flags: new([commitFlags]uint32)}
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

// Run times one(), on one goroutine or on GOMAXPROCS goroutines (Parallel; see Start), and reports bytes/s
// (of payload), allocations and events/s.
func Run(b *testing.B, size int, parallel bool, one func()) {
	b.SetBytes(int64(size))
	defer Start(b, parallel)()
	if parallel {
		Parallel(b, func(n int) {
			for range n {
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

// Start readies b for a benchmark's timed loop, which the caller writes next (Run, or a
// loop with the call in it where a closure would cost more than what is measured), and
// returns what undoes it. It reports allocations. Before Parallel it resets the
// timer: what the caller set up (the slabs, a session and its buffers) is not an event's
// time or allocation, and b.Loop resets the same for one goroutine. On one goroutine it
// pins the writer where PinEnv says.
func Start(b *testing.B, parallel bool) (undo func()) {
	b.ReportAllocs()
	if parallel {
		b.ResetTimer()
		return func() {}
	}
	return Pin(b)
}

// EventsPerSecond reports b.N over the elapsed time as "events/s".
func EventsPerSecond(b *testing.B) { PerSecond(b, "events/s") }

// PerSecond reports b.N over the elapsed time in unit ("events/s", "calls/s").
func PerSecond(b *testing.B, unit string) {
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, unit)
	}
}
