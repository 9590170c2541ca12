package etl

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"os"
	"slices"
	"syscall"
	"time"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/winerr"
)

// Buffer is one buffer read from a file: its header and its data up to the filled bytes,
// decompressed when it was stored compressed.
type Buffer struct {
	FileOffset int64            // where the buffer starts in the file
	Header     abi.BufferHeader // as stored
	Compressed bool             // stored with ETW_BUFFER_FLAG_COMPRESSED
	Stored     int              // bytes the buffer takes in the file
	// Data is the buffer's first Header.Offset bytes, header included, decompressed.
	Data []byte

	rd      *Reader // the reader whose budget and damage report its record walks count (ParseBuffer makes one of its own)
	counted bool    // a walk of its records reached the end, so its records are in rd's budget
	lost    bool    // a bad record cut its walk, and rd counted the buffer as damaged
}

// End returns the end of the buffer's data (its filled bytes).
func (b *Buffer) End() int { return len(b.Data) }

// EventRecords counts the buffer's EVENT_HEADER records (what providers wrote), as far as
// its records walk.
func (b *Buffer) EventRecords() uint64 {
	n := uint64(0)
	_ = b.Records(func(r Record) error {
		if r.Kind == KindEventHeader {
			n++
		}
		return nil
	})
	return n
}

// Records walks the buffer's records in order and calls fn for each. It stops without
// error at an end-of-data fill; at a marker it does not know it calls fn once with a
// KindUnknown record and stops with an error naming the offsets, for the rest of the
// buffer cannot be framed. A size that runs past the data is an error naming the file
// offset too; in both cases the records before it were delivered, and the reader that
// read the buffer counts it as damaged (see DamageError). fn's error is returned as it is.
func (b *Buffer) Records(fn func(Record) error) error {
	it := b.Iter()
	for r, ok := it.Next(); ok; r, ok = it.Next() {
		if err := fn(r); err != nil {
			return err
		}
	}
	return it.Err()
}

// RecordIter walks a buffer's records one at a time, decoding each when asked: a merge of
// several buffers holds one iterator per buffer and no decoded records.
type RecordIter struct {
	b    *Buffer
	off  int
	n    int64 // records delivered
	err  error
	done bool
}

// Iter returns an iterator over the buffer's records, as Records walks them.
func (b *Buffer) Iter() RecordIter { return RecordIter{b: b, off: abi.BufferHeaderSize} }

// Next returns the next record and true, or false after the last one or at a bad record
// (Err tells them apart).
func (it *RecordIter) Next() (Record, bool) {
	if it.done {
		return Record{}, false
	}
	b := it.b
	if it.off >= len(b.Data) {
		return it.end(nil)
	}
	r, more, err := decodeRecord(b.Data, it.off, len(b.Data))
	if err != nil {
		return it.end(&RecordError{FileOffset: b.FileOffset, Err: err})
	}
	if !more {
		if r.Kind == KindUnknown && r.Marker != endOfData {
			// A kind the reader does not know: its size is not known either, so the
			// walk cannot go past it, and the rest of the buffer is not read. The record
			// is delivered, and the buffer counted as damaged, as for a bad record.
			it.end(&RecordError{FileOffset: b.FileOffset, Err: fmt.Errorf("offset %#x: unknown record marker %#08x: the %d bytes from there to the end of data are not read",
				it.off, r.Marker, len(b.Data)-it.off)})
			return r, true
		}
		it.end(nil)
		return Record{}, false
	}
	it.off += abi.Align(r.Size)
	it.n++
	if rd := b.rd; rd != nil && !b.counted && rd.records+it.n > rd.recordBudget() {
		err := fmt.Errorf("etl: buffer at file offset %#x: %w: more than %d records from a file of %d bytes", b.FileOffset, errBudget, rd.recordBudget(), rd.size)
		rd.stop(b.FileOffset, err)
		rd.halted = true
		return it.end(err)
	}
	return r, true
}

// end finishes the walk: a bad record (err) costs the rest of the buffer, which the reader
// counts as damage once; a whole walk adds the buffer's records to the reader's budget.
func (it *RecordIter) end(err error) (Record, bool) {
	it.done, it.err = true, err
	b := it.b
	if b.rd == nil {
		return Record{}, false
	}
	if err != nil && !errors.Is(err, errBudget) && !b.lost {
		b.lost = true
		b.rd.damaged(b.FileOffset, err)
	}
	if !b.counted {
		b.counted = true
		b.rd.records += it.n
	}
	return Record{}, false
}

// Err returns the bad record (a *RecordError) or the reader's bound that ended the walk,
// or nil.
func (it *RecordIter) Err() error { return it.err }

// RecordError is a record whose framing is bad (a size past its buffer's data, extended
// items that do not fit): it costs the rest of its buffer. The reader that read the
// buffer has counted it in its DamageError, so a caller of Next that walks records
// itself can go on with the next buffer and take the damage report at the end.
type RecordError struct {
	FileOffset int64 // the buffer's offset in the file
	Err        error // what is wrong, at which offset of the buffer's data
}

