package etl

import (
	"io"
	"io/fs"
	"os"
	"sort"
	"sync"
	"time"
)

// MemFS is a FileSystem in memory, for tests and fuzzing: files that need no disk and
// leave nothing behind. Safe for concurrent use.
type MemFS struct {
	mu    sync.Mutex
	files map[string]*memData // protected by mu
}

type memData struct {
	mu sync.Mutex
	b  []byte // protected by mu
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
		d = &memData{}
		m.files[name] = d
	}
	if flag&os.O_TRUNC != 0 {
		d.mu.Lock()
		d.b = d.b[:0]
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
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if end := off + int64(len(p)); end > int64(len(f.d.b)) {
		f.d.b = append(f.d.b, make([]byte, end-int64(len(f.d.b)))...)
	}
	return copy(f.d.b[off:], p), nil
}

func (f *memFile) Truncate(size int64) error {
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	if size <= int64(len(f.d.b)) {
		f.d.b = f.d.b[:size]
	} else {
		f.d.b = append(f.d.b, make([]byte, size-int64(len(f.d.b)))...)
	}
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
