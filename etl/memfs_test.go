package etl

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// The in-memory disk holds at most its capacity, all files together: a write or a
// Truncate past it fails with ERROR_DISK_FULL and changes nothing; truncating and
// recreating give the space back.
func TestMemFSCapacity(t *testing.T) {
	var m MemFS
	if m.Capacity() != DefaultMemFSCapacity {
		t.Fatalf("zero MemFS capacity %d, want %d", m.Capacity(), DefaultMemFSCapacity)
	}
	m.SetCapacity(100)
	a, err := m.OpenFile("a", os.O_RDWR|os.O_CREATE, 0)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.OpenFile("b", os.O_RDWR|os.O_CREATE, 0)
	if _, err := a.WriteAt(bytes.Repeat([]byte{1}, 60), 0); err != nil {
		t.Fatal(err)
	}
	if _, err := b.WriteAt(bytes.Repeat([]byte{2}, 30), 0); err != nil {
		t.Fatal(err)
	}
	// 60 + 30 held; 11 more do not fit, 10 do. Overwriting inside a file takes no space.
	if n, err := b.WriteAt(make([]byte, 11), 30); n != 0 || !errors.Is(err, winerr.ErrDiskFull) {
		t.Errorf("write past the capacity: %d, %v; want 0, ERROR_DISK_FULL", n, err)
	}
	if sz, _ := m.Size("b"); sz != 30 || m.Used() != 90 {
		t.Errorf("a refused write changed the disk: b %d bytes, %d used", sz, m.Used())
	}
	if err := a.Truncate(71); !errors.Is(err, winerr.ErrDiskFull) {
		t.Errorf("Truncate past the capacity: %v", err)
	}
	if _, err := a.WriteAt(bytes.Repeat([]byte{3}, 60), 0); err != nil {
		t.Errorf("overwrite in place: %v", err)
	}
	if _, err := b.WriteAt(make([]byte, 10), 30); err != nil || m.Used() != 100 {
		t.Errorf("write up to the capacity: %v, %d used", err, m.Used())
	}
	// Shrinking gives space back; the bytes a later growth exposes read as zeros.
	if err := a.Truncate(10); err != nil || m.Used() != 50 {
		t.Fatalf("shrink: %v, %d used", err, m.Used())
	}
	if err := a.Truncate(20); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 20)
	if _, err := a.ReadAt(got, 0); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	if want := append(bytes.Repeat([]byte{3}, 10), make([]byte, 10)...); !bytes.Equal(got, want) {
		t.Errorf("regrown file reads %v, want %v", got, want)
	}
	// O_TRUNC gives a file's whole space back.
	if _, err := m.OpenFile("b", os.O_RDWR|os.O_TRUNC, 0); err != nil || m.Used() != 20 {
		t.Errorf("O_TRUNC: %v, %d used, want 20", err, m.Used())
	}
	// Negative offsets are refused, not a panic.
	if _, err := a.WriteAt([]byte{1}, -1); err == nil {
		t.Error("write at -1 accepted")
	}
	if _, err := a.ReadAt([]byte{1}, -1); err == nil {
		t.Error("read at -1 accepted")
	}
	if err := a.Truncate(-1); err == nil {
		t.Error("Truncate(-1) accepted")
	}
	m.SetCapacity(0)
	if m.Capacity() != DefaultMemFSCapacity {
		t.Errorf("SetCapacity(0) left %d", m.Capacity())
	}
}

