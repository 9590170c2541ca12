package etl

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/winerr"
)

// File-mode bits the writer acts on (EVENT_TRACE_FILE_MODE_* and
// EVENT_TRACE_USE_KBYTES_FOR_SIZE; the same values as package logmode, repeated here so
// the on-disk format does not depend on the mode table).
const (
	modeSequential  = 0x00000001
	modeCircular    = 0x00000002
	modeAppend      = 0x00000004
	modeNewFile     = 0x00000008
	modePreallocate = 0x00000020
	modeKBytes      = 0x00002000
)

// FileSystem opens the files a Writer writes. Tests inject faults through it.
type FileSystem interface {
	OpenFile(name string, flag int, perm os.FileMode) (WriteFile, error)
}

// WriteFile is what a Writer needs of an open file; *os.File has it.
type WriteFile interface {
	io.ReaderAt
	io.WriterAt
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
	Close() error
}

// Remover is an optional method of a FileSystem: delete the file name. A Writer whose
// log file could not be made ready (a preallocation the disk cannot hold) removes it
// with it, so that a refused start leaves no empty file behind.
type Remover interface {
	Remove(name string) error
}

// OS is the operating system's file system.
type OS struct{}

// Remove implements Remover.
func (OS) Remove(name string) error { return os.Remove(name) }

// Room implements Roomer.
func (OS) Room(name string) (int64, bool) { return room(name) }

