package session

import (
	"testing"

	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/logmode"
)

// A session whose buffers take the bytes of a stopped session's shows none of that
// session's records: Peek and the checker end every buffer at its own records, whatever
// lies past them (here the small records of the first session, past the end of a buffer
// of larger ones).
func TestReusedBufferMemoryShowsNoStaleRecords(t *testing.T) {
	p := Properties{LogFileMode: logmode.Buffering, BufferSize: 4, MinimumBuffers: 4, MaximumBuffers: 4}
	for round := range 2 { // the second round may reuse the first one's bytes, or the runs' before it
		first := startSynchronous(t, "first", 1, p)
		for range 400 { // the ring goes round: every buffer full of small records
			if err := first.Write(0, testEvent(8, 0xAB)); err != nil {
				t.Fatal(err)
			}
		}
		first.Stop()

		l := startSynchronous(t, "second", 1, p)
		const written = 30 // a full buffer of 100-byte records, whose tail the small ones filled, and more
		for range written {
			if err := l.Write(0, testEvent(100, 0x01)); err != nil {
				t.Fatal(err)
			}
		}
		records := 0
		if err := l.Peek(func(_ BufferView, data []byte) {
			if len(data) > 0x48 {
				n, err := etl.CountRecords(data, len(data))
				if err != nil {
					t.Errorf("round %d: %v", round, err)
				}
				records += n
			}
		}); err != nil {
			t.Fatal(err)
		}
		if records != written {
			t.Fatalf("round %d: Peek shows %d records, want the %d written", round, records, written)
		}
		if pending, _ := l.Check(func(rule, detail string) { t.Errorf("round %d: %s: %s", round, rule, detail) }); pending != written {
			t.Errorf("round %d: the checker counts %d records, want %d", round, pending, written)
		}
		l.Stop()
	}
}

// A writer whose stream has no spare takes the free list's buffer, else another stream's
// spare: a free buffer is free for every processor (Windows keeps one free list per
// logger), so the event is lost only when no buffer is free anywhere.
func TestSwitchTakesAnotherStreamsSpare(t *testing.T) {
	l := startSynchronous(t, "steal", 2, Properties{LogFileMode: logmode.RealTime, BufferSize: 4, MinimumBuffers: 4, MaximumBuffers: 4})
	defer l.Stop()
	l.freeMu.Lock()
	free := len(l.free)
	if free == 0 || l.spareCount() != 0 {
		l.freeMu.Unlock()
		t.Fatalf("%d free buffers and %d spares at start", free, l.spareCount())
	}
	b := l.free[free-1]
	l.free = l.free[:free-1]
	l.freeBuffers.Store(int64(len(l.free)))
	l.streams[0].spare.Store(b) // as if stream 0's full buffer had come back
	others := l.free
	l.free = nil // every other free buffer is out of reach: the spare is the only one
	l.freeBuffers.Store(0)
	l.freeMu.Unlock()
	defer func() {
		l.freeMu.Lock()
		l.free = append(l.free, others...)
		l.freeBuffers.Store(int64(len(l.free)))
		l.freeMu.Unlock()
	}()
	lost := l.Stats().EventsLost
	for range 2 { // two events of 4,024 bytes: the second needs a buffer of its own on stream 1
		if err := l.Write(1, testEvent(4096-0x48-0x50, 1)); err != nil {
			t.Fatalf("write on stream 1: %v (stream 0's spare was free)", err)
		}
	}
	if l.Stats().EventsLost != lost || l.streams[0].spare.Load() != nil {
		t.Fatalf("EventsLost %d (was %d), stream 0's spare %v; want none lost and the spare taken", l.Stats().EventsLost, lost, l.streams[0].spare.Load() != nil)
	}
}

// A buffer that a writer overflowed and another took out of its stream, closed before the
// writer that crossed its end stored SavedOffset (recycle closes it while that writer is
// between its reservation and the store), shows its records to Peek and the checker up to
// that SavedOffset once stored, not none.
func TestFilledClosedBeforeSaved(t *testing.T) {
	l := startSynchronous(t, "r", 1, Properties{LogFileMode: logmode.Buffering, BufferSize: 4, MinimumBuffers: 4, MaximumBuffers: 4})
	defer l.Stop()
	const written = 5
	for range written {
		if err := l.Write(0, testEvent(100, 1)); err != nil {
			t.Fatal(err)
		}
	}
	b := l.streams[0].cur.Load()
	const need = 4096 // crosses the end
	w := b.word.Add(need | oneRecord)
	if !l.streams[0].cur.CompareAndSwap(b, nil) { // another writer switched it out
		t.Fatal("the buffer left its stream")
	}
	l.queueFlush(b)
	l.recycle() // closes b, which it cannot complete: SavedOffset is not stored yet
	fit := ordinal(w)
	b.saved.Store(b.settle(fit) | uint64(uint32(w)-need) | uint64(fit)<<32) // the crossing writer's store
	records := 0
	if err := l.Peek(func(_ BufferView, data []byte) {
		if len(data) > 0x48 {
			n, _ := etl.CountRecords(data, len(data))
			records += n
		}
	}); err != nil {
		t.Fatal(err)
	}
	if records != written {
		t.Errorf("Peek shows %d records, want %d", records, written)
	}
	if pending, _ := l.Check(func(rule, detail string) { t.Errorf("%s: %s", rule, detail) }); pending != written {
		t.Errorf("the checker counts %d records, want %d", pending, written)
	}
}

// A stopped session's completion flags go back to the pool cleared, even a flag a free
// buffer should never have held: the next session's buffers take the memory with its
// flags, and a set flag there would complete a record that no writer wrote.
func TestReusedBufferFlagsAreClear(t *testing.T) {
	p := Properties{LogFileMode: logmode.RealTime, BufferSize: 8, MinimumBuffers: 3, MaximumBuffers: 3}
	first := startSynchronous(t, "first", 1, p)
	first.freeMu.Lock()
	given := map[*bufMem]bool{}
	for _, b := range first.free {
		for i := range b.commit {
			b.commit[i] = 1
		}
		given[b.mem] = true
	}
	first.freeMu.Unlock()
	first.Stop()

	second := startSynchronous(t, "second", 1, p)
	defer second.Stop()
	reused := 0
	second.freeMu.Lock()
	for _, b := range second.all {
		if given[b.mem] {
			reused++
		}
		for i, f := range b.commit {
			if f != 0 {
				t.Errorf("buffer %d: completion flag %d is set in a new session", b.id, i)
				break
			}
		}
	}
	second.freeMu.Unlock()
	if reused == 0 {
		t.Skip("the pool gave none of the first session's memory back (a collection emptied it)")
	}
}
