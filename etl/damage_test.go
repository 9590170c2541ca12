package etl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/xpress"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// fileOf writes bufs to a finalized SEQUENTIAL file (EndTime set) and returns its bytes.
func fileOf(t *testing.T, compress bool, bufs [][]byte) []byte {
	t.Helper()
	return fileWith(t, testInfo(winver.V2004, modeSequential, 0), compress, bufs)
}

// fileWith writes bufs to a finalized file of info's mode and returns its bytes.
func fileWith(t *testing.T, info HeaderInfo, compress bool, bufs [][]byte) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "f.etl")
	w, err := Create(Options{Path: path, BufferSize: testBuf, Info: info, Compress: compress})
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, bufs)
	if err := w.Close(Counters{EndTime: 133_000_000_100_000_000}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// walkAll walks b and returns the event ids read and Walk's error.
func walkAll(t *testing.T, b []byte) ([]int, error) {
	t.Helper()
	rd, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	err = rd.Walk(func(_ *Buffer, r Record) error {
		ids = append(ids, int(r.Event.Descriptor.ID))
		return nil
	})
	return ids, err
}

// damage returns err as a *DamageError, failing the test when it is not one.
func damage(t *testing.T, err error) *DamageError {
	t.Helper()
	var d *DamageError
	if !errors.As(err, &d) {
		t.Fatalf("error %v (%T), want a *DamageError", err, err)
	}
	if code, _ := winerr.Code(err); code != 1392 {
		t.Errorf("code %d, want ERROR_FILE_CORRUPT (1392)", code)
	}
	return d
}

func idsOf(first, n int) []int {
	var out []int
	for i := range n {
		out = append(out, 10*(first+i), 10*(first+i)+1, 10*(first+i)+2)
	}
	return out
}

// A bad record costs its buffer: the walk goes on at the next buffer and then reports the
// damage with the buffer's offset.
func TestBadRecordCostsItsBuffer(t *testing.T) {
	good := fileOf(t, false, buffers(6))
	bad := patch(good, 3*testBuf+abi.BufferHeaderSize, 0xC013FFF0) // buffer 3's first record: size 0xFFF0
	ids, err := walkAll(t, bad)
	want := append(idsOf(0, 2), idsOf(3, 3)...)
	if !slicesEqual(ids, want) {
		t.Errorf("read ids %v, want %v (buffer 3 of 6 lost, the rest read)", ids, want)
	}
	d := damage(t, err)
	var re *RecordError
	if d.Lost != 1 || d.Stopped || d.Buffers != 7 || d.Written != 7 || !strings.Contains(err.Error(), "file offset 0x3000") || !errors.As(err, &re) || re.FileOffset != 0x3000 {
		t.Errorf("damage %+v: %v", d, err)
	}
}

// A BufferSize in an uncompressed buffer's header that no buffer of the file can have
// (below a header, above the file's) costs that buffer: every buffer stored uncompressed
// has the file's size, so the reading goes on one BufferSize later. (A size of 0 or one
// past the reader's bound ended the reading there, and a size of two buffers swallowed
// the next buffer, unsaid.) In a compressed file, a buffer whose compressed flag is the
// damage is read by its own stored size, costs itself, and the reading goes on after it.
func TestBadBufferSizeCostsItsBuffer(t *testing.T) {
	good := fileOf(t, false, buffers(6))
	for _, size := range []uint32{0, abi.BufferHeaderSize - 8, testBuf + 8, 2 * testBuf, maxBufferSize + 1, 0xFFFFFFFF} {
		bad := patch(good, 3*testBuf, size) // WMI_BUFFER_HEADER's first field: BufferSize
		ids, err := walkAll(t, bad)
		if want := append(idsOf(0, 2), idsOf(3, 3)...); !slicesEqual(ids, want) {
			t.Errorf("BufferSize %#x: read ids %v, want %v (buffer 3 of 6 lost, the rest read)", size, ids, want)
		}
		d := damage(t, err)
		if d.Lost != 1 || d.Stopped || d.Buffers != 7 || !strings.Contains(err.Error(), fmt.Sprintf("offset 0x3000: BufferSize %#x ", size)) {
			t.Errorf("BufferSize %#x: damage %+v: %v", size, d, err)
		}
	}
	// The last buffer's: the reading goes on to the file's end, which is there.
	bad := patch(good, 6*testBuf, 2*testBuf)
	if ids, err := walkAll(t, bad); len(ids) != 15 || damage(t, err).Lost != 1 {
		t.Errorf("the last buffer's BufferSize: %d ids, %v", len(ids), err)
	}

	comp := fileOf(t, true, buffers(30)) // long enough that a BufferSize from buffer 2 ends inside the file
	rd, _ := NewReader(bytes.NewReader(comp), int64(len(comp)))
	var offs []int64 // the header buffer's offset, then each data buffer's
	for b, err := rd.Next(); err == nil; b, err = rd.Next() {
		offs = append(offs, b.FileOffset)
	}
	flagless := append([]byte{}, comp...)
	h, _ := abi.DecodeBufferHeader(flagless[offs[3]:])
	h.BufferFlag &^= abi.BufferFlagCompressed
	h.Encode(flagless[offs[3]:]) // data buffer 2, its stored size kept
	ids, err := walkAll(t, flagless)
	if want := append(idsOf(0, 2), idsOf(3, 27)...); !slicesEqual(ids, want) {
		t.Errorf("a compressed buffer without its flag: read ids %v, want %v", ids, want)
	}
	if d := damage(t, err); d.Lost != 1 || d.Stopped {
		t.Errorf("a compressed buffer without its flag: damage %+v: %v", d, err)
	}
}

// A buffer of zeros inside a file costs that buffer, plain or compressed: the reading
// goes on after it and reports it; zeros that run to the end of the file are space never
// written, the file's end; zeros followed by bytes that are no buffer stop the reading
// with damage. (The reading once ended at the zeros, quietly.)
func TestZeroedBufferCostsItsBuffer(t *testing.T) {
	for _, compress := range []bool{false, true} {
		good := fileOf(t, compress, buffers(6))
		rd, _ := NewReader(bytes.NewReader(good), int64(len(good)))
		var offs []int64
		for b, err := rd.Next(); err == nil; b, err = rd.Next() {
			offs = append(offs, b.FileOffset, b.FileOffset+int64(b.Stored))
		}
		// offs: start and end of the header buffer, then of each data buffer.
		hole := append([]byte{}, good...)
		clear(hole[offs[2*3]:offs[2*3+1]]) // data buffer 2 of 0..5
		ids, err := walkAll(t, hole)
		if want := append(idsOf(0, 2), idsOf(3, 3)...); !slicesEqual(ids, want) {
			t.Errorf("compressed %v: read ids %v, want %v (buffer 2 of 6 lost, the rest read)", compress, ids, want)
		}
		d := damage(t, err)
		if d.Lost != 1 || d.Stopped || d.Buffers != 7 || !strings.Contains(err.Error(), "of zeros where buffers were") {
			t.Errorf("compressed %v: damage %+v: %v", compress, d, err)
		}

		// Preallocated space: the file's own bytes, then zeros.
		tail := append(append([]byte{}, good...), make([]byte, 5*testBuf)...)
		if ids, err := walkAll(t, tail); err != nil || len(ids) != 18 {
			t.Errorf("compressed %v: zeros after the last buffer: %d ids, %v; want 18, nil", compress, len(ids), err)
		}

		// Zeros, then bytes that are not a buffer.
		junk := append([]byte{}, good[:offs[2*3]]...)
		junk = append(append(junk, make([]byte, 100)...), bytes.Repeat([]byte{0xAB}, 200)...)
		ids, err = walkAll(t, junk)
		d = damage(t, err)
		if !slicesEqual(ids, idsOf(0, 2)) || !d.Stopped || !strings.Contains(err.Error(), "that is not a buffer") {
			t.Errorf("compressed %v: zeros then junk: ids %v, damage %+v: %v", compress, ids, d, err)
		}
	}
}

// Zeros that end inside a buffer, plain or compressed, never make the reader go on at a
// guess that is not a buffer: every buffer it delivers starts where one was written.
// (After zeros ending in a compressed buffer's packed bytes, bytes there that framed as
// an uncompressed buffer of another size were read as one.)
func TestZerosEndingInsideABuffer(t *testing.T) {
	for _, compress := range []bool{false, true} {
		good := fileOf(t, compress, buffers(8))
		starts := map[int64]bool{}
		rd, _ := NewReader(bytes.NewReader(good), int64(len(good)))
		for b, err := rd.Next(); err == nil; b, err = rd.Next() {
			starts[b.FileOffset] = true
		}
		check := func(hole []byte, what string) {
			t.Helper()
			rd, err := NewReader(bytes.NewReader(hole), int64(len(hole)))
			if err != nil {
				t.Fatal(err)
			}
			for b, err := rd.Next(); err == nil; b, err = rd.Next() {
				if !starts[b.FileOffset] {
					t.Errorf("compressed %v, %s: a buffer read at %#x, where none was written", compress, what, b.FileOffset)
				}
			}
		}
		for n := abi.BufferHeaderSize; n < min(2*testBuf, len(good)-testBuf); n += 37 {
			hole := append([]byte{}, good...)
			clear(hole[testBuf : testBuf+n]) // from the first data buffer on
			check(hole, fmt.Sprintf("%d bytes of zeros", n))
		}
		// Zeros, then what frames as an uncompressed buffer of 256 bytes, not the file's
		// BufferSize, starting with a zero byte as a header's BufferSize of 0x100 does.
		hole := append([]byte{}, good...)
		clear(hole[testBuf : testBuf+300])
		(&abi.BufferHeader{BufferSize: 0x100, SavedOffset: 0x48, CurrentOffset: 0x48, Offset: 0x48}).Encode(hole[testBuf+300:])
		check(hole, "zeros before a header of another size")
	}
}

// A compressed buffer whose Offset claims 2 GB or more is damage, not a slice that size:
// on a 32-bit system the Offset, converted to an int, was negative and passed the bound.
func TestCompressedOffsetPast2GB(t *testing.T) {
	good := fileOf(t, true, buffers(3))
	rd, _ := NewReader(bytes.NewReader(good), int64(len(good)))
	rd.Next() // the header buffer
	first, err := rd.Next()
	if err != nil || !first.Compressed {
		t.Fatalf("first data buffer: %v, compressed %v", err, first != nil && first.Compressed)
	}
	bad := append([]byte{}, good...)
	h := first.Header
	h.Offset = 0x80000000
	h.Encode(bad[first.FileOffset:])
	ids, err := walkAll(t, bad)
	if d := damage(t, err); d.Lost != 1 || !slicesEqual(ids, idsOf(1, 2)) {
		t.Errorf("ids %v, damage %+v", ids, d)
	}
}

// A file that ends less than a buffer header after its last buffer ends there when the
// piece is zeros (preallocated space), and stops with damage when it is not.
func TestShortTrailingPiece(t *testing.T) {
	good := fileOf(t, false, buffers(2))
	if ids, err := walkAll(t, append(append([]byte{}, good...), make([]byte, 10)...)); err != nil || len(ids) != 6 {
		t.Errorf("10 zeros after the last buffer: %d ids, %v", len(ids), err)
	}
	ids, err := walkAll(t, append(append([]byte{}, good...), bytes.Repeat([]byte{1}, 10)...))
	if d := damage(t, err); len(ids) != 6 || !d.Stopped || !strings.Contains(err.Error(), "the file ends 10 bytes into a buffer header") {
		t.Errorf("10 bytes of data after the last buffer: %d ids, %v", len(ids), err)
	}
}

// Runs of zeros cost a read in proportion to their length: a file of 72-byte runs, each
// before a buffer, is read in about twice its size, not 64 KB a run.
func TestZeroRunsReadInProportion(t *testing.T) {
	good := fileOf(t, false, buffers(2))
	file := append([]byte{}, good[:testBuf]...) // the header buffer
	for range 200 {
		file = append(append(file, make([]byte, abi.BufferHeaderSize)...), good[testBuf:2*testBuf]...)
	}
	c := &countingReaderAt{r: bytes.NewReader(file)}
	rd, err := NewReader(c, int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	ids, buffersRead := 0, 0
	err = rd.Walk(func(b *Buffer, _ Record) error { ids++; return nil })
	buffersRead = rd.BuffersRead()
	if d := damage(t, err); d.Lost != 200 || buffersRead != 401 || ids != 600 {
		t.Errorf("%d records, %d buffers, damage %+v", ids, buffersRead, d)
	}
	if c.n > 3*int64(len(file)) {
		t.Errorf("read %d bytes of a %d-byte file", c.n, len(file))
	}
}

// countingReaderAt counts the bytes read through it.
type countingReaderAt struct {
	r io.ReaderAt
	n int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.n += int64(n)
	return n, err
}

// A file cut at a buffer boundary, whose finalized header counts more buffers, gives the
// records it holds and then "holds N of M buffers", through Walk and through Next.
func TestCutAtBufferBoundary(t *testing.T) {
	good := fileOf(t, false, buffers(6))
	cut := good[:4*testBuf]
	ids, err := walkAll(t, cut)
	if !slicesEqual(ids, idsOf(0, 3)) {
		t.Errorf("read ids %v", ids)
	}
	d := damage(t, err)
	if d.Buffers != 4 || d.Written != 7 || !strings.Contains(err.Error(), "holds 4 of 7 buffers") {
		t.Errorf("damage %+v: %v", d, err)
	}
	// Next, as consumers read: the buffers, then the same error, again on every call.
	rd, _ := NewReader(bytes.NewReader(cut), int64(len(cut)))
	n := 0
	for {
		_, err = rd.Next()
		if err != nil {
			break
		}
		n++
	}
	if _, again := rd.Next(); n != 4 || again != err || rd.Err() != err {
		t.Errorf("Next gave %d buffers then %v, then %v", n, err, again)
	}
	// The whole file reads without error.
	if ids, err := walkAll(t, good); err != nil || len(ids) != 18 {
		t.Errorf("whole file: %d ids, %v", len(ids), err)
	}
}

// A compressed file that ends inside a buffer (a session killed mid-flush) gives every
// whole buffer before it, then the damage.
func TestCutInsideCompressedBuffer(t *testing.T) {
	good := fileOf(t, true, buffers(8))
	rd, _ := NewReader(bytes.NewReader(good), int64(len(good)))
	var ends []int64
	for {
		b, err := rd.Next()
		if err != nil {
			break
		}
		ends = append(ends, b.FileOffset+int64(b.Stored))
	}
	cut := good[:(ends[5]+ends[6])/2] // halfway into the sixth data buffer
	if ends[6]-ends[5] < 2*abi.BufferHeaderSize {
		t.Fatalf("buffer 6 stored in %d bytes", ends[6]-ends[5])
	}
	ids, err := walkAll(t, cut)
	if !slicesEqual(ids, idsOf(0, 5)) {
		t.Errorf("read ids %v, want the five whole buffers' events", ids)
	}
	d := damage(t, err)
	if !d.Stopped || d.Offset != ends[5] || !strings.Contains(err.Error(), "runs past the end of the file") || !strings.Contains(err.Error(), "holds 6 of 9 buffers") {
		t.Errorf("damage %+v: %v", d, err)
	}
	// Open names the file in the report.
	path := filepath.Join(t.TempDir(), "cut.etl")
	os.WriteFile(path, cut, 0o644)
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := f.Walk(func(*Buffer, Record) error { return nil }); err == nil || !strings.HasPrefix(err.Error(), path+": ") {
		t.Errorf("Open's walk: %v, want the file's name first", err)
	}
}

// bomb is a compressed buffer of seq whose stream expands to n zero bytes after one
// EVENT_HEADER record (none with empty), while its Offset claims testBuf bytes.
func bomb(t *testing.T, seq int64, n int, empty bool) []byte {
	t.Helper()
	plain := sealed(seq, 0, 900, make([]byte, 100))
	if empty {
		plain = sealed(seq, 0, 900)
	}
	h, _ := abi.DecodeBufferHeader(plain)
	data := append(append([]byte{}, plain[abi.BufferHeaderSize:h.Offset]...), make([]byte, n)...)
	var table [1 << xpHashBits]int32
	out := append([]byte{}, plain[:abi.BufferHeaderSize]...)
	out = xpressCompress(out, data, &table)
	h.BufferSize, h.Offset = uint32(len(out)), testBuf
	h.BufferFlag |= abi.BufferFlagCompressed
	h.Encode(out)
	return out
}

// insertAfter returns file with extra inserted after its first n buffers.
func insertAfter(t *testing.T, file []byte, n int, extra ...[]byte) []byte {
	t.Helper()
	rd, _ := NewReader(bytes.NewReader(file), int64(len(file)))
	var at int64
	for range n {
		b, err := rd.Next()
		if err != nil {
			t.Fatal(err)
		}
		at = b.FileOffset + int64(b.Stored)
	}
	out := append([]byte{}, file[:at]...)
	for _, e := range extra {
		out = append(out, e...)
	}
	return append(out, file[at:]...)
}

// A compressed buffer decompresses to no more than the file's BufferSize: a stream that
// asks for 16 MB is corruption at its offset, and the reading goes on after it.
func TestCompressedBufferBounded(t *testing.T) {
	good := fileOf(t, true, buffers(4))
	b := bomb(t, 99, 16<<20, false)
	if len(b) > 200 {
		t.Fatalf("bomb of %d bytes", len(b))
	}
	file := insertAfter(t, good, 3, b)
	ids, err := walkAll(t, file)
	if !slicesEqual(ids, idsOf(0, 4)) {
		t.Errorf("read ids %v, want every buffer's but the bomb's", ids)
	}
	d := damage(t, err)
	if d.Lost != 1 || d.Stopped || !errors.Is(err, errExpandsPast) || !strings.Contains(err.Error(), "offset 0x") {
		t.Errorf("damage %+v: %v", d, err)
	}
	// The decoder stops at its bound: no more output than allowed, whatever the stream asks.
	out, err := xpressDecompress(nil, b[abi.BufferHeaderSize:], testBuf)
	if !errors.Is(err, errExpandsPast) || len(out) > testBuf {
		t.Errorf("bounded decompression: %d bytes, %v", len(out), err)
	}
}

// Every compressed buffer together decompresses to no more than maxExpansion times its
// stored bytes once past the floor: a file of buffers that each stay within BufferSize
// but expand 40-fold stops at the bound, with the records before it delivered. With the
// floor every reader has (expansionFloor), the same file reads whole.
func TestExpansionBudget(t *testing.T) {
	good := fileOf(t, true, buffers(1))
	var bombs [][]byte
	for i := range 200 {
		bombs = append(bombs, bomb(t, int64(10+i), testBuf-abi.BufferHeaderSize, true))
	}
	if ratio := testBuf / len(bombs[0]); ratio <= maxExpansion {
		t.Fatalf("each bomb expands %d-fold, not past maxExpansion", ratio)
	}
	file := insertAfter(t, good, 2, bombs...)
	for _, floor := range []int64{0, expansionFloor} {
		rd, err := NewReader(bytes.NewReader(file), int64(len(file)))
		if err != nil {
			t.Fatal(err)
		}
		rd.floor = floor
		read := 0
		err = rd.Walk(func(_ *Buffer, r Record) error {
			if r.Kind == KindUnknown { // each bomb gives one, the zeros' marker
				read++
			}
			return nil
		})
		// Each bomb read is also a damaged buffer: its zeros frame no record.
		d := damage(t, err)
		if floor == 0 {
			if !d.Stopped || !errors.Is(d.Stop, errBudget) || read < 3 || read >= 100 || d.Lost != read {
				t.Errorf("no floor: %d bombs read; damage %+v: %v", read, d, err)
			}
		} else if d.Stopped || read != len(bombs) || d.Lost != read {
			t.Errorf("a floor of %d bytes: %d bombs of %d read: %v", floor, read, len(bombs), err)
		}
	}
}

// A merge reads the buffers NextHeader found out of file order, so when ReadBuffer meets
// the bound the report counts the buffers whose content was read, not every buffer the
// index found: "N of the M buffers found read".
func TestReadBufferStopCountsWhatItRead(t *testing.T) {
	var bombs [][]byte
	for i := range 200 {
		bombs = append(bombs, bomb(t, int64(10+i), testBuf-abi.BufferHeaderSize, true))
	}
	file := insertAfter(t, fileOf(t, true, buffers(1)), 2, bombs...)
	rd, err := NewReader(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	rd.floor = 0
	var offs []int64
	for {
		b, err := rd.NextHeader()
		if err != nil {
			if err != io.EOF {
				t.Fatalf("index: %v", err)
			}
			break
		}
		offs = append(offs, b.FileOffset)
	}
	if len(offs) != 1+1+len(bombs) { // the header buffer, one data buffer and the bombs
		t.Fatalf("%d buffers indexed", len(offs))
	}
	slices.Reverse(offs) // as a merge may: not in file order
	opened := 1          // the header buffer
	for _, off := range offs {
		if rd.Stopped() {
			break
		}
		if _, err := rd.ReadBuffer(off); err == nil || !rd.Stopped() {
			opened++
		}
	}
	d := damage(t, rd.Err())
	want := fmt.Sprintf("; %d of the %d buffers found read", opened, len(offs))
	if !d.Stopped || !errors.Is(d.Stop, errBudget) || d.Opened != opened || d.Buffers != len(offs) || opened >= len(offs)/2 ||
		!strings.Contains(d.Error(), want) {
		t.Errorf("damage %+v, want %d opened: %v", d, opened, d)
	}
}

// recordBuffer is an uncompressed sealed buffer of testBuf bytes full of 8-byte
// EVENT_HEADER_ERROR records, each with a one-byte count that changes every four records.
func recordBuffer(seq int64) []byte {
	b := make([]byte, testBuf)
	off := abi.BufferHeaderSize
	for i := 0; off+8 <= testBuf; i++ {
		binary.LittleEndian.PutUint32(b[off:], 0xC00D0008)
		b[off+4] = byte(i/4 + int(seq))
		off += 8
	}
	h := abi.BufferHeader{BufferSize: testBuf, SavedOffset: uint32(off), CurrentOffset: uint32(off), SequenceNumber: seq,
		LoggerID: 3, State: abi.BufferStateFlush, Offset: uint32(off), BufferFlag: abi.BufferFlagProcIndex}
	h.Encode(b)
	return b
}

// The file yields at most one record per recordBytes bytes: a compressed file of
// minimal records that stays under maxExpansion still stops at the record bound.
func TestRecordBudget(t *testing.T) {
	var bufs [][]byte
	for i := range 400 {
		bufs = append(bufs, recordBuffer(int64(i+1)))
	}
	file := fileOf(t, true, bufs)
	rd, _ := NewReader(bytes.NewReader(file), int64(len(file)))
	n := int64(0)
	err := rd.Walk(func(*Buffer, Record) error { n++; return nil })
	if rd.expanded > maxExpansion*rd.packed {
		t.Fatalf("the file expands %d-fold, past the expansion bound", rd.expanded/rd.packed)
	}
	d := damage(t, err)
	if !d.Stopped || !errors.Is(err, errBudget) || n > rd.recordBudget() || n < rd.recordBudget()-testBuf/8 {
		t.Errorf("%d records read of a budget of %d; damage %+v: %v", n, rd.recordBudget(), d, err)
	}
}

// Not an ETL file says so, with ERROR_FILE_CORRUPT: text, a file shorter than a buffer
// header, and a buffer whose first record is not the log-file header event.
func TestNotAnETLFile(t *testing.T) {
	noHeader := make([]byte, 4096)
	(&abi.BufferHeader{BufferSize: 4096, SavedOffset: 0x48, CurrentOffset: 0x48}).Encode(noHeader)
	abi.FillUnused(noHeader[0x48:])
	for _, b := range [][]byte{[]byte(strings.Repeat("## a markdown file\n", 20)), []byte("tiny"), noHeader} {
		_, err := NewReader(bytes.NewReader(b), int64(len(b)))
		if code, _ := winerr.Code(err); err == nil || !strings.Contains(err.Error(), "not an ETL file") || code != winerr.ErrFileCorrupt.Code() ||
			!strings.HasSuffix(err.Error(), "(ERROR_FILE_CORRUPT (1392))") {
			t.Errorf("%q: %v", b[:4], err)
		}
	}
}

// An ETL file whose header buffer cannot be read (cut inside it, or its first record
// damaged) is damage with ERROR_FILE_CORRUPT, not a file of another kind.
func TestHeaderBufferDamage(t *testing.T) {
	good := fileOf(t, false, buffers(2))
	badFirst := patch(good, abi.BufferHeaderSize+4, 0xFFFF0000) // the header event's size past its buffer
	for name, b := range map[string][]byte{"cut inside buffer 0": good[:testBuf/2], "first record": badFirst} {
		_, err := NewReader(bytes.NewReader(b), int64(len(b)))
		if d := damage(t, err); !d.Stopped || strings.Contains(err.Error(), "not an ETL file") {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// The bounded decoder agrees with klauspost/compress/xpress on what the compressor makes.
func FuzzXpressBounded(f *testing.F) {
	f.Add([]byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"), 30)
	f.Add([]byte{1, 2, 3, 1, 2, 3, 1, 2, 3, 4}, 100)
	var table [1 << xpHashBits]int32
	f.Fuzz(func(t *testing.T, in []byte, limit int) {
		limit = max(limit, 0) % (2 * (len(in) + 1))
		for _, c := range [][]byte{xpressCompress(nil, in, &table), in} { // a valid stream, then any bytes
			want, werr := xpress.AppendDecompressed(nil, c)
			got, err := xpressDecompress(nil, c, limit)
			switch {
			case len(got) > limit:
				t.Fatalf("%d bytes out, limit %d", len(got), limit)
			case werr == nil && len(want) <= limit && (err != nil || !bytes.Equal(got, want)):
				t.Fatalf("%x: got %x, %v; want %x", c, got, err, want)
			case werr == nil && len(want) > limit && !errors.Is(err, errExpandsPast):
				t.Fatalf("%x: %d bytes past the limit %d: %v", c, len(want), limit, err)
			}
		}
	})
}

func slicesEqual(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var _ = io.EOF

// A compressed file the Writer wrote reads back whole, however well its events compress:
// 300 buffers of 64 KB, each holding one event of 65,000 zero bytes, expand more than
// a hundredfold, past maxExpansion and well within expansionFloor.
func TestCompressibleFileReadsWhole(t *testing.T) {
	const size = 64 << 10
	path := filepath.Join(t.TempDir(), "zeros.etl")
	w, err := Create(Options{Path: path, BufferSize: size, Info: testInfo(winver.V2004, modeSequential, 0), Compress: true})
	if err != nil {
		t.Fatal(err)
	}
	const n = 300
	for i := range n {
		b := make([]byte, size)
		ev := abi.EventHeader{Size: abi.EventHeaderSize + 65000, HeaderType: abi.EventHeaderEvent64, Flags: abi.EventFlag64BitHeader,
			TimeStamp: int64(i), ProviderID: testProvider, Descriptor: abi.EventDescriptor{ID: uint16(i), Level: 4}}
		ev.Encode(b[abi.BufferHeaderSize:])
		end := abi.BufferHeaderSize + abi.Align(int(ev.Size))
		abi.FillUnused(b[end:])
		(&abi.BufferHeader{BufferSize: size, SavedOffset: uint32(end), CurrentOffset: uint32(end), SequenceNumber: int64(i + 1),
			LoggerID: 3, State: abi.BufferStateFlush, Offset: uint32(end), BufferFlag: abi.BufferFlagProcIndex}).Encode(b)
		if r := w.WriteBuffer(b); r.Err != nil {
			t.Fatal(r.Err)
		}
	}
	if err := w.Close(Counters{EndTime: 133_000_000_100_000_000}); err != nil {
		t.Fatal(err)
	}
	file, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rd, err := NewReader(bytes.NewReader(file), int64(len(file)))
	if err != nil {
		t.Fatal(err)
	}
	read := 0
	err = rd.Walk(func(*Buffer, Record) error { read++; return nil })
	if err != nil || read != n {
		t.Fatalf("%d of %d events read: %v", read, n, err)
	}
	if rd.expanded <= 100*rd.packed {
		t.Errorf("the file expands %d-fold: the test shows nothing", rd.expanded/rd.packed)
	}
}

// A circular file wraps only once it is full, so one shorter than its MaximumFileSize by a
// buffer or more never wrapped: when it holds fewer buffers than its finalized header
// counts it was cut, and that is damage, as in a SEQUENTIAL file. A file that wrapped
// holds fewer than the header counts and reads whole; cut, it is short of its maximum
// and is damage too.
func TestCutCircularFile(t *testing.T) {
	circular := func(n int) []byte { // 64 KB: the header buffer and 15 slots
		return fileWith(t, testInfo(winver.V2004, modeCircular|modeKBytes, 64), false, buffers(n))
	}
	for _, tc := range []struct {
		name   string
		file   []byte
		cut    bool
		events int
	}{
		{"never wrapped, whole", circular(10), false, 30},
		{"never wrapped, cut after 4 buffers", circular(10)[:5*testBuf], true, 12},
		{"wrapped, whole", circular(20), false, 45},
		{"wrapped, cut after 4 buffers", circular(20)[:5*testBuf], true, 12},
	} {
		ids, err := walkAll(t, tc.file)
		if len(ids) != tc.events {
			t.Errorf("%s: %d events read, want %d", tc.name, len(ids), tc.events)
		}
		if !tc.cut {
			if err != nil {
				t.Errorf("%s: %v", tc.name, err)
			}
			continue
		}
		if d := damage(t, err); d.Buffers != 5 || !strings.Contains(err.Error(), "the file ends after 5 buffers") {
			t.Errorf("%s: damage %+v: %v", tc.name, d, err)
		}
	}
}
