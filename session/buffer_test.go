package session

import (
	"testing"

	"github.com/etwemu/etwemu/abi"
)

// reserveIn reserves need bytes in b as Write's first attempt does, and returns the word
// the add returned and whether the record fits.
func reserveIn(b *Buffer, need uint32) (uint64, bool) {
	w := b.word.Add(uint64(need) | oneRecord)
	return w, uint32(w) <= uint32(len(b.data)) // as Reserve tests it
}

// fillToCrossing reserves need bytes at a time in b, committing nothing, until a
// reservation does not fit, and returns the words of those that fitted and of the one
// that crossed the end.
func fillToCrossing(b *Buffer, need uint32) (fitted []uint64, crossing uint64) {
	for {
		w, ok := reserveIn(b, need)
		if !ok {
			return fitted, w
		}
		fitted = append(fitted, w)
	}
}

// A buffer closes at once, but tryClose reports it complete only when every record
// reserved before the close has its flag; reservations after the close fail; views count
// the records in flight as ReferenceCount; and the flags are clear when the buffer opens
// again, so an old record's flag never stands for a new one.
func TestCloseWaitsForCommitFlags(t *testing.T) {
	const size = 4096
	b := newBuffer(size, 0)
	if got, want := len(b.commit), (size-abi.BufferHeaderSize)/minRecord+1; got != want {
		t.Fatalf("commit flags %d, want %d", got, want)
	}
	for round := 0; round < 3; round++ {
		b.open(0)
		var ws []uint64
		for i := 0; i < 5; i++ {
			w, ok := reserveIn(b, 0x60)
			if !ok {
				t.Fatalf("round %d: reservation %d did not fit", round, i)
			}
			ws = append(ws, w)
		}
		b.publish(ws[0])
		b.publish(ws[2])
		if v := b.View(); v.ReferenceCount != 3 {
			t.Fatalf("round %d: ReferenceCount %d with three records in flight, want 3", round, v.ReferenceCount)
		}
		if _, ok := b.tryClose(size); ok {
			t.Fatalf("round %d: closed complete with three records in flight", round)
		}
		if _, ok := reserveIn(b, 0x60); ok {
			t.Fatalf("round %d: a reservation succeeded in a closed buffer", round)
		}
		b.publish(ws[1])
		b.publish(ws[4])
		if _, ok := b.tryClose(size); ok {
			t.Fatalf("round %d: closed complete with record 3 in flight", round)
		}
		if v := b.View(); v.ReferenceCount != 1 || !v.Closed {
			t.Fatalf("round %d: view %+v, want closed with ReferenceCount 1", round, v)
		}
		b.publish(ws[3])
		end, ok := b.tryClose(size)
		if want := uint32(abi.BufferHeaderSize + 5*0x60); !ok || end != want {
			t.Fatalf("round %d: tryClose = %#x, %v; want %#x, true", round, end, ok, want)
		}
		if again, ok := b.tryClose(size); !ok || again != end {
			t.Fatalf("round %d: a second tryClose = %#x, %v", round, again, ok)
		}
		for i, f := range b.commit {
			if f != 0 {
				t.Fatalf("round %d: flag %d still set after the close", round, i)
			}
		}
		if v := b.View(); v.ReferenceCount != 0 {
			t.Fatalf("round %d: complete buffer has ReferenceCount %d", round, v.ReferenceCount)
		}
	}
}

