package etl

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/klauspost/compress/xpress"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/clock"
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
}

// End returns the end of the buffer's data (its filled bytes).
func (b *Buffer) End() int { return len(b.Data) }

// Records walks the buffer's records in order and calls fn for each. It stops without
// error at an end-of-data fill; at a marker it does not know it calls fn once with a
// KindUnknown record and stops. A size that runs past the data is an error naming the
// file offset.
func (b *Buffer) Records(fn func(Record) error) error {
	for off := abi.BufferHeaderSize; off < len(b.Data); {
		r, more, err := decodeRecord(b.Data, off, len(b.Data))
		if err != nil {
			return fmt.Errorf("etl: buffer at file offset %#x: %w", b.FileOffset, err)
		}
		if r.Kind == KindUnknown && r.Marker != 0xFFFFFFFF || more {
			if err := fn(r); err != nil {
				return err
			}
		}
		if !more {
			return nil
		}
		off += abi.Align(r.Size)
	}
	return nil
}

// Reader reads an ETL file buffer by buffer. The first buffer must hold the log-file
// header event; after it the reader walks buffers by each one's BufferSize (the stored
// size of a compressed buffer) to the end of the file, not trusting BuffersWritten, which
// a circular file does not keep as a buffer count, nor the file of a session that had not
// stopped.
type Reader struct {
	r      io.ReaderAt
	size   int64
	off    int64
	header LogfileHeader
	first  *Buffer
	served bool
	nread  int // buffers Next has returned
}

// maxBufferSize bounds the buffer sizes the reader believes (MAX_ETW_BUFFER_SIZE is
// 16 MB from Windows 8 on).
const maxBufferSize = 16 << 20