// A SEQUENTIAL log file with no MaximumFileSize on a full in-memory disk loses the
// buffers that do not fit with ERROR_DISK_FULL and keeps the file readable: the header
// finalizes in place with the counters.
func TestWriterOnFullMemFS(t *testing.T) {
	m := &MemFS{}
	m.SetCapacity(3 * testBuf) // the header buffer and two trace buffers
	w, err := Create(Options{Path: "full.etl", BufferSize: testBuf, Info: testInfo(winver.V2004, modeSequential, 0), FS: m})
	if err != nil {
		t.Fatal(err)
	}
	var written, lost int
	for _, b := range buffers(5) {
		r := w.WriteBuffer(b)
		written += r.Written
		lost += r.Lost
		if r.Lost > 0 && !errors.Is(r.Err, winerr.ErrDiskFull) {
			t.Errorf("lost buffer's error %v, want ERROR_DISK_FULL", r.Err)
		}
	}
	if written != 2 || lost != 3 {
		t.Errorf("written %d lost %d, want 2 and 3", written, lost)
	}
	if err := w.Close(Counters{BuffersLost: uint32(lost), EventsLost: 7, EndTime: 99}); err != nil {
		t.Fatalf("finalizing on a full disk: %v", err)
	}
	data, _ := m.ReadFile("full.etl")
	rd, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	h := rd.Header()
	if h.BuffersWritten != 3 || h.BuffersLost != 3 || h.EventsLost != 7 || h.EndTime != 99 {
		t.Errorf("finalized header: BuffersWritten %d BuffersLost %d EventsLost %d EndTime %d", h.BuffersWritten, h.BuffersLost, h.EventsLost, h.EndTime)
	}
	for {
		if _, err := rd.Next(); err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			break
		}
	}
	if rd.BuffersRead() != 3 {
		t.Errorf("read back %d buffers, want the header buffer and 2", rd.BuffersRead())
	}
}

// A file kept in pages reads back what a flat slice would hold, across page
// boundaries, after shrinking and growing, and holds no page it does not need: a file
// under memPage takes less than twice its size (memFirstPage at least), a larger one
// less than a page more than its size.
func TestMemFSPages(t *testing.T) {
	for _, limit := range []int64{memPage / 2, memPage + memFirstPage, 4 * memPage} {
		var m MemFS
		f, _ := m.OpenFile("p", os.O_RDWR|os.O_CREATE, 0)
		var model []byte
		r := rand.New(rand.NewPCG(7, uint64(limit)))
		for i := range 600 {
			switch r.IntN(5) {
			case 0, 1: // write somewhere up to a little past the end, within the limit
				off := r.Int64N(min(int64(len(model))+limit/4, limit))
				p := make([]byte, r.Int64N(limit-off+1)/2+1)
				for j := range p {
					p[j] = byte(r.Uint32())
				}
				if _, err := f.WriteAt(p, off); err != nil {
					t.Fatal(err)
				}
				if end := off + int64(len(p)); end > int64(len(model)) {
					model = append(model, make([]byte, end-int64(len(model)))...)
				}
				copy(model[off:], p)
			case 2: // shrink or grow, to nothing now and then
				size := r.Int64N(min(int64(len(model))+limit/4, limit) + 1)
				if r.IntN(8) == 0 {
					size = 0
				}
				if err := f.Truncate(size); err != nil {
					t.Fatal(err)
				}
				if size <= int64(len(model)) {
					model = model[:size]
				} else {
					model = append(model, make([]byte, size-int64(len(model)))...)
				}
			default: // read a piece
				off := r.Int64N(int64(len(model)) + 1)
				got := make([]byte, r.Int64N(limit)+1)
				n, _ := f.ReadAt(got, off)
				if want := model[off:min(int64(len(model)), off+int64(len(got)))]; !bytes.Equal(got[:n], want) {
					t.Fatalf("limit %d, op %d: ReadAt(%d) differs", limit, i, off)
				}
			}
			if got, _ := m.ReadFile("p"); !bytes.Equal(got, model) || m.Used() != int64(len(model)) {
				t.Fatalf("limit %d, op %d: file of %d bytes (%d used) differs from the model's %d", limit, i, len(got), m.Used(), len(model))
			}
			d := m.files["p"]
			held := int64(0)
			for j, pg := range d.pages {
				if pg != nil && int64(len(pg)) != pageStart(j+1)-pageStart(j) {
					t.Fatalf("limit %d, op %d: page %d of %d bytes", limit, i, j, len(pg))
				}
				held += int64(len(pg))
			}
			if len(d.pages) != pagesFor(d.size) {
				t.Fatalf("limit %d, op %d: %d pages for a file of %d", limit, i, len(d.pages), d.size)
			}
			if d.size < memPage && held > max(2*d.size-1, memFirstPage) || d.size >= memPage && held >= d.size+memPage {
				t.Fatalf("limit %d, op %d: pages of %d bytes for a file of %d", limit, i, held, d.size)
			}
		}
	}
}