// When a reservation crosses the end, the buffer's records are those before it: the
// crossing writer's SavedOffset carries how many fit, tryClose waits for it before it
// can tell, and it waits only for those records' flags, not for the refused ones'.
func TestCloseAfterCrossingCountsFittedRecords(t *testing.T) {
	const size = 1024
	l := &Logger{bufSize: size}
	b := newBuffer(size, 0)
	b.open(0)
	// the crossing writer records SavedOffset below, after the close
	fitted, crossing := fillToCrossing(b, 0x100)
	refused, _ := reserveIn(b, 0x100) // a second refusal, never committed
	if _, ok := b.tryClose(size); ok {
		t.Fatal("closed complete before the crossing writer stored SavedOffset")
	}
	if v := b.View(); v.ReferenceCount != uint32(len(fitted))+2 {
		t.Fatalf("ReferenceCount %d before SavedOffset, want every reservation (%d)", v.ReferenceCount, len(fitted)+2)
	}
	// full stores SavedOffset; the logger is not collecting, so it switches nothing
	if err := l.full(&stream{}, 0, b, crossing, 0x100); err != ErrStopped {
		t.Fatalf("full: %v, want ErrStopped from a logger that is not collecting", err)
	}
	if err := l.full(&stream{}, 0, b, refused, 0x100); err != ErrStopped {
		t.Fatalf("full: %v", err)
	}
	if len(fitted) != (size-abi.BufferHeaderSize)/0x100 {
		t.Fatalf("%d records fitted", len(fitted))
	}
	if _, ok := b.tryClose(size); ok {
		t.Fatal("closed complete with every fitted record in flight")
	}
	for _, w := range fitted {
		b.publish(w)
	}
	end, ok := b.tryClose(size)
	if want := uint32(abi.BufferHeaderSize + len(fitted)*0x100); !ok || end != want {
		t.Fatalf("tryClose = %#x, %v; want %#x, true", end, ok, want)
	}
	if v := b.View(); v.SavedOffset != end || v.ReferenceCount != 0 {
		t.Fatalf("view %+v", v)
	}
}

// The writer whose reservation crosses the end settles the buffer when every record
// before its own is complete: it clears their flags and marks SavedOffset settled, and
// tryClose then completes the buffer without the flags. With one record in flight it
// leaves them to tryClose.
func TestCrossingWriterSettles(t *testing.T) {
	const size = 1024
	l := &Logger{bufSize: size}
	for _, inFlight := range []bool{false, true} {
		b := newBuffer(size, 0)
		b.open(0)
		fitted, crossing := fillToCrossing(b, 0x100)
		for i, w := range fitted {
			if !inFlight || i != 1 {
				b.publish(w)
			}
		}
		if err := l.full(&stream{}, 0, b, crossing, 0x100); err != ErrStopped {
			t.Fatalf("full: %v", err)
		}
		s := b.saved.Load()
		if got := s&settledBit != 0; got == inFlight {
			t.Fatalf("in flight %v: settled %v", inFlight, got)
		}
		if fit := uint32(s >> 32); fit != uint32(len(fitted)) {
			t.Fatalf("in flight %v: SavedOffset says %d records fit, %d did", inFlight, fit, len(fitted))
		}
		if inFlight {
			if b.commit[0] != 1 {
				t.Fatal("flags cleared with a record in flight")
			}
			if v := b.View(); v.ReferenceCount != 1 {
				t.Fatalf("ReferenceCount %d with one record in flight", v.ReferenceCount)
			}
			if _, ok := b.tryClose(size); ok {
				t.Fatal("closed complete with a record in flight")
			}
			b.publish(fitted[1])
		} else {
			for i, f := range b.commit {
				if f != 0 {
					t.Fatalf("settled, but flag %d is still set", i)
				}
			}
		}
		end, ok := b.tryClose(size)
		if want := uint32(abi.BufferHeaderSize + len(fitted)*0x100); !ok || end != want {
			t.Fatalf("in flight %v: tryClose = %#x, %v; want %#x, true", inFlight, end, ok, want)
		}
		if v := b.View(); v.SavedOffset != end || v.ReferenceCount != 0 {
			t.Fatalf("in flight %v: view %+v", inFlight, v)
		}
	}
}

// firstUnset, which reads the flags eight at a time where hw.WideLoads allows, finds what
// a scan of one flag at a time finds: for every start and end within 27 flags (three
// blocks of eight and part of a fourth), with no flag, every flag, or every flag but one
// set.
func TestFirstUnsetMatchesOneByOne(t *testing.T) {
	const n = 27
	b := &Buffer{bufferFields: bufferFields{commit: newFlags(n)}}
	oneByOne := func(from, fit uint32) uint32 {
		for ; from < fit && b.commit[from] != 0; from++ {
		}
		return from
	}
	for unset := -2; unset < n; unset++ { // -2: none set; -1: all set
		for i := range b.commit {
			b.commit[i] = 0
			if unset != -2 && i != unset {
				b.commit[i] = 1
			}
		}
		for fit := uint32(0); fit <= n; fit++ {
			for from := uint32(0); from <= fit; from++ {
				if got, want := b.firstUnset(from, fit), oneByOne(from, fit); got != want {
					t.Fatalf("unset %d: firstUnset(%d, %d) = %d, one by one %d", unset, from, fit, got, want)
				}
			}
		}
	}
}