func (e *RecordError) Error() string {
	return fmt.Sprintf("etl: buffer at file offset %#x: %v", e.FileOffset, e.Err)
}

func (e *RecordError) Unwrap() error { return e.Err }

// Reader reads an ETL file buffer by buffer. The first buffer must hold the log-file
// header event; after it the reader walks buffers by each one's BufferSize (the stored
// size of a compressed buffer) to the end of the file, not trusting BuffersWritten, which
// a circular file does not keep as a buffer count, nor the file of a session that had not
// stopped.
//
// Damage costs what it touches, not the file: a bad record costs the rest of its buffer,
// and a compressed buffer that does not decompress costs that buffer; the reader goes on
// at the next buffer, whose framing (BufferSize) is intact. An uncompressed buffer whose
// header gives a BufferSize no buffer of the file can have costs that buffer too: every
// buffer stored uncompressed has the file's size, so the next one starts one BufferSize
// on. Buffers zeroed inside the file cost themselves too, when a buffer follows them. A
// buffer whose framing is broken otherwise, or a file that ends inside a buffer, ends
// the reading there. Next and Walk
// deliver everything they read and then, in place of io.EOF, a *DamageError that says
// what was lost; so does a file whose finalized header counts buffers that are not there.
//
// Work is bounded by the file: a compressed buffer decompresses to no more than the file's
// BufferSize, all of them together to no more than expansionFloor or maxExpansion times
// the bytes they are stored in, whichever is more, and the whole file yields at most one
// record per recordBytes bytes it stores; beyond that the reader stops with a
// DamageError.
//
// A Reader is for one goroutine.
type Reader struct {
	r      io.ReaderAt
	size   int64
	name   string // the path Open was given, for DamageError
	off    int64
	header LogfileHeader
	first  *Buffer
	served bool
	held   int // buffers whose framing the reader read, the header buffer included
	opened int // buffers whose content ReadBuffer read or found damaged

	limit    int   // the most one compressed buffer may decompress to, its header included
	floor    int64 // the bytes all compressed buffers may decompress to whatever they take: expansionFloor
	packed   int64 // bytes the compressed buffers read so far take in the file
	expanded int64 // bytes they decompressed to
	records  int64 // records walked to the end of their buffers

	damage  *DamageError // the first damage and the count; nil while the file reads whole
	stopped bool         // the reading ended at damage: Next reports it
	halted  bool         // and no buffer is read after it, not even by ReadBuffer
	ended   bool         // Next reached the end of the file
	scratch []byte       // nextData's chunk and its zeros, made at the first run of zeros
}

// maxBufferSize bounds the buffer sizes the reader believes (MAX_ETW_BUFFER_SIZE is
// 16 MB from Windows 8 on).
const maxBufferSize = 16 << 20

// maxExpansion bounds the bytes all compressed buffers of a file decompress to, as a
// multiple of the bytes they take in the file (plus one BufferSize, so that one buffer
// is never refused). Each buffer alone may expand to the file's BufferSize, which a
// stream of a hundred bytes can ask for; without a total, a 100 MB file of such buffers
// would take terabytes of work. The demo's events compress 8.5 to 1 with etwemu's
// compressor (the event text repeats); [UNCERTAIN] what Windows reaches on real traces;
// four times the demo's ratio leaves room for it.
const maxExpansion = 32

// expansionFloor is what the compressed buffers of any file may decompress to together,
// however few bytes they take: events whose payloads repeat (zeros, one string) compress
// 600- to 1,200-fold, and a file of them that etwemu wrote must read back whole. The
// decompressor turns such buffers out at 6 to 7 GB/s (a 2-vCPU guest), so the floor costs
// a hostile file of a few bytes about a second; a stream that decompresses slowly is one
// of short matches, which maxExpansion bounds.
const expansionFloor = 4 << 30

// recordBytes bounds the records a file yields: one per recordBytes bytes of the file,
// plus one buffer's worth; that is as many as an uncompressed file of its size can hold,
// each record taking at least 8 bytes (abi.TraceAlignment). Compressed, the demo's events
// come to about one per 17 stored bytes. Every record costs its reader (a dump line, a consumer
// callback) about the same, so the bound keeps the work of any file proportional to its
// size, decompression bombs of tiny records included.
const recordBytes = 8

func (rd *Reader) recordBudget() int64 { return rd.size/recordBytes + int64(rd.limit/8) }

// NotETLError is NewReader's answer for a file that is not an ETL file at all (too short
// for a buffer header, no buffer header at its start, or a first record that is not the
// log-file header event), where DamageError is its answer for an ETL file with damage.
// It carries ERROR_FILE_CORRUPT as DamageError does. [emulator choice] OpenTrace's
// documentation names no code for a file that is not a trace; the emulator gives one
// code to every file it cannot read as ETL.
type NotETLError struct {
	Err error // what the reader found at the start of the file
}

