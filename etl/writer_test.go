package etl

import (
	"bytes"
	"errors"
	"io"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// journalFS records every write a Writer makes, so that a test can rebuild the file as a
// process killed after any one of them would have left it.
type journalFS struct {
	mu     sync.Mutex
	writes []journalWrite // protected by mu
}

type journalWrite struct {
	off int64
	b   []byte
}

type journalFile struct {
	fs *journalFS
}

func (j *journalFS) OpenFile(string, int, os.FileMode) (WriteFile, error) {
	return journalFile{j}, nil
}

func (f journalFile) WriteAt(b []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	f.fs.writes = append(f.fs.writes, journalWrite{off, append([]byte(nil), b...)})
	return len(b), nil
}

func (f journalFile) ReadAt([]byte, int64) (int, error) { return 0, io.EOF }
func (f journalFile) Truncate(int64) error              { return nil }
func (f journalFile) Stat() (os.FileInfo, error)        { return memInfo{"journal", 0}, nil }
func (f journalFile) Close() error                      { return nil }

// image is the file after the first n writes.
func (j *journalFS) image(n int) []byte {
	j.mu.Lock()
	defer j.mu.Unlock()
	var b []byte
	for _, w := range j.writes[:n] {
		if end := w.off + int64(len(w.b)); end > int64(len(b)) {
			b = append(b, make([]byte, end-int64(len(b)))...)
		}
		copy(b[w.off:], w.b)
	}
	return b
}

// A compressed file killed after any write reads whole up to its last buffer: every
// write the compression area makes ends where a compressed buffer ends, so no prefix of
// the writes leaves a buffer cut short. (Written a trace buffer's worth of the area at a
// time, most prefixes end inside a buffer, which no reader can take.)
func TestCompressedKilledAfterAnyWrite(t *testing.T) {
	for _, v := range []winver.Version{winver.V6_2, winver.V6_3, winver.V2004} {
		j := &journalFS{}
		w, err := Create(Options{Path: "k.etl", BufferSize: testBuf, Info: testInfo(v, modeSequential, 0), Compress: true, FS: j})
		if err != nil {
			t.Fatal(err)
		}
		bufs := buffers(40)
		writeAll(t, w, bufs)
		// The file as a killed process leaves it: never finalized.
		last := 0
		for n := 1; n <= len(j.writes); n++ {
			img := j.image(n)
			rd, err := NewReader(bytes.NewReader(img), int64(len(img)))
			if err != nil {
				t.Fatalf("%v: after write %d of %d: %v", v, n, len(j.writes), err)
			}
			read := 0
			for {
				b, err := rd.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%v: after write %d of %d (%d bytes): %v", v, n, len(j.writes), len(img), err)
				}
				if b.FileOffset > 0 {
					if orig := bufs[read]; !bytes.Equal(b.Data[0x48:], orig[0x48:b.End()]) {
						t.Fatalf("%v: after write %d: buffer %d differs from the sealed one", v, n, read)
					}
					read++
				}
			}
			if read < last {
				t.Fatalf("%v: after write %d: %d buffers, fewer than the %d before", v, n, read, last)
			}
			last = read
		}
		if last != len(bufs) {
			t.Errorf("%v: the whole file holds %d buffers, want %d", v, last, len(bufs))
		}
	}
}

// enospcFS fails every write after the header buffer as a full disk does.
type enospcFS struct{ MemFS }

type enospcFile struct{ WriteFile }

func (e *enospcFS) OpenFile(name string, flag int, perm os.FileMode) (WriteFile, error) {
	f, err := e.MemFS.OpenFile(name, flag, perm)
	return enospcFile{f}, err
}

func (f enospcFile) WriteAt(b []byte, off int64) (int, error) {
	if off > 0 {
		return 0, &os.PathError{Op: "write", Path: "full.etl", Err: syscall.ENOSPC}
	}
	return f.WriteFile.WriteAt(b, off)
}

// A write that fails for want of space is named as a full disk, ERROR_DISK_FULL, and
// not as a file at MaximumFileSize.
func TestDiskFullIsNamed(t *testing.T) {
	w, err := Create(Options{Path: "full.etl", BufferSize: testBuf, Info: testInfo(winver.V2004, modeSequential, 64), FS: &enospcFS{}})
	if err != nil {
		t.Fatal(err)
	}
	r := w.WriteBuffer(buffers(1)[0])
	if r.Lost != 1 || !errors.Is(r.Err, winerr.ErrDiskFull) || !strings.Contains(r.Err.Error(), "the disk is full") || strings.Contains(r.Err.Error(), "MaximumFileSize") {
		t.Fatalf("lost %d, err %v; want the buffer lost with ERROR_DISK_FULL, the disk is full", r.Lost, r.Err)
	}
}

// A NEWFILE size that holds no trace buffer after the header buffer is refused, as a
// circular file's is, rather than rolling over to a file per buffer, each past the size.
func TestNewFileTooSmallRefused(t *testing.T) {
	_, err := Create(Options{Path: "a_%d.etl", BufferSize: testBuf, Info: testInfo(winver.V2004, modeNewFile|modeKBytes, 1), FS: &MemFS{}})
	if !errors.Is(err, winerr.ErrInvalidParameter) || !strings.Contains(err.Error(), "no room") {
		t.Fatalf("NEWFILE files of 1 KB with %d-byte buffers: %v, want ERROR_INVALID_PARAMETER", testBuf, err)
	}
	if _, err := Create(Options{Path: "b_%d.etl", BufferSize: testBuf, Info: testInfo(winver.V2004, modeNewFile|modeKBytes, 2*testBuf/1024), FS: &MemFS{}}); err != nil {
		t.Fatalf("NEWFILE files of two buffers: %v", err)
	}
}