// OpenFile implements FileSystem.
func (OS) OpenFile(name string, flag int, perm os.FileMode) (WriteFile, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// Options configure a Writer.
type Options struct {
	// Path is the LogFileName; with EVENT_TRACE_FILE_MODE_NEWFILE a pattern holding one %d,
	// replaced by 1, 2, ... as files fill.
	Path        string
	BufferSize  uint32 // bytes
	Info        HeaderInfo
	Compress    bool       // EVENT_TRACE_COMPRESSED_MODE: buffers go through the compression area
	FS          FileSystem // nil: OS
	Permissions os.FileMode
	// Counters, if not nil, gives what a file closed by a NEWFILE roll-over is finalized
	// with, as WmipFinalizeHeader finalizes each file of the series: the session's loss
	// counters and the time. Without it such files keep EndTime 0. The last file takes
	// Close's counters.
	Counters func() Counters
}

// Result is what one WriteBuffer did: trace buffers written to the file (header buffers
// of new files included) and buffers lost, with the first error met.
type Result struct {
	Written, Lost int
	// EventsLost is the EVENT_HEADER records of the buffers Lost counts, as far as the
	// writer holds them: those of every buffer it gave up, even where 6.2's count of a
	// compressed file counts one flush for several.
	EventsLost uint64
	Err        error
}

// Writer writes a session's sealed buffers to an ETL file: buffer 0 holds the log-file
// header, then every buffer exactly as it was sealed (or compressed, with
// EVENT_TRACE_COMPRESSED_MODE). It applies the file modes (SEQUENTIAL, CIRCULAR, NEWFILE,
// APPEND, PREALLOCATE) and MaximumFileSize, and patches the header when it is closed. A
// failed write costs the buffer, never the file: the position does not advance, so what
// was written before still reads back. Not safe for concurrent use: the session's logger
// goroutine owns it.
//
// A file is readable at every moment, not only once Close finalized it, so that a
// process killed by SIGKILL (or a machine losing power) leaves a file that reads up to
// its last whole buffer, with the header buffer's counters as the file was opened
// (BuffersWritten 1, EndTime 0: never finalized). Each write ends where a buffer ends:
// an uncompressed buffer is written whole in one call at its final offset; compressed
// buffers, which follow each other at unaligned offsets, are written whole too, one or
// more per call, each call starting where the previous one ended. Windows' compression
// area writes a trace buffer's worth of its stream at a time, cutting a compressed
// buffer whenever the worth ends inside one; a file cut after such a write ends inside a
// buffer, which no reader can take. etwemu holds back the head of a cut buffer and
// writes it with the rest of that buffer at the next flush instead. [emulator choice]
// Once the session stops, the file's bytes and every counter are those of the
// flush-by-flush rule; only the order of the writes differs. (A write the kernel itself
// cuts short, or a file another program truncated, can still end inside a buffer; that
// is the reader's to report.)
type Writer struct {
	o       Options
	fs      FileSystem
	mode    uint32
	bufSize int64
	limit   int64 // MaximumFileSize in bytes; 0 for no limit
	header  LogfileHeader
	name    string // the current file's name
	f       WriteFile
	number  int   // NEWFILE: the current file's number
	pos     int64 // where the next buffer goes
	hwm     int64 // end of the data written so far (circular files wrap below it)
	written int   // buffers in the current file, the header buffer included
	full    bool  // SEQUENTIAL file at MaximumFileSize: refuses buffers
	closed  bool  // Close was called
	comp    *compressor
}

// Create opens (or, with APPEND, reopens) the log file and writes its header buffer.
// Errors carry the Windows code: ERROR_INVALID_PARAMETER for options the modes refuse,
// ERROR_BAD_PATHNAME for a file that cannot be created.
func Create(o Options) (*Writer, error) {
	w := &Writer{o: o, fs: o.FS, mode: o.Info.LogFileMode, bufSize: int64(o.BufferSize)}
	if w.fs == nil {
		w.fs = OS{}
	}
	if o.Permissions == 0 {
		w.o.Permissions = 0o644
	}
	w.limit = maxFileBytes(w.mode, o.Info.MaxFileSize)
	if err := checkFile(o.Info.Version, o.BufferSize); err != nil {
		return nil, err
	}
	if o.Path == "" {
		return nil, winerr.New(winerr.ErrInvalidParameter, "a log file needs a name")
	}
	if w.mode&modeNewFile != 0 && strings.Count(o.Path, "%d") != 1 {
		return nil, winerr.New(winerr.ErrInvalidParameter, "EVENT_TRACE_FILE_MODE_NEWFILE needs a file name with one %%d, not %q", o.Path)
	}
	if w.mode&modeCircular != 0 && w.limit < 2*w.bufSize {
		return nil, winerr.New(winerr.ErrInvalidParameter, "a circular file of %d bytes has no room for a %d-byte trace buffer after its header buffer", w.limit, w.bufSize)
	}
	// [UNCERTAIN] Windows' rule for a NEWFILE size below two buffers is not public. Every
	// file of such a series would be full from its header buffer on: each buffer would
	// start a file of its own, past MaximumFileSize. It is refused as a circular file's is.
	if w.mode&modeNewFile != 0 && w.limit > 0 && w.limit < 2*w.bufSize {
		return nil, winerr.New(winerr.ErrInvalidParameter, "NEWFILE files of %d bytes have no room for a %d-byte trace buffer after their header buffer", w.limit, w.bufSize)
	}
	// Circular files are written buffer by buffer, uncompressed: a compressed stream
	// cannot wrap. [emulator limitation]
	if o.Compress && w.mode&modeCircular == 0 {
		w.comp = newCompressor(o.BufferSize, compressionRules.At(o.Info.Version))
	}
	w.header = headerFor(&w.o.Info, o.BufferSize, "", w.comp != nil)
	if w.mode&modeAppend != 0 {
		if err := w.reopen(); err != nil {
			return nil, err
		}
		return w, nil
	}
	w.number = 1
	if err := w.open(); err != nil {
		return nil, err
	}
	return w, nil
}

// fileName is the name of file number n.
func (w *Writer) fileName(n int) string {
	if w.mode&modeNewFile == 0 {
		return w.o.Path
	}
	return NewFileName(w.o.Path, n)
}

// NewFileName is the name of file number n (1, 2, ...) of an EVENT_TRACE_FILE_MODE_NEWFILE
// series whose LogFileName is pattern: its %d replaced by n.
func NewFileName(pattern string, n int) string {
	return strings.Replace(pattern, "%d", strconv.Itoa(n), 1)
}

// open creates the current file and writes its header buffer. A header the buffer
// cannot hold is refused before the file is made, and a header the disk cannot take
// removes the file it made: a refused start leaves no file behind.
func (w *Writer) open() error {
	w.name = w.fileName(w.number)
	w.header.LogFileName = w.name
	w.header.BuffersWritten = 1
	w.header.EndTime = 0
	hb, err := HeaderBuffer(&w.o.Info, &w.header, uint32(w.bufSize))
	if err != nil {
		return winerr.New(winerr.ErrInvalidParameter, "%v", err)
	}
	if r, ok := w.fs.(Roomer); ok && w.mode&modePreallocate != 0 && w.limit > 0 {
		if room, known := r.Room(w.name); known && room < w.limit {
			// [emulator choice] Refused before the file is opened, so an existing file of
			// the name keeps its bytes.
			return winerr.New(winerr.ErrDiskFull, "cannot preallocate %d bytes for %q: its volume has room for %d (free space and the file's own)", w.limit, w.name, room)
		}
	}
	f, err := w.fs.OpenFile(w.name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, w.o.Permissions)
	if err != nil {
		return winerr.New(winerr.ErrBadPathname, "cannot create log file %q: %v", w.name, err)
	}
	w.f = f
	if w.mode&modePreallocate != 0 && w.limit > 0 {
		if err := Preallocate(f, w.limit); err != nil {
			f.Truncate(0) // a reservation that ran out of space may have kept what it got
			f.Close()
			w.removeFile()
			return diskErr(err, "cannot preallocate %d bytes for %q", w.limit, w.name)
		}
	}
	if _, err := f.WriteAt(hb, 0); err != nil {
		f.Close()
		w.removeFile()
		return diskErr(err, "cannot write the header of %q", w.name)
	}
	w.pos, w.hwm, w.written, w.full = w.bufSize, w.bufSize, 1, false
	return nil
}

// removeFile removes the file open made and could not make ready, where the file system
// can: the refused start leaves no file; an error leaves an empty one.
func (w *Writer) removeFile() {
	if rm, ok := w.fs.(Remover); ok {
		rm.Remove(w.name)
	}
}

// reopen opens an existing file for EVENT_TRACE_FILE_MODE_APPEND: same buffer size, the
// new buffers after the old ones, BuffersWritten counting both. A missing file is
// created.
func (w *Writer) reopen() error {
	w.number = 1
	w.name = w.o.Path
	f, err := w.fs.OpenFile(w.name, os.O_RDWR, w.o.Permissions)
	if errors.Is(err, os.ErrNotExist) {
		return w.open()
	}
	if err != nil {
		return winerr.New(winerr.ErrBadPathname, "cannot open log file %q to append: %v", w.name, err)
	}
	st, err := f.Stat()
	if err == nil {
		var rd *Reader
		if rd, err = NewReader(f, st.Size()); err == nil {
			h := rd.Header()
			switch {
			// BufferSize, NumberOfProcessors and ClockType "must be the same in both the
			// logger and the file being appended" (Microsoft Learn, Logging Mode
			// Constants, EVENT_TRACE_FILE_MODE_APPEND).
			case h.BufferSize != uint32(w.bufSize):
				err = fmt.Errorf("its buffers are %d bytes, the session's %d", h.BufferSize, w.bufSize)
			case h.NumberOfProcessors != w.o.Info.Processors:
				err = fmt.Errorf("it was written by %d processors, the session has %d", h.NumberOfProcessors, w.o.Info.Processors)
			case h.ReservedFlags != w.o.Info.ClockType:
				err = fmt.Errorf("its clock type is %d, the session's %d", h.ReservedFlags, w.o.Info.ClockType)
			case h.SubVersion >= 2 || w.comp != nil:
				err = errors.New("compressed files cannot be appended to")
			default:
				n := int64(0)
				for {
					b, e := rd.Next()
					if e != nil {
						err = e
						break
					}
					n = b.FileOffset + int64(b.Stored)
				}
				if err == io.EOF {
					err = nil
				}
				w.header, w.pos, w.hwm, w.written = h, n, n, int(n/w.bufSize)
			}
		}
	}
	if err != nil {
		f.Close()
		return winerr.New(winerr.ErrInvalidParameter, "cannot append to %q: %v", w.name, err)
	}
	w.f = f
	return nil
}

// Name returns the name of the file being written.
func (w *Writer) Name() string { return w.name }

// FileNumber returns the number of the file being written (1 unless NEWFILE moved on).
func (w *Writer) FileNumber() int { return w.number }

// Full reports whether a SEQUENTIAL file reached MaximumFileSize.
func (w *Writer) Full() bool { return w.full }

// WriteBuffer writes one sealed buffer of BufferSize bytes. A buffer of another length,
// or whose header's Offset is not within it, is lost with ERROR_INVALID_PARAMETER: it
// would leave a hole or overlap the next buffer in the file.
func (w *Writer) WriteBuffer(buf []byte) Result {
	if int64(len(buf)) != w.bufSize {
		return Result{Lost: 1, EventsLost: EventsIn(buf), Err: winerr.New(winerr.ErrInvalidParameter, "a %d-byte buffer: the file's buffers are %d bytes", len(buf), w.bufSize)}
	}
	if h, ok := abi.DecodeBufferHeader(buf); !ok || h.Offset < abi.BufferHeaderSize || int64(h.Offset) > w.bufSize {
		return Result{Lost: 1, Err: winerr.New(winerr.ErrInvalidParameter, "the buffer's header gives Offset %#x, outside [%#x, %#x]", h.Offset, abi.BufferHeaderSize, w.bufSize)}
	}
	var r Result
	if w.f == nil {
		if w.closed || w.mode&modeNewFile == 0 {
			return Result{Lost: 1, EventsLost: EventsIn(buf), Err: winerr.New(winerr.ErrInvalidHandle, "log file %q is not open", w.name)}
		}
		// A NEWFILE roll-over could not create its file: try the same file again, so
		// that the series goes on once the cause (a missing folder, a file in use) is gone.
		if err := w.open(); err != nil {
			return Result{Lost: 1, EventsLost: EventsIn(buf), Err: err}
		}
		r.Written++
	}
	if w.comp != nil {
		cr := w.comp.add(w, buf)
		cr.Written += r.Written
		return cr
	}
	if err := w.place(w.bufSize, &r); err != nil {
		r.Lost, r.EventsLost, r.Err = r.Lost+1, r.EventsLost+EventsIn(buf), err
		return r
	}
	if err := w.writeAt(buf, w.pos); err != nil {
		r.Lost, r.EventsLost, r.Err = r.Lost+1, r.EventsLost+EventsIn(buf), err
		return r
	}
	w.advance(w.bufSize)
	r.Written++
	return r
}

// place makes room for n bytes at w.pos: a circular file wraps to its first data buffer,
// a NEWFILE file moves to the next file (counting its header buffer in r), a full
// SEQUENTIAL file refuses with ERROR_LOG_FILE_FULL.
func (w *Writer) place(n int64, r *Result) error {
	if w.limit == 0 || w.pos+n <= w.limit {
		return nil
	}
	switch {
	case w.mode&modeCircular != 0:
		w.pos = w.bufSize
		return nil
	case w.mode&modeNewFile != 0:
		nr := w.NextFile()
		r.Written += nr.Written
		r.Lost += nr.Lost
		r.EventsLost += nr.EventsLost
		return nr.Err
	}
	w.full = true
	return winerr.New(winerr.ErrLogFileFull, "log file %q reached MaximumFileSize (%d bytes)", w.name, w.limit)
}

func (w *Writer) writeAt(b []byte, off int64) error {
	if _, err := w.f.WriteAt(b, off); err != nil {
		return diskErr(err, "writing %d bytes at %#x of %q", len(b), off, w.name)
	}
	return nil
}

// diskErr is the error of a failed write, truncate or close of the log file
// (winerr.WriteFailed).
func diskErr(err error, format string, args ...any) error {
	return winerr.WriteFailed(err, fmt.Sprintf(format, args...))
}

// maxFileBytes is MaximumFileSize in bytes: MB, or KB with
// EVENT_TRACE_USE_KBYTES_FOR_SIZE in mode; 0 for no limit.
func maxFileBytes(mode, size uint32) int64 {
	if mode&modeKBytes != 0 {
		return int64(size) << 10
	}
	return int64(size) << 20
}

func (w *Writer) advance(n int64) {
	w.pos += n
	w.hwm = max(w.hwm, w.pos)
	w.written++
}

// NextFile finalizes the current file and starts the next one (NEWFILE's roll-over, and
// ControlTrace's EVENT_TRACE_CONTROL_INCREMENT_FILE). Buffers still in the compression
// area go to the file they were compressed for first. The result counts them and the new
// file's header buffer. A file that cannot be created leaves the writer refusing buffers
// until a roll-over succeeds: the next buffer, or a next call, tries the same file again.
func (w *Writer) NextFile() Result {
	if w.mode&modeNewFile == 0 {
		return Result{Err: winerr.New(winerr.ErrInvalidParameter, "only an EVENT_TRACE_FILE_MODE_NEWFILE file moves to a next file")}
	}
	if w.closed {
		return Result{Err: winerr.New(winerr.ErrInvalidHandle, "log file %q is closed", w.name)}
	}
	r := w.Flush()
	if w.f != nil {
		if w.o.Counters != nil {
			w.SetCounters(w.o.Counters())
		}
		if err := w.finalize(); err != nil && r.Err == nil {
			r.Err = err
		}
		w.number++
	}
	if err := w.open(); err != nil {
		w.f, w.full = nil, true
		if r.Err == nil {
			r.Err = err
		}
		return r
	}
	r.Written++
	return r
}

// Flush writes what the compression area holds (a partial chunk) to the file.
func (w *Writer) Flush() Result {
	if w.comp == nil || w.f == nil {
		return Result{}
	}
	return w.comp.drain(w)
}

// Finish is the last Flush, before Close: what the compression area still holds after
// it, kept by a failed flush for a next one that will not come, is lost, and counted in
// the Result. (A write the disk tore may have stored that buffer whole before failing;
// it is counted lost all the same: the writer cannot tell what a failed write kept.)
func (w *Writer) Finish() Result {
	if w.comp == nil {
		return Result{}
	}
	r := w.Flush()
	if r.Err != nil || w.f == nil {
		lost, events := w.comp.discard()
		if w.comp.rule.resetOnFailure || w.f == nil {
			r.Lost += lost // 6.2 counted the failed flush already, one for the area
		}
		r.EventsLost += events
	}
	return r
}

// EventsIn counts the EVENT_HEADER records of a sealed, uncompressed buffer: the events
// losing it costs (Result.EventsLost, a session's RealTimeEventsLost). A buffer whose
// header does not frame it holds none.
func EventsIn(buf []byte) uint64 {
	h, ok := abi.DecodeBufferHeader(buf)
	if !ok || h.Offset < abi.BufferHeaderSize || int(h.Offset) > len(buf) {
		return 0
	}
	return (&Buffer{Data: buf[:h.Offset]}).EventRecords()
}

// Counters are the session counters a finalized header carries.
type Counters struct {
	EventsLost  uint32
	BuffersLost uint32 // LogBuffersLost
	EndTime     int64  // FILETIME
}

// SetCounters sets the counters the next finalize writes.
func (w *Writer) SetCounters(c Counters) {
	w.header.EventsLost, w.header.BuffersLost, w.header.EndTime = c.EventsLost, c.BuffersLost, c.EndTime
}

// Written returns the buffers in the current file, its header buffer included: the
// BuffersWritten its header will carry.
func (w *Writer) Written() int { return w.written }

// finalize patches the current file's header with the counters, trims preallocated
// space and closes it (WmipFinalizeHeader).
func (w *Writer) finalize() error {
	if w.f == nil {
		return nil
	}
	var err error
	var p [4]byte
	le := binary.LittleEndian
	patch := func(off int, v uint32) {
		le.PutUint32(p[:], v)
		if _, e := w.f.WriteAt(p[:], int64(logfileHeaderOffset+off)); e != nil && err == nil {
			err = diskErr(e, "finalizing the header of %q", w.name)
		}
	}
	patch(offLfhBuffersWritten, uint32(w.written))
	patch(offLfhEventsLost, w.header.EventsLost)
	patch(offLfhBuffersLost, w.header.BuffersLost)
	patch(offLfhEndTime, uint32(w.header.EndTime))
	patch(offLfhEndTime+4, uint32(uint64(w.header.EndTime)>>32))
	if w.mode&modePreallocate != 0 {
		if e := w.f.Truncate(w.hwm); e != nil && err == nil {
			err = diskErr(e, "trimming %q", w.name)
		}
	}
	if e := w.f.Close(); e != nil && err == nil {
		err = diskErr(e, "closing %q", w.name)
	}
	return err
}

// Close finalizes the header with c and closes the file. Call Finish first, so that the
// counters include what the compression area held; if it still holds buffers, Close
// writes them (Finish) and adds those it could not write to c's BuffersLost, so that
// nothing is dropped uncounted.
func (w *Writer) Close(c Counters) error {
	var ferr error
	if w.comp != nil && w.f != nil {
		r := w.Finish()
		c.BuffersLost += uint32(r.Lost)
		ferr = r.Err
	}
	w.SetCounters(c)
	err := w.finalize()
	w.f, w.closed = nil, true
	return errors.Join(ferr, err)
}