func notETL(err error) *NotETLError { return &NotETLError{Err: err} }

func (e *NotETLError) Error() string {
	return "not an ETL file: " + e.Err.Error() + " (" + winerr.ErrFileCorrupt.Error() + ")"
}

// Unwrap returns what the reader found and ERROR_FILE_CORRUPT, for errors.Is and
// winerr.Code.
func (e *NotETLError) Unwrap() []error { return []error{e.Err, winerr.ErrFileCorrupt} }

// errBudget marks the reader's own bounds (maxExpansion and expansionFloor, recordBytes).
var errBudget = errors.New("the file expands past the reader's bound")

// NewReader reads the header buffer of an ETL file of size bytes.
func NewReader(r io.ReaderAt, size int64) (*Reader, error) {
	rd := &Reader{r: r, size: size, limit: maxBufferSize, floor: expansionFloor}
	b, err := rd.read(0)
	if err != nil {
		var c contentError
		if errors.As(err, &c) {
			err = c.err
		}
		if size < abi.BufferHeaderSize {
			err = notETL(fmt.Errorf("etl: offset 0x0: %d bytes, less than one buffer header", size))
		} else if !looksLikeBuffer(r) {
			err = notETL(err)
		} else {
			err = headerDamage(err)
		}
		return nil, err
	}
	var first *Record
	it := b.Iter()
	if r, ok := it.Next(); ok {
		first = &r
	}
	if it.Err() != nil {
		return nil, headerDamage(it.Err())
	}
	if first == nil || first.Kind != KindSystem || first.HookID != hookLogfileInfo {
		return nil, notETL(fmt.Errorf("etl: offset %#x: the first record is not the log-file header event (system header, hook 0x0000)", abi.BufferHeaderSize))
	}
	h, err := DecodeLogfileHeader(first.Payload)
	if err != nil {
		return nil, headerDamage(fmt.Errorf("etl: offset %#x: %w", abi.BufferHeaderSize+SystemHeaderSize, err))
	}
	rd.header, rd.first, rd.off, rd.held = h, b, int64(b.Stored), 1
	if s := rd.stride(); s > 0 {
		rd.limit = s
	}
	b.rd = rd
	return rd, nil
}

// headerDamage is NewReader's answer for an ETL file whose header buffer cannot be read:
// damage that stops the reading before any buffer, with ERROR_FILE_CORRUPT.
func headerDamage(err error) *DamageError {
	return &DamageError{Err: err, Stopped: true, Stop: err}
}

// looksLikeBuffer reports whether the file starts as an ETL file's buffer 0 does: a
// WMI_BUFFER_HEADER whose BufferSize the reader accepts, then a SYSTEM_TRACE_HEADER
// marker. It tells "not an ETL file" from a damaged one.
func looksLikeBuffer(r io.ReaderAt) bool {
	var b [abi.BufferHeaderSize + 4]byte
	if _, err := r.ReadAt(b[:], 0); err != nil {
		return false
	}
	h, _ := abi.DecodeBufferHeader(b[:])
	m := b[abi.BufferHeaderSize:]
	return h.BufferSize >= abi.BufferHeaderSize && h.BufferSize <= maxBufferSize && m[3] == flagsHeader && (m[2] == typeSystem64 || m[2] == typeSystem32)
}

// Name returns the path Open was given ("" for NewReader).
func (rd *Reader) Name() string { return rd.name }

// Header returns the file's TRACE_LOGFILE_HEADER.
func (rd *Reader) Header() LogfileHeader { return rd.header }

// HeaderBuffer returns buffer 0, whose records are the log-file header event and the
// EventTrace records written with it (Extension, PartitionInfoExtension). Walk skips it.
func (rd *Reader) HeaderBuffer() *Buffer { return rd.first }

// Next returns the next buffer, starting with the header buffer. After the last it
// returns io.EOF when the file read whole, or the *DamageError that says what was lost:
// buffers skipped for bad content (the reading went on after them), a file that ends
// inside a buffer or at a buffer whose framing is broken (the reading stopped there), a
// finalized header that counts more buffers than the file holds. It returns the same
// again after that. A trailing piece of zeros (preallocated space never written) ends the
// file as io.EOF; zeros with buffers after them are damage (see skipZeros).
func (rd *Reader) Next() (*Buffer, error) { return rd.next(true) }

// NextHeader is Next without the buffers' content: each Buffer has its header, offset
// and stored size but no Data, and nothing is decompressed. A merge indexes a file with
// it and reads each buffer's content with ReadBuffer when its turn comes.
func (rd *Reader) NextHeader() (*Buffer, error) { return rd.next(false) }