// A small file that grows past a page at once keeps its bytes, in the short pages,
// then whole ones: 4, 4, 8, 16 and 32 KB, then 64 KB; the pages between, never
// written, take nothing.
func TestMemFSShortPageGrowsPastAPage(t *testing.T) {
	var m MemFS
	f, _ := m.OpenFile("p", os.O_RDWR|os.O_CREATE, 0)
	head := []byte("the bytes of a small file")
	f.WriteAt(head, 0)
	if _, err := f.WriteAt([]byte{1}, 2*memPage+5); err != nil {
		t.Fatal(err)
	}
	got, _ := m.ReadFile("p")
	if len(got) != 2*memPage+6 || !bytes.Equal(got[:len(head)], head) || got[2*memPage+5] != 1 {
		t.Fatalf("%d bytes, starting %q", len(got), got[:min(len(got), len(head))])
	}
	var sizes []int
	for _, pg := range m.files["p"].pages {
		sizes = append(sizes, len(pg)>>10)
	}
	if want := []int{4, 0, 0, 0, 0, 0, 64}; !slices.Equal(sizes, want) {
		t.Fatalf("pages of %v KB, want %v", sizes, want)
	}
}

// A file grown by Truncate, as a preallocated log file is, is sparse: it counts its
// size against the capacity, reads zeros, and takes a page only where it is written.
func TestMemFSTruncateIsSparse(t *testing.T) {
	var m MemFS
	f, _ := m.OpenFile("p", os.O_RDWR|os.O_CREATE, 0)
	const size = 64 << 20
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	if m.Used() != size {
		t.Fatalf("%d bytes used, want %d", m.Used(), size)
	}
	if _, err := f.WriteAt([]byte{7}, size/2); err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, pg := range m.files["p"].pages {
		held += len(pg)
	}
	if held != memPage {
		t.Fatalf("pages of %d bytes after one write into a %d-byte file, want one page of %d", held, size, memPage)
	}
	got := make([]byte, 3)
	if _, err := f.ReadAt(got, size/2-1); err != nil || !bytes.Equal(got, []byte{0, 7, 0}) {
		t.Fatalf("read %v (%v), want [0 7 0]", got, err)
	}
}

