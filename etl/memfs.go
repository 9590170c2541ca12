package etl

import (
	"io"
	"io/fs"
	"os"
	"slices"
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
// nothing. It leaves out directories, removal and free-space queries. The zero value is
// ready to use, with DefaultMemFSCapacity. Safe for concurrent use.
type MemFS struct {
	mu       sync.Mutex
	files    map[string]*memData // protected by mu
	capacity atomic.Int64        // bytes; 0 for DefaultMemFSCapacity; written by SetCapacity
	used     atomic.Int64        // bytes held by all files; changed by the file that grows or shrinks, under its memData.mu, reserving with CompareAndSwap
}

type memData struct {
	fs *MemFS
	mu sync.Mutex
	b  []byte // protected by mu
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
		m.used.Add(-int64(len(d.b)))
		d.b = nil // the space goes back to the disk, and the memory with it
		d.mu.Unlock()
	}
	return &memFile{name: name, d: d}, nil
}

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
	return append([]byte(nil), d.b...), true
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
	return int64(len(d.b)), true
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
	if off >= int64(len(f.d.b)) {
		return 0, io.EOF
	}
	n := copy(p, f.d.b[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, &fs.PathError{Op: "write", Path: f.name, Err: fs.ErrInvalid}
	}
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if end := off + int64(len(p)); end > int64(len(f.d.b)) {
		if err := f.d.grow(end, f.name); err != nil {
			return 0, err
		}
	}
	return copy(f.d.b[off:], p), nil
}

func (f *memFile) Truncate(size int64) error {
	if size < 0 {
		return &fs.PathError{Op: "truncate", Path: f.name, Err: fs.ErrInvalid}
	}
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if size <= int64(len(f.d.b)) {
		f.d.fs.used.Add(size - int64(len(f.d.b)))
		f.d.b = f.d.b[:size]
		return nil
	}
	return f.d.grow(size, f.name)
}

// grow extends the file to size bytes of zeros, within the disk's capacity. The caller
// holds d.mu.
func (d *memData) grow(size int64, name string) error {
	if err := d.fs.reserve(size-int64(len(d.b)), name); err != nil {
		return err
	}
	old := len(d.b)
	d.b = slices.Grow(d.b, int(size)-old)[:size]
	clear(d.b[old:]) // a shrunk file's old bytes may lie past its end
	return nil
}

func (f *memFile) Stat() (os.FileInfo, error) {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	return memInfo{f.name, int64(len(f.d.b))}, nil
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
	rd := &Reader{r: bytesReaderAt(data), size: int64(len(data))}
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