// ReadBuffer reads the content of the buffer at off, which NextHeader returned. A
// buffer whose content cannot be read is counted as damage (see DamageError) and its
// error returned; the caller goes on with the next. An offset outside the file is the
// caller's mistake, not the file's: ERROR_INVALID_PARAMETER, and nothing is counted.
func (rd *Reader) ReadBuffer(off int64) (*Buffer, error) {
	if off == 0 {
		return rd.first, nil
	}
	if off < 0 || off >= rd.size {
		return nil, winerr.New(winerr.ErrInvalidParameter, "etl: ReadBuffer(%d): the file is %d bytes", off, rd.size)
	}
	if rd.halted {
		return nil, rd.damage
	}
	b, err := rd.readBuf(off, true)
	var c contentError
	if errors.As(err, &c) {
		rd.opened++
		rd.damaged(off, c.err)
		return nil, c.err
	}
	if err == errZeros {
		err = fmt.Errorf("etl: offset %#x: a buffer header of zeros", off)
	}
	if err != nil {
		rd.stop(off, err)
		rd.halted = true
		rd.missing()
		rd.damage.Opened = rd.opened + 1 // and the header buffer
		return nil, rd.damage
	}
	rd.opened++
	return b, nil
}

// Stopped reports whether reading must stop now: a buffer ReadBuffer read, or the
// reader's bound, ended it (Err says which). Damage that ended NextHeader's scan does not
// stop the buffers before it.
func (rd *Reader) Stopped() bool { return rd.halted }

func (rd *Reader) next(content bool) (*Buffer, error) {
	if !rd.served {
		rd.served = true
		return rd.first, nil
	}
	for !rd.stopped && !rd.ended {
		if rd.size-rd.off < abi.BufferHeaderSize {
			rd.ended = true
			if _, data := rd.nextData(rd.off); data { // a piece of zeros is preallocated space
				rd.stop(rd.off, fmt.Errorf("etl: offset %#x: the file ends %d bytes into a buffer header", rd.off, rd.size-rd.off))
			}
			break
		}
		b, err := rd.readBuf(rd.off, content)
		var c contentError
		switch {
		case err == errZeros:
			rd.skipZeros()
		case errors.As(err, &c):
			rd.damaged(rd.off, c.err)
			rd.off += int64(c.stored)
			rd.held++
		case err != nil:
			rd.stop(rd.off, err)
		default:
			rd.off += int64(b.Stored)
			rd.held++
			return b, nil
		}
	}
	rd.missing()
	if rd.damage != nil {
		return nil, rd.damage
	}
	return nil, io.EOF
}

// Err returns the damage found so far (a *DamageError), or nil.
func (rd *Reader) Err() error {
	if rd.ended || rd.stopped {
		rd.missing() // the counts, once the reading has reached its end
	}
	if rd.damage == nil {
		return nil
	}
	return rd.damage
}

// BuffersRead returns how many buffers the reader found whole in the file, the header
// buffer included, those whose content it could not read too: after Walk, the buffers the
// file holds, which BuffersWritten is not in a circular file or an unfinalized one.
func (rd *Reader) BuffersRead() int { return rd.held }

// damaged counts damage the reading goes on after.
func (rd *Reader) damaged(off int64, err error) {
	if rd.damage == nil {
		rd.damage = &DamageError{File: rd.name, Offset: off, Err: err}
	}
	rd.damage.Lost++
}

// stop ends the reading at damage: what follows off is not read.
func (rd *Reader) stop(off int64, err error) {
	if rd.stopped {
		return
	}
	rd.stopped = true
	if rd.damage == nil {
		rd.damage = &DamageError{File: rd.name, Offset: off, Err: err}
	} else if rd.damage.Err == nil {
		rd.damage.Offset, rd.damage.Err = off, err
	}
	rd.damage.Stopped, rd.damage.StopOffset, rd.damage.Stop = true, off, err
}

// missing fills in the buffer counts of the damage report, and reports a file whose
// finalized header counts buffers it does not hold (a file cut at a buffer boundary).
// Only a finalized (EndTime set) header counts the buffers in the file, and a circular
// one only while the file never wrapped (unwrapped).
func (rd *Reader) missing() {
	h := &rd.header
	counts := h.EndTime != 0 && (h.LogFileMode&modeCircular == 0 || rd.unwrapped())
	if counts && uint32(rd.held) < h.BuffersWritten && rd.damage == nil {
		rd.damage = &DamageError{File: rd.name, Offset: rd.size, Err: fmt.Errorf(
			"etl: offset %#x: the file ends after %d buffers, its finalized header counts %d", rd.size, rd.held, h.BuffersWritten)}
	}
	if rd.damage == nil {
		return
	}
	rd.damage.Buffers = rd.held
	if counts {
		rd.damage.Written = h.BuffersWritten
	}
}

// unwrapped reports whether a circular file is shorter than its MaximumFileSize by a
// buffer or more. A circular logger wraps only when the next buffer would pass the
// maximum (Writer.place), so such a file never wrapped and its BuffersWritten counts the
// buffers it holds, as the real circular files that never wrapped do (LogfileHeader);
// one that holds fewer was cut. A file preallocated to its maximum cannot tell.
func (rd *Reader) unwrapped() bool {
	h := &rd.header
	limit := maxFileBytes(h.LogFileMode, h.MaximumFileSize)
	return limit > 0 && rd.size <= limit-int64(h.BufferSize)
}

