package etl

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/etwemu/etwemu/abi"
)

func TestSealedRecordsWalk(t *testing.T) {
	buf := bytes.Repeat([]byte{0xFF}, 512)
	off := abi.BufferHeaderSize
	for _, size := range []int{abi.EventHeaderSize + 3, abi.EventHeaderSize + 16} {
		h := abi.EventHeader{Size: uint16(size), HeaderType: abi.EventHeaderEvent64}
		h.Encode(buf[off:])
		off += abi.Align(size)
	}
	hdr := abi.BufferHeader{BufferSize: 512, Offset: uint32(off)}
	hdr.Encode(buf)
	var sizes []int
	if err := SealedRecords(buf, func(r Record) error { sizes = append(sizes, r.Size); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 2 || sizes[0] != 0x53 || sizes[1] != 0x60 {
		t.Fatalf("sizes %v", sizes)
	}
	// A corrupt size is reported with its offset, not a panic.
	binary.LittleEndian.PutUint16(buf[abi.BufferHeaderSize:], 0x400)
	if err := SealedRecords(buf, func(Record) error { return nil }); err == nil {
		t.Fatal("oversized record accepted")
	}
	hdr.Offset = 4096
	hdr.Encode(buf)
	if err := SealedRecords(buf, func(Record) error { return nil }); err == nil {
		t.Fatal("Offset past the buffer accepted")
	}
}

// TestRecordsSystemHeader walks a system record with three PMC counters after an
// EVENT_HEADER record, and refuses one whose size cannot hold the counters its marker
// announces.
func TestRecordsToSystemHeader(t *testing.T) {
	buf := make([]byte, 0x200)
	le := binary.LittleEndian
	off := abi.BufferHeaderSize
	le.PutUint16(buf[off:], abi.EventHeaderSize)
	le.PutUint16(buf[off+2:], abi.EventHeaderEvent64)
	off += abi.EventHeaderSize
	le.PutUint32(buf[off:], abi.SystemTraceMarker64|3<<abi.TraceHeaderPMCShift)
	le.PutUint16(buf[off+abi.OffSystemSize:], abi.SystemHeaderSize+24+5)
	end := off + abi.Align(abi.SystemHeaderSize+24+5)
	var sizes []int
	if err := RecordsTo(buf, end, func(r Record) error { sizes = append(sizes, r.Size); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(sizes) != 2 || sizes[1] != abi.SystemHeaderSize+29 {
		t.Fatalf("sizes %v", sizes)
	}
	le.PutUint16(buf[off+abi.OffSystemSize:], abi.SystemHeaderSize+16) // room for two counters, marker says three
	if err := RecordsTo(buf, end, func(Record) error { return nil }); err == nil {
		t.Fatal("a system record too small for its counters walked")
	}
}

// TestCountRecordsFraming counts by framing what RecordsTo walks, and both refuse an
// unknown marker, naming it, after the records before it.
func TestCountRecordsFraming(t *testing.T) {
	buf := make([]byte, 0x200)
	off := abi.BufferHeaderSize
	for range 3 {
		h := abi.EventHeader{Size: abi.EventHeaderSize + 5, HeaderType: abi.EventHeaderEvent64}
		h.Encode(buf[off:])
		off += abi.Align(abi.EventHeaderSize + 5)
	}
	if n, err := CountRecords(buf, off); n != 3 || err != nil {
		t.Fatalf("CountRecords = %d, %v; want 3", n, err)
	}
	binary.LittleEndian.PutUint32(buf[off:], 0x12340010) // size 16, a marker no header kind has
	end := off + 16
	n, err := CountRecords(buf, end)
	if n != 3 || err == nil || !bytes.Contains([]byte(err.Error()), []byte("0x12340010")) {
		t.Fatalf("CountRecords past an unknown marker = %d, %v; want 3 and an error naming it", n, err)
	}
	walked := 0
	if err := RecordsTo(buf, end, func(Record) error { walked++; return nil }); walked != 3 || err == nil {
		t.Fatalf("RecordsTo walked %d, %v; want 3 and an error", walked, err)
	}
}

// A buffer's clock word counts only with a clock type ETW knows: before 6.2 the same
// eight bytes are a list link (an 8-aligned pointer, clock type 0) or zero.
func TestBufferClockNeedsAClockType(t *testing.T) {
	b := Buffer{Header: abi.BufferHeader{ClockFrequency: 0xFFFFF80012345670, StartTime: 133_000_000_000_000_000, StartPerfClock: 5}}
	if c, ok := b.Clock(); ok {
		t.Fatalf("a list link read as clock %+v", c)
	}
	b.Header.ClockFrequency = abi.ClockFrequency(1, 10_000_000) // QPC at 10 MHz
	if _, ok := b.Clock(); !ok {
		t.Fatal("a QPC clock word not read")
	}
}

// BenchmarkCountRecords counts the records of a full 64 KB buffer of 64-byte events, as
// the counting sink does for every buffer the demo's logger hands on, here with the
// buffer in this processor's cache.
func BenchmarkCountRecords(b *testing.B) {
	buf := make([]byte, 64<<10)
	off := abi.BufferHeaderSize
	for off+abi.EventHeaderSize+64 <= len(buf) {
		h := abi.EventHeader{Size: abi.EventHeaderSize + 64, HeaderType: abi.EventHeaderEvent64}
		h.Encode(buf[off:])
		off += abi.Align(abi.EventHeaderSize + 64)
	}
	want, _ := CountRecords(buf, off)
	b.SetBytes(int64(off))
	for b.Loop() {
		if n, err := CountRecords(buf, off); n != want || err != nil {
			b.Fatal(n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*want), "ns/record")
}

// CountRecords' fast path gives frameRecord's answers: on buffers of records of every
// framing kind, some cut, some with sizes too small or past the end, some with unknown
// markers or the end-of-data fill, the count and the error are those of a walk by
// frameRecord alone.
func TestCountRecordsMatchesFrameRecord(t *testing.T) {
	byFrame := func(data []byte, end int) (int, string) {
		n := 0
		for off := abi.BufferHeaderSize; off < end; n++ {
			r, more, err := frameRecord(data, off, end)
			switch {
			case err != nil:
				return n, "etl: " + err.Error()
			case r.Kind == KindUnknown:
				return n, fmt.Sprintf("etl: unknown record marker %#08x at offset %#x", r.Marker, r.Offset)
			case !more:
				return n, ""
			}
			off += abi.Align(r.Size)
		}
		return n, ""
	}
	var markers []uint32 // every header type byte and then some, the message flags, the fill
	for typ := range uint32(0x20) {
		markers = append(markers, flagsHeader<<24|typ<<16)
	}
	markers = append(markers, flagsMessage<<24, 0x80<<24, endOfData, 0xC0FF0000)
	rng := rand.New(rand.NewPCG(1, 2))
	buf := make([]byte, 0x400)
	for i := range 20000 {
		clear(buf)
		off := abi.BufferHeaderSize
		for off+8 <= len(buf) && rng.IntN(8) != 0 {
			m := markers[rng.IntN(len(markers))]
			if m != endOfData {
				m |= uint32(rng.IntN(1 << 16)) // a size, or a version with PMC and PEBS items
			}
			size := 8 + rng.IntN(0x90)
			binary.LittleEndian.PutUint32(buf[off:], m)
			if rng.IntN(2) == 0 {
				binary.LittleEndian.PutUint16(buf[off:], uint16(size)) // where most kinds keep it
			}
			binary.LittleEndian.PutUint16(buf[off+4:], uint16(size)) // where system kinds do
			off += abi.Align(size)
		}
		end := min(len(buf), abi.BufferHeaderSize+rng.IntN(len(buf)-abi.BufferHeaderSize+1))
		want, wantErr := byFrame(buf, end)
		got, err := CountRecords(buf, end)
		if gotErr := fmt.Sprint(err); got != want || err == nil && wantErr != "" || err != nil && gotErr != wantErr {
			t.Fatalf("buffer %d, end %#x: CountRecords = %d, %v; frameRecord's walk %d, %q", i, end, got, err, want, wantErr)
		}
	}
}

// A record cut after its marker is an error naming its header kind's own size, whatever
// items (here a PMC counter) the marker announces after it.
func TestCutRecordNamesItsHeaderSize(t *testing.T) {
	buf := make([]byte, abi.BufferHeaderSize+4)
	binary.LittleEndian.PutUint32(buf[abi.BufferHeaderSize:], abi.SystemTraceMarker64|1<<abi.TraceHeaderPMCShift)
	_, err := CountRecords(buf, len(buf))
	if want := fmt.Sprintf("system header needs %#x bytes, 0x4 left", SystemHeaderSize); err == nil || !bytes.Contains([]byte(err.Error()), []byte(want)) {
		t.Fatalf("CountRecords of a cut system record: %v; want an error saying %q", err, want)
	}
}

// A record whose size runs past the end of data is an error even where the buffer's
// bytes go on (the walk reads a buffer's filled bytes, not its tail): CountRecords counts
// the records before it, and RecordsTo refuses it.
func TestRecordPastEndOfData(t *testing.T) {
	buf := make([]byte, 0x400)
	off := abi.BufferHeaderSize
	h := abi.EventHeader{Size: abi.EventHeaderSize + 8, HeaderType: abi.EventHeaderEvent64}
	h.Encode(buf[off:])
	off += abi.Align(abi.EventHeaderSize + 8)
	h.Size = abi.EventHeaderSize + 0x40
	h.Encode(buf[off:])
	end := off + abi.EventHeaderSize + 8 // the second record's last 0x38 bytes are past end
	if n, err := CountRecords(buf, end); n != 1 || err == nil || !bytes.Contains([]byte(err.Error()), []byte("runs past the end of data")) {
		t.Fatalf("CountRecords = %d, %v; want 1 and an error naming the record that runs past the end", n, err)
	}
	if err := RecordsTo(buf, end, func(Record) error { return nil }); err == nil {
		t.Fatal("RecordsTo walked a record past the end of data")
	}
}
