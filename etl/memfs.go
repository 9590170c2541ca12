package etl

import (
	"errors"
	"io"
	"io/fs"
	"math"
	"math/bits"
	"os"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/etwemu/etwemu/winerr"
)

// DefaultMemFSCapacity is what a MemFS holds, all its files together, unless
// SetCapacity says otherwise: 256 MiB.
const DefaultMemFSCapacity = 256 << 20

// MemFS is a FileSystem in memory, for tests, fuzzing and scenarios: files that need no
// disk and leave nothing behind. It models a volume of bounded size: once its files
// together hold Capacity bytes, a write or a Truncate that would grow one fails with
// ERROR_DISK_FULL, as WriteFile and SetEndOfFile fail on a full disk, and changes
// nothing; Room answers how much a file may take. It leaves out directories. The zero
// value is ready to use, with DefaultMemFSCapacity. Safe for concurrent use.
type MemFS struct {
	mu       sync.Mutex
	files    map[string]*memData // protected by mu
	capacity atomic.Int64        // bytes; 0 for DefaultMemFSCapacity; written by SetCapacity
	used     atomic.Int64        // bytes held by all files; changed by the file that grows or shrinks, under its memData.mu, reserving with CompareAndSwap
}

// A file's bytes are kept in pages, made as it grows and never copied. The first pages
// are short, so that a small file takes little (a session's header buffer of 4 KB
// takes 4 KB, not 64) and a file of n bytes under memPage less than 2n, or memFirstPage
// when n is smaller: page 0 holds
// memFirstPage bytes and page i from 1 to smallPages-1 memFirstPage<<(i-1), that is 4,
// 4, 8, 16 and 32 KB, which end at memPage; every page after holds memPage, so that a
// larger file takes less than a page more than its size. A file grown a buffer at a
// time used to double one first page up to memPage, copying it each time: half the
// bytes a session's start and stop allocated. A page is made when a byte is first
// written into it: a file grown by Truncate (a preallocated log file) is sparse, as on
// a disk file system, and its unwritten pages read as zeros without taking memory.
const (
	memPage      = 64 << 10
	memFirstPage = 4 << 10
	smallPages   = 5 // log2(memPage/memFirstPage) + 1
)

// pageStart returns the offset in the file at which page i begins.
func pageStart(i int) int64 {
	switch {
	case i == 0:
		return 0
	case i < smallPages:
		return memFirstPage << (i - 1)
	default:
		return memPage * int64(i-smallPages+1)
	}
}

// pageAt returns the page that holds the file's byte at off, and the byte's place in it.
func pageAt(off int64) (int, int64) {
	if off >= memPage {
		return smallPages - 1 + int(off/memPage), off % memPage
	}
	i := bits.Len64(uint64(off) / memFirstPage)
	return i, off - pageStart(i)
}

// pagesFor returns how many pages hold a file of size bytes.
func pagesFor(size int64) int {
	if size == 0 {
		return 0
	}
	i, _ := pageAt(size - 1)
	return i + 1
}

type memData struct {
	fs      *MemFS
	mu      sync.Mutex
	pages   [][]byte // pagesFor(size) of them, page i pageStart(i+1)-pageStart(i) bytes or nil (never written: zeros); zero past size; protected by mu
	size    int64    // protected by mu
	removed bool     // set by Remove under mu: the file holds nothing and grows no more
}

// readAt copies the file's bytes at off into p and returns how many there were. The
// caller holds d.mu.
func (d *memData) readAt(p []byte, off int64) int {
	n := 0
	for n < len(p) && off < d.size {
		i, in := pageAt(off)
		dst := p[n : n+int(min(int64(len(p)-n), d.size-off, pageStart(i+1)-off))]
		if d.pages[i] == nil {
			clear(dst)
		} else {
			copy(dst, d.pages[i][in:])
		}
		k := len(dst)
		n += k
		off += int64(k)
	}
	return n
}

// writeAt copies p into the file at off, which the file's size already covers. The
// caller holds d.mu.
func (d *memData) writeAt(p []byte, off int64) {
	for len(p) > 0 {
		i, in := pageAt(off)
		if d.pages[i] == nil {
			d.pages[i] = make([]byte, pageStart(i+1)-pageStart(i))
		}
		k := copy(d.pages[i][in:], p)
		p = p[k:]
		off += int64(k)
	}
}

// grow extends the file to size bytes of zeros, within the disk's capacity. The caller
// holds d.mu.
func (d *memData) grow(size int64, name string) error {
	if d.removed {
		// A handle still open on a removed file writes to nothing the file system
		// counts, so its bytes would escape the capacity.
		return &fs.PathError{Op: "write", Path: name, Err: errRemoved}
	}
	if err := d.fs.reserve(size-d.size, name); err != nil {
		return err
	}
	for i := len(d.pages); pageStart(i) < size; i++ {
		d.pages = append(d.pages, nil) // made by the first write into it
	}
	d.size = size
	return nil
}

// shrink cuts the file to size bytes, giving back the space and the pages past it. The
// caller holds d.mu.
func (d *memData) shrink(size int64) {
	d.fs.used.Add(size - d.size)
	keep := pagesFor(size)
	clear(d.pages[keep:]) // let the collector have them
	d.pages = d.pages[:keep]
	if keep > 0 && d.pages[keep-1] != nil {
		clear(d.pages[keep-1][size-pageStart(keep-1):]) // a later growth reads zeros
	}
	d.size = size
}