// errZeros is readBuf's answer for a buffer header of zeros.
var errZeros = errors.New("a buffer header of zeros")

// skipZeros goes on after a buffer header of zeros at rd.off. Zeros to the end of the
// file are space preallocated and never written: the file ends there. Zeros followed by
// data are damage, counted: when a buffer starts where the data does (at a multiple of
// the file's BufferSize from the zeros, or, for a compressed buffer's stored size,
// within the first four bytes of the data, a header's BufferSize being its first field),
// the zeroed bytes count as the buffers of the file's BufferSize they span (at least
// one) and the reading goes on there; otherwise it stops at the zeros. (A file with a
// zeroed buffer was read as ending at it, the buffers after it dropped without a word.)
func (rd *Reader) skipZeros() {
	from := rd.off
	data, found := rd.nextData(from)
	if !found {
		rd.ended = true
		return
	}
	bs := max(int64(rd.header.BufferSize), abi.BufferHeaderSize)
	at := int64(-1)
	for _, o := range []int64{from + (data-from)/bs*bs, data, data - 1, data - 2, data - 3} {
		if o > from && rd.resumable(o) {
			at = o
			break
		}
	}
	if at < 0 {
		rd.stop(from, fmt.Errorf("etl: offset %#x: %d bytes of zeros, then data at %#x that is not a buffer", from, data-from, data))
		return
	}
	n := max((at-from)/bs, 1)
	rd.damaged(from, fmt.Errorf("etl: offset %#x: %d bytes of zeros where buffers were, the file going on at %#x", from, at-from, at))
	rd.damage.Lost += int(n - 1)
	rd.held += int(n)
	rd.off = at
}

// resumable reports whether the reading may go on at o after zeros: a buffer is there
// whose content reads, and which, stored uncompressed, has the file's BufferSize (every
// uncompressed buffer of a file has it; compressed ones are stored in fewer bytes). A
// guess inside a compressed buffer's packed bytes once read as a buffer of another size.
func (rd *Reader) resumable(o int64) bool {
	packed, expanded := rd.packed, rd.expanded // a trial, not a read: the budget stays as it was
	b, err := rd.readBuf(o, true)
	rd.packed, rd.expanded = packed, expanded
	return err == nil && (b.Compressed || b.Header.BufferSize == rd.header.BufferSize)
}

// nextData returns the offset of the first byte after off that is not zero, reading the
// file once from off, or false when the rest of the file is zeros. Each chunk is compared
// whole with zeros (a preallocated gigabyte is read at the speed of the disk) and
// searched only when it differs; the chunks start at 128 bytes and double to 64 KB, so
// that short runs of zeros cost a short read (a file of 72-byte runs of zeros, each
// before a buffer, cost a 64 KB read apiece), into scratch memory the reader keeps.
func (rd *Reader) nextData(off int64) (int64, bool) {
	const most = 64 << 10
	if rd.scratch == nil {
		rd.scratch = make([]byte, 2*most)
	}
	chunk, none := rd.scratch[:most], rd.scratch[most:]
	for size := int64(128); off < rd.size; size = min(2*size, most) {
		n := int(min(size, rd.size-off))
		if _, err := rd.r.ReadAt(chunk[:n], off); err != nil {
			return off, true // unreadable is not zeros: readBuf reports it
		}
		if !bytes.Equal(chunk[:n], none[:n]) {
			return off + int64(slices.IndexFunc(chunk[:n], func(c byte) bool { return c != 0 })), true
		}
		off += int64(n)
	}
	return 0, false
}

// contentError is a buffer whose framing holds (stored is its BufferSize) but whose
// content cannot be read: the reading goes on after it.
type contentError struct {
	err    error
	stored int
}

func (c contentError) Error() string { return c.err.Error() }
func (c contentError) Unwrap() error { return c.err }

// framing refuses a buffer header at off whose BufferSize the reader cannot walk by:
// outside the sizes it believes, for a buffer stored uncompressed larger than the file's
// BufferSize, or past the file's end.
func (rd *Reader) framing(off int64, h abi.BufferHeader) error {
	if h.BufferSize < abi.BufferHeaderSize || h.BufferSize > maxBufferSize {
		return fmt.Errorf("etl: offset %#x: BufferSize %#x outside [%#x, %#x]", off, h.BufferSize, abi.BufferHeaderSize, maxBufferSize)
	}
	if s := rd.stride(); s > 0 && h.BufferFlag&abi.BufferFlagCompressed == 0 && int(h.BufferSize) > s {
		return fmt.Errorf("etl: offset %#x: BufferSize %#x in a file of %#x-byte buffers", off, h.BufferSize, s)
	}
	if int64(h.BufferSize) > rd.size-off {
		return fmt.Errorf("etl: offset %#x: buffer of %#x bytes runs past the end of the file (%#x bytes left)", off, h.BufferSize, rd.size-off)
	}
	return nil
}