// NewReader reads the header buffer of an ETL file of size bytes.
func NewReader(r io.ReaderAt, size int64) (*Reader, error) {
	rd := &Reader{r: r, size: size}
	b, err := rd.read(0)
	if err != nil {
		return nil, err
	}
	var first *Record
	err = b.Records(func(rec Record) error {
		if first == nil {
			first = &rec
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if first == nil || first.Kind != KindSystem || first.HookID != hookLogfileInfo {
		return nil, fmt.Errorf("etl: offset %#x: the first record is not the log-file header event (system header, hook 0x0000)", abi.BufferHeaderSize)
	}
	h, err := DecodeLogfileHeader(first.Payload)
	if err != nil {
		return nil, fmt.Errorf("etl: offset %#x: %w", abi.BufferHeaderSize+SystemHeaderSize, err)
	}
	rd.header, rd.first, rd.off = h, b, int64(b.Stored)
	return rd, nil
}

// Header returns the file's TRACE_LOGFILE_HEADER.
func (rd *Reader) Header() LogfileHeader { return rd.header }

// HeaderBuffer returns buffer 0, whose records are the log-file header event and the
// EventTrace records written with it (Extension, PartitionInfoExtension). Walk skips it.
func (rd *Reader) HeaderBuffer() *Buffer { return rd.first }

// Next returns the next buffer, starting with the header buffer, or io.EOF after the
// last. A trailing piece shorter than a buffer header ends the file too (a file being
// written, or cut); a buffer whose header promises more bytes than remain is an error.
func (rd *Reader) Next() (*Buffer, error) {
	if !rd.served {
		rd.served, rd.nread = true, 1
		return rd.first, nil
	}
	if rd.size-rd.off < abi.BufferHeaderSize {
		return nil, io.EOF
	}
	b, err := rd.read(rd.off)
	if err != nil {
		if err == io.EOF {
			rd.off = rd.size
		}
		return nil, err
	}
	rd.off += int64(b.Stored)
	rd.nread++
	return b, nil
}

// BuffersRead returns how many buffers Next has returned, the header buffer included:
// after Walk, the buffers the file holds, which BuffersWritten is not in a circular file
// or an unfinalized one.
func (rd *Reader) BuffersRead() int { return rd.nread }

// read reads the buffer at off.
func (rd *Reader) read(off int64) (*Buffer, error) {
	var hb [abi.BufferHeaderSize]byte
	if _, err := rd.r.ReadAt(hb[:], off); err != nil {
		return nil, fmt.Errorf("etl: offset %#x: reading a buffer header: %w", off, noEOF(err))
	}
	h, _ := abi.DecodeBufferHeader(hb[:])
	if hb == [abi.BufferHeaderSize]byte{} && off > 0 {
		return nil, io.EOF // preallocated space never written
	}
	b := &Buffer{FileOffset: off, Header: h, Compressed: h.BufferFlag&abi.BufferFlagCompressed != 0, Stored: int(h.BufferSize)}
	if h.BufferSize < abi.BufferHeaderSize || h.BufferSize > maxBufferSize {
		return nil, fmt.Errorf("etl: offset %#x: BufferSize %#x outside [%#x, %#x]", off, h.BufferSize, abi.BufferHeaderSize, maxBufferSize)
	}
	if int64(h.BufferSize) > rd.size-off {
		return nil, fmt.Errorf("etl: offset %#x: buffer of %#x bytes runs past the end of the file (%#x bytes left)", off, h.BufferSize, rd.size-off)
	}
	end := h.Offset
	if end < abi.BufferHeaderSize || end > maxBufferSize || (!b.Compressed && end > h.BufferSize) {
		return nil, fmt.Errorf("etl: offset %#x: filled bytes (Offset) %#x outside the buffer's [%#x, %#x]", off, end, abi.BufferHeaderSize, h.BufferSize)
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
	packed := make([]byte, h.BufferSize-abi.BufferHeaderSize)
	if _, err := rd.r.ReadAt(packed, off+abi.BufferHeaderSize); err != nil {
		return nil, fmt.Errorf("etl: offset %#x: %w", off, noEOF(err))
	}
	data, err := xpress.AppendDecompressed(append(make([]byte, 0, end), hb[:]...), packed)
	if err != nil {
		return nil, fmt.Errorf("etl: offset %#x: compressed buffer: %w", off, err)
	}
	if uint32(len(data)) < end {
		return nil, fmt.Errorf("etl: offset %#x: compressed buffer decompresses to %#x bytes, its Offset says %#x", off, len(data), end)
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

// File is an open ETL file for reading.
type File struct {
	*Reader
	f *os.File
}

// Open opens an ETL file and reads its header buffer.
func Open(path string) (*File, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	rd, err := NewReader(f, st.Size())
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return &File{Reader: rd, f: f}, nil
}

// Close closes the file.
func (f *File) Close() error { return f.f.Close() }

// Walk calls fn for every record of every buffer after the header buffer, in file order.
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
		if err := b.Records(func(r Record) error { return fn(b, r) }); err != nil {
			return err
		}
	}
}

// Time converts a record timestamp of this buffer to wall time with the buffer's own
// reference (ETW_REF_CLOCK: StartTime in FILETIME and StartPerfClock on the session
// clock) and clock word (ClockType and Frequency, 6.2 and later): FILETIME itself for
// the system-time clock, StartTime plus the ticks since StartPerfClock otherwise. It
// reports false when the buffer has no reference or no frequency (files before 6.2).
func (b *Buffer) Time(ts int64) (time.Time, bool) {
	h := &b.Header
	typ, freq := h.ClockFrequency&7, int64(h.ClockFrequency>>3)
	ft := ts
	switch {
	case typ == 2: // EVENT_TRACE_CLOCK_SYSTEMTIME: timestamps are FILETIME
	case h.StartTime > 0 && freq > 0:
		d := ts - h.StartPerfClock
		ft = h.StartTime + d/freq*1e7 + d%freq*1e7/freq
	default:
		return time.Time{}, false
	}
	return clock.FromFileTime(ft), true
}