// Remove deletes a file and gives back the space it held; a file that is not there is
// fs.ErrNotExist.
func TestMemFSRemove(t *testing.T) {
	var m MemFS
	f, err := m.OpenFile("a", os.O_RDWR|os.O_CREATE, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(make([]byte, 100), 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := m.Remove("a"); err != nil || m.Used() != 0 {
		t.Fatalf("Remove: %v, %d bytes still used", err, m.Used())
	}
	if _, ok := m.ReadFile("a"); ok {
		t.Error("the removed file is still there")
	}
	if err := m.Remove("a"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("removing it again: %v", err)
	}

	// A handle still open on a removed file cannot grow it: its bytes would be held
	// outside what the file system counts and bounds.
	g, err := m.OpenFile("b", os.O_RDWR|os.O_CREATE, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.WriteAt(make([]byte, 1000), 0); err != nil {
		t.Fatal(err)
	}
	if err := m.Remove("b"); err != nil {
		t.Fatal(err)
	}
	if n, err := g.WriteAt(make([]byte, 5000), 0); n != 0 || !errors.Is(err, errRemoved) {
		t.Errorf("a write through a handle on a removed file: %d bytes, %v", n, err)
	}
	if err := g.Truncate(4096); !errors.Is(err, errRemoved) {
		t.Errorf("Truncate through a handle on a removed file: %v", err)
	}
	if st, _ := g.Stat(); m.Used() != 0 || st.Size() != 0 || len(m.Names()) != 0 {
		t.Errorf("after writes to a removed file: %d bytes used, its size %d, files %q", m.Used(), st.Size(), m.Names())
	}
}

// WriteAt takes what os.File's does: nothing written past the end leaves the size as it
// is (pwrite(2)), and an offset whose end would pass the largest int64 is refused, not
// wrapped around.
func TestMemFSWriteAtEdges(t *testing.T) {
	var m MemFS
	f, err := m.OpenFile("a", os.O_RDWR|os.O_CREATE, 0)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := f.WriteAt(nil, 10000); n != 0 || err != nil {
		t.Errorf("an empty write past the end: %d, %v", n, err)
	}
	for _, off := range []int64{math.MaxInt64 - 10, math.MaxInt64, -1} {
		if n, err := f.WriteAt(make([]byte, 100), off); n != 0 || !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("100 bytes at %d: %d, %v", off, n, err)
		}
	}
	if st, _ := f.Stat(); st.Size() != 0 || m.Used() != 0 {
		t.Errorf("size %d, %d bytes used; want 0 and 0", st.Size(), m.Used())
	}
}

// noRoom is a file system that cannot say how much room a file has (no Roomer).
type noRoom struct{ m *MemFS }

func (n noRoom) OpenFile(name string, flag int, perm os.FileMode) (WriteFile, error) {
	return n.m.OpenFile(name, flag, perm)
}
func (n noRoom) Remove(name string) error { return n.m.Remove(name) }

// A PREALLOCATE file the volume has no room for is refused before anything is opened:
// an existing file of that name keeps its bytes. The room counts what the file holds
// now, which the new one replaces. Where the file system cannot say, the reservation
// itself fails and the file it truncated is removed.
func TestPreallocateRefusedBeforeTruncating(t *testing.T) {
	m := &MemFS{}
	m.SetCapacity(1 << 20)
	precious := bytes.Repeat([]byte("keep"), 25000) // 100,000 bytes
	put := func(name string, b []byte) {
		f, err := m.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.WriteAt(b, 0); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	put("a.etl", precious)
	const mb = 2
	_, err := Create(Options{Path: "a.etl", BufferSize: testBuf, Info: testInfo(winver.V2004, modeSequential|modePreallocate, mb), FS: m})
	if !errors.Is(err, winerr.ErrDiskFull) {
		t.Fatalf("preallocating 2 MB on a 1 MB disk: %v, want ERROR_DISK_FULL", err)
	}
	if got, _ := m.ReadFile("a.etl"); !bytes.Equal(got, precious) {
		t.Fatalf("the refused start left a.etl with %d bytes, want its %d", len(got), len(precious))
	}

	m.SetCapacity(1<<20 + 50000) // room for 1 MB only with a.etl's own 100,000 bytes
	w, err := Create(Options{Path: "a.etl", BufferSize: testBuf, Info: testInfo(winver.V2004, modeSequential|modePreallocate, 1), FS: m})
	if err != nil {
		t.Fatalf("preallocating 1 MB in the room a.etl leaves: %v", err)
	}
	w.Close(Counters{})

	m.SetCapacity(1 << 20)
	put("b.etl", precious[:1000])
	if _, err = Create(Options{Path: "b.etl", BufferSize: testBuf, Info: testInfo(winver.V2004, modeSequential|modePreallocate, mb), FS: noRoom{m}}); !errors.Is(err, winerr.ErrDiskFull) {
		t.Fatalf("without Room: %v, want ERROR_DISK_FULL", err)
	}
	if _, there := m.ReadFile("b.etl"); there {
		t.Error("without Room the refused file is left behind")
	}
}