// stride is the file's BufferSize, every uncompressed buffer's size, or 0 while the
// header buffer is read or where its header gives a size the reader does not believe.
func (rd *Reader) stride() int {
	if bs := rd.header.BufferSize; bs >= abi.BufferHeaderSize && bs <= maxBufferSize {
		return int(bs)
	}
	return 0
}

// read reads the buffer at off with its content.
func (rd *Reader) read(off int64) (*Buffer, error) { return rd.readBuf(off, true) }

// readBuf reads the buffer at off, with its content or only its framing. A contentError
// leaves the framing intact; errZeros is a header of zeros (skipZeros says what follows);
// any other error ends the reading.
func (rd *Reader) readBuf(off int64, content bool) (*Buffer, error) {
	var hb [abi.BufferHeaderSize]byte
	if _, err := rd.r.ReadAt(hb[:], off); err != nil {
		return nil, fmt.Errorf("etl: offset %#x: reading a buffer header: %w", off, noEOF(err))
	}
	h, _ := abi.DecodeBufferHeader(hb[:])
	if hb == [abi.BufferHeaderSize]byte{} && off > 0 {
		return nil, errZeros // preallocated space never written, or a buffer zeroed
	}
	b := &Buffer{FileOffset: off, Header: h, Compressed: h.BufferFlag&abi.BufferFlagCompressed != 0, Stored: int(h.BufferSize), rd: rd}
	if err := rd.framing(off, h); err != nil {
		// Every buffer a file stores uncompressed has the file's BufferSize, so where an
		// uncompressed buffer's size cannot be right, the next buffer starts one
		// BufferSize on: the damage costs this buffer, not the rest of the file (a size of
		// 0 ended the reading there, and a larger one swallowed the buffers after it). A
		// smaller size is read as it says: it is a compressed buffer's stored size, should
		// that buffer's flag be the damage.
		if s := rd.stride(); s > 0 && !b.Compressed && int64(s) <= rd.size-off {
			return nil, contentError{err: err, stored: s}
		}
		return nil, err
	}
	if !content {
		return b, nil
	}
	bad := func(format string, args ...any) error {
		return contentError{err: fmt.Errorf("etl: offset %#x: "+format, append([]any{off}, args...)...), stored: int(h.BufferSize)}
	}
	end := h.Offset
	if !b.Compressed && (end < abi.BufferHeaderSize || end > h.BufferSize) {
		return nil, bad("filled bytes (Offset) %#x outside the buffer's [%#x, %#x]", end, abi.BufferHeaderSize, h.BufferSize)
	}
	if mem, ok := rd.r.(bytesReaderAt); ok && !b.Compressed {
		b.Data = mem[off : off+int64(end)] // a buffer already in memory (ParseBuffer)
		return b, nil
	}
	if !b.Compressed {
		b.Data = make([]byte, end)
		if _, err := rd.r.ReadAt(b.Data, off); err != nil {
			return nil, fmt.Errorf("etl: offset %#x: %w", off, noEOF(err))
		}
		return b, nil
	}
	// A compressed buffer is one trace buffer, compressed alone (compressor.pack): it
	// decompresses to its filled bytes, at most the file's BufferSize. The compression
	// area's two buffers of carry-over move stored bytes between the file's writes, never
	// the data of one trace buffer, so they allow no more.
	limit := rd.limit
	if end < abi.BufferHeaderSize || int64(end) > int64(limit) { // int(end) is negative past 2 GB on 32-bit systems
		return nil, bad("compressed buffer's filled bytes (Offset) %#x outside [%#x, %#x], the file's BufferSize", end, abi.BufferHeaderSize, limit)
	}
	packed := make([]byte, h.BufferSize-abi.BufferHeaderSize)
	if _, err := rd.r.ReadAt(packed, off+abi.BufferHeaderSize); err != nil {
		return nil, fmt.Errorf("etl: offset %#x: %w", off, noEOF(err))
	}
	rd.packed += int64(h.BufferSize)
	room := limit - abi.BufferHeaderSize
	budget := max(maxExpansion*rd.packed, rd.floor) + int64(limit) - rd.expanded
	byBudget := budget < int64(room)
	if byBudget {
		room = int(max(budget, 0))
	}
	data, err := xpressDecompress(append(make([]byte, 0, end), hb[:]...), packed, room)
	rd.expanded += int64(len(data) - abi.BufferHeaderSize)
	if err != nil {
		if byBudget && errors.Is(err, errExpandsPast) {
			return nil, fmt.Errorf("etl: offset %#x: %w: compressed buffers decompress to more than %d times the %d bytes they take in the file and %d MB in all", off, errBudget, maxExpansion, rd.packed, rd.floor>>20)
		}
		return nil, bad("compressed buffer: %w", err)
	}
	if uint32(len(data)) < end {
		return nil, bad("compressed buffer decompresses to %#x bytes, its Offset says %#x", len(data), end)
	}
	b.Data = data[:end]
	return b, nil
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// DamageError reports what of an ETL file could not be read, after everything that could
// was delivered: where the first damage is and what it is, whether the reading stopped
// there or went on, the buffers the file holds against those its finalized header
// counts, and how many buffers were damaged. It carries ERROR_FILE_CORRUPT, the code
// Windows gives a log file it cannot read. Consumers return it from Wait and Err.
type DamageError struct {
	File   string // the path Open was given; "" from NewReader
	Offset int64  // the file offset of the first damage (the file's size when buffers are missing at its end)
	Err    error  // the first damage
	// Buffers is the buffers the file holds whole up to where the reading ended, the
	// header buffer included; Written is the BuffersWritten of a finalized header that
	// counts the file's buffers (not a circular one), else 0.
	Buffers int
	Written uint32
	// Opened is, where ReadBuffer stopped the reading, the buffers whose content was read
	// by then (or found damaged), the header buffer included: a merge reads the buffers
	// NextHeader found out of file order, so Buffers counts them all. Else 0.
	Opened int
	Lost   int // buffers skipped or cut short (bad records, bad compressed data), the reading going on after them
	// Stopped: the reading ended at StopOffset, for Stop (a file that ends inside a
	// buffer, a buffer whose framing is broken, the reader's bound); nothing after it
	// was read.
	Stopped    bool
	StopOffset int64
	Stop       error
}

func (e *DamageError) Error() string {
	var s bytes.Buffer
	if e.File != "" {
		fmt.Fprintf(&s, "%s: ", e.File)
	}
	s.WriteString(e.Err.Error())
	if e.Lost > 0 {
		fmt.Fprintf(&s, "; %d damaged buffer(s) skipped", e.Lost)
	}
	if e.Stopped && e.Stop != e.Err {
		fmt.Fprintf(&s, "; reading stopped at %v", e.Stop)
	}
	switch {
	case e.Opened > 0:
		fmt.Fprintf(&s, "; %d of the %d buffers found read", e.Opened, e.Buffers)
	case e.Written != 0 && uint32(e.Buffers) <= e.Written:
		fmt.Fprintf(&s, "; the file holds %d of %d buffers", e.Buffers, e.Written)
	default:
		fmt.Fprintf(&s, "; %d buffers read", e.Buffers)
	}
	fmt.Fprintf(&s, " (%s)", winerr.ErrFileCorrupt)
	return s.String()
}

// Unwrap returns the first damage and ERROR_FILE_CORRUPT, for errors.Is and winerr.Code.
func (e *DamageError) Unwrap() []error { return []error{e.Err, winerr.ErrFileCorrupt} }

// File is an open ETL file for reading.
type File struct {
	*Reader
	f *os.File
}

// Open opens an ETL file and reads its header buffer. The reader's DamageError names the
// file.
func Open(path string) (*File, error) {
	// Looked at before it is opened: opening a FIFO to read waits for a writer.
	if st, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		// ERROR_FILE_NOT_FOUND, Windows' code for a file that is not there; still fs.ErrNotExist.
		return nil, fmt.Errorf("%w: %s: no such file (%w)", winerr.ErrFileNotFound, path, fs.ErrNotExist)
	} else if err != nil {
		return nil, openFailed(path, err)
	} else if !st.Mode().IsRegular() {
		return nil, notRegular(path, st)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, openFailed(path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !st.Mode().IsRegular() { // replaced since
		f.Close()
		return nil, notRegular(path, st)
	}
	if st.Size() == 0 {
		// A pseudo-file (/proc's, /sys's) says it is empty and reads as text: the size an
		// ETL file is framed by is not its own.
		var b [1]byte
		if n, _ := f.ReadAt(b[:], 0); n > 0 {
			f.Close()
			return nil, fmt.Errorf("%w: %s: its size reads as 0 bytes but it holds some (a pseudo-file): an ETL file is read at its buffers' offsets; save its bytes to a file first", winerr.ErrInvalidParameter, path)
		}
	}
	rd, err := NewReader(f, st.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	rd.name = path
	return &File{Reader: rd, f: f}, nil
}

// openFailed is Open's error for a file the operating system would not open:
// ERROR_ACCESS_DENIED where it refused the permission, ERROR_PATH_NOT_FOUND where a
// directory on the path is not one, ERROR_INVALID_PARAMETER otherwise, with its reason.
func openFailed(path string, err error) error {
	code := winerr.ErrInvalidParameter
	switch {
	case errors.Is(err, fs.ErrPermission):
		code = winerr.ErrAccessDenied
	case errors.Is(err, syscall.ENOTDIR):
		code = winerr.ErrPathNotFound
	}
	return fmt.Errorf("%w: %s: %w", code, path, err)
}

// notRegular is Open's error for a path that is not a regular file: ERROR_ACCESS_DENIED
// for a directory, as CreateFile answers one opened as a file, ERROR_INVALID_PARAMETER
// for a pipe, socket or device ([emulator choice]: OpenTrace names no code for them).
func notRegular(path string, st os.FileInfo) error {
	hint, code := "", winerr.ErrAccessDenied
	if !st.IsDir() {
		hint, code = "; save its bytes to a file first", winerr.ErrInvalidParameter
	}
	return fmt.Errorf("%w: %s: not a regular file (%s): an ETL file is read at its buffers' offsets%s", code, path, fileKind(st.Mode()), hint)
}

// fileKind names what a file that is not a regular one is.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "mode " + m.String()
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Walk calls fn for every record of every buffer after the header buffer, in file order.
// A bad record costs the rest of its buffer and the walk goes on at the next; after the
// last buffer Walk returns nil, or the *DamageError that says what was lost (see Next).
// fn's error ends the walk and is returned as it is.
func (rd *Reader) Walk(fn func(b *Buffer, r Record) error) error {
	for {
		b, err := rd.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if b == rd.first {
			continue
		}
		it := b.Iter()
		for r, ok := it.Next(); ok; r, ok = it.Next() {
			if err := fn(b, r); err != nil {
				return err
			}
		}
	}
}

// Clock is a session's reference clock: the clock type and frequency of its timestamps,
// and one instant read on both clocks (StartTime in FILETIME, StartPerf on the session
// clock). It turns a record's timestamp into wall time.
type Clock struct {
	Type      clock.Type
	Frequency int64 // ticks per second; unused for the system-time clock
	StartTime int64 // FILETIME
	StartPerf int64 // the session clock at StartTime
}

// Time converts a timestamp to wall time: FILETIME itself for the system-time clock,
// StartTime plus the ticks since StartPerf otherwise. It reports false when the clock
// cannot say: no frequency, no start time, or a time a FILETIME cannot hold (a file's
// timestamps and clock are whatever its bytes say).
func (c Clock) Time(ts int64) (time.Time, bool) {
	ft := ts
	switch {
	case c.Type == clock.System:
	case c.StartTime > 0 && c.Frequency > 0:
		d := ts - c.StartPerf
		if (ts^c.StartPerf) < 0 && (d^ts) < 0 {
			return time.Time{}, false // the ticks since StartPerf overflow
		}
		sec, rest := d/c.Frequency, d%c.Frequency
		if limit := (math.MaxInt64-c.StartTime)/1e7 - 1; sec > limit || sec < -limit {
			return time.Time{}, false
		}
		// rest*1e7 overflows for frequencies past 922 GHz: multiply in 128 bits (rest is
		// below the frequency, so the quotient fits).
		neg := rest < 0
		if neg {
			rest = -rest
		}
		hi, lo := bits.Mul64(uint64(rest), 1e7)
		frac, _ := bits.Div64(hi, lo, uint64(c.Frequency))
		if neg {
			frac = -frac
		}
		ft = c.StartTime + sec*1e7 + int64(frac)
	default:
		return time.Time{}, false
	}
	return clock.FromFileTime(ft), true
}

// Clock returns the buffer's own reference clock: ETW_REF_CLOCK (StartTime and
// StartPerfClock) with the clock word (ClockType and Frequency), which buffers carry from
// 6.2 on. It reports false for a buffer without them (files before 6.2).
func (b *Buffer) Clock() (Clock, bool) {
	h := &b.Header
	c := Clock{Type: clock.Type(h.ClockFrequency & 7), Frequency: int64(h.ClockFrequency >> 3), StartTime: h.StartTime, StartPerf: h.StartPerfClock}
	// Before 6.2 the eight bytes at 0x20 are a list link (a pointer, 8-aligned: clock type
	// 0) or zero: only a clock type ETW knows makes them a clock word.
	if !c.Type.Valid() || c.Type != clock.System && (c.StartTime <= 0 || c.Frequency <= 0) {
		return Clock{}, false
	}
	return c, true
}

// Time converts a record timestamp of this buffer to wall time by the buffer's own
// reference clock (Clock); false when the buffer has none.
func (b *Buffer) Time(ts int64) (time.Time, bool) {
	c, ok := b.Clock()
	if !ok {
		return time.Time{}, false
	}
	return c.Time(ts)
}

// Clock returns the file's reference clock from its log-file header, for buffers that
// carry none of their own: the clock type (ReservedFlags), the frequency (PerfFreq, or
// CpuSpeedInMHz for the cycle counter) and StartTime, read on the session clock as the
// timestamp of the header event, the file's first record.
func (rd *Reader) Clock() Clock {
	h := rd.Header()
	c := Clock{Type: clock.Type(h.ReservedFlags), Frequency: h.PerfFreq, StartTime: h.StartTime}
	if c.Type == clock.CPUCycles {
		c.Frequency = int64(h.CPUSpeedMHz) * 1e6
	}
	it := rd.HeaderBuffer().Iter()
	if r, ok := it.Next(); ok {
		c.StartPerf = r.TimeStamp
	}
	return c
}