// SetCapacity sets how many bytes the files may hold together; n <= 0 restores
// DefaultMemFSCapacity. Lowering it below what the files hold refuses further growth
// and takes nothing away.
func (m *MemFS) SetCapacity(n int64) { m.capacity.Store(max(n, 0)) }

// Capacity returns how many bytes the files may hold together.
func (m *MemFS) Capacity() int64 {
	if c := m.capacity.Load(); c > 0 {
		return c
	}
	return DefaultMemFSCapacity
}

// Used returns how many bytes the files hold together.
func (m *MemFS) Used() int64 { return m.used.Load() }

// reserve accounts for n more bytes, or fails with ERROR_DISK_FULL if they would pass
// the capacity. The caller holds the growing file's memData.mu.
func (m *MemFS) reserve(n int64, name string) error {
	for {
		used, limit := m.used.Load(), m.Capacity()
		if n > limit-used {
			return winerr.New(winerr.ErrDiskFull, "the in-memory disk holds %d of its %d bytes: %d more for %q do not fit", used, limit, n, name)
		}
		if m.used.CompareAndSwap(used, used+n) {
			return nil
		}
	}
}

// OpenFile implements FileSystem for the flags a Writer uses: O_CREATE, O_TRUNC, O_RDWR.
func (m *MemFS) OpenFile(name string, flag int, _ os.FileMode) (WriteFile, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.files == nil {
		m.files = map[string]*memData{}
	}
	d, ok := m.files[name]
	if !ok {
		if flag&os.O_CREATE == 0 {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
		}
		d = &memData{fs: m}
		m.files[name] = d
	}
	if flag&os.O_TRUNC != 0 {
		d.mu.Lock()
		d.shrink(0)
		d.mu.Unlock()
	}
	return &memFile{name: name, d: d}, nil
}

// Room implements Roomer: the capacity the files leave free, plus what name holds.
func (m *MemFS) Room(name string) (int64, bool) {
	n := m.Capacity() - m.Used()
	m.mu.Lock()
	d := m.files[name]
	m.mu.Unlock()
	if d != nil {
		d.mu.Lock()
		n += d.size
		d.mu.Unlock()
	}
	return n, true
}

// Remove deletes the file name and gives back the space it held (Remover).
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	d, ok := m.files[name]
	delete(m.files, name)
	m.mu.Unlock()
	if !ok {
		return &fs.PathError{Op: "remove", Path: name, Err: fs.ErrNotExist}
	}
	d.mu.Lock()
	d.shrink(0)
	d.removed = true
	d.mu.Unlock()
	return nil
}

// errRemoved is the error of a write that would grow a file through a handle opened
// before the file was removed.
var errRemoved = errors.New("the file was removed while open")

// ReadFile returns a copy of a file's bytes.
func (m *MemFS) ReadFile(name string) ([]byte, bool) {
	m.mu.Lock()
	d, ok := m.files[name]
	m.mu.Unlock()
	if !ok {
		return nil, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	b := make([]byte, d.size)
	d.readAt(b, 0)
	return b, true
}

// Size returns a file's size without copying it.
func (m *MemFS) Size(name string) (int64, bool) {
	m.mu.Lock()
	d, ok := m.files[name]
	m.mu.Unlock()
	if !ok {
		return 0, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.size, true
}

// Names returns the files' names, sorted.
func (m *MemFS) Names() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for n := range m.files {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

type memFile struct {
	name string
	d    *memData
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &fs.PathError{Op: "read", Path: f.name, Err: fs.ErrInvalid}
	}
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if off >= f.d.size {
		return 0, io.EOF
	}
	n := f.d.readAt(p, off)
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 || off > math.MaxInt64-int64(len(p)) {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: fs.ErrInvalid}
	}
	if len(p) == 0 {
		return 0, nil // as pwrite(2): nothing written, the size unchanged
	}
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if end := off + int64(len(p)); end > f.d.size {
		if err := f.d.grow(end, f.name); err != nil {
			return 0, err
		}
	}
	f.d.writeAt(p, off)
	return len(p), nil
}

func (f *memFile) Truncate(size int64) error {
	if size < 0 {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: fs.ErrInvalid}
	}
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if size <= f.d.size {
		f.d.shrink(size)
		return nil
	}
	return f.d.grow(size, f.name)
}

func (f *memFile) Stat() (os.FileInfo, error) {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	return memInfo{f.name, f.d.size}, nil
}

func (f *memFile) Close() error { return nil }

type memInfo struct {
	name string
	size int64
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) Mode() os.FileMode  { return 0o644 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }

// ParseBuffer reads one sealed buffer held in memory, as a real-time consumer receives
// it. An uncompressed buffer's Data shares data's bytes.
func ParseBuffer(data []byte) (*Buffer, error) {
	// A buffer alone may hold, and decompress to, a whole MAX_ETW_BUFFER_SIZE: its
	// record budget is a file's of that BufferSize.
	rd := &Reader{r: bytesReaderAt(data), size: int64(len(data)), limit: maxBufferSize}
	return rd.read(0)
}

type bytesReaderAt []byte

func (b bytesReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(b)) {
		return 0, io.EOF
	}
	n := copy(p, b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}
