package etl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// PREALLOCATE reserves the file's blocks, so that a size the disk cannot hold is refused
// at start with ERROR_DISK_FULL instead of a sparse file whose writes fail later; a size
// it can hold is allocated whole.
func TestPreallocateReservesSpace(t *testing.T) {
	dir := t.TempDir()
	probe, err := os.Create(filepath.Join(dir, "probe"))
	if err != nil {
		t.Fatal(err)
	}
	err = allocate(probe, 4096)
	probe.Close()
	if errors.Is(err, errNoAllocate) {
		t.Skipf("the file system of %s cannot reserve space", dir)
	}
	const mb = 4
	w, err := Create(Options{Path: filepath.Join(dir, "small.etl"), BufferSize: testBuf, Info: testInfo(winver.V2004, modeSequential|modePreallocate, mb)})
	if err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "small.etl"))
	if err != nil {
		t.Fatal(err)
	}
	if blocks := st.Sys().(*syscall.Stat_t).Blocks * 512; st.Size() != mb<<20 || blocks < mb<<20 {
		t.Errorf("preallocated file: size %d, %d bytes allocated; want %d of both", st.Size(), blocks, mb<<20)
	}
	w.Close(Counters{})
	_, err = Create(Options{Path: filepath.Join(dir, "huge.etl"), BufferSize: testBuf, Info: testInfo(winver.V2004, modeSequential|modePreallocate, 1<<22)})
	if !errors.Is(err, winerr.ErrDiskFull) || !strings.Contains(err.Error(), "cannot preallocate") {
		t.Fatalf("preallocating 4 TB: %v, want ERROR_DISK_FULL", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "huge.etl")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused file is left behind: %v", err)
	}
}

// An existing file is not truncated by a PREALLOCATE start its volume has no room for:
// the free space is asked first (statfs), and the refusal leaves the file as it was.
func TestPreallocateKeepsExistingFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "precious.etl")
	want := []byte("the bytes of an earlier trace")
	if err := os.WriteFile(path, want, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Create(Options{Path: path, BufferSize: testBuf, Info: testInfo(winver.V2004, modeSequential|modePreallocate, 1<<30)}) // 1 PB
	if !errors.Is(err, winerr.ErrDiskFull) || !strings.Contains(err.Error(), "has room for") {
		t.Fatalf("preallocating 1 PB: %v, want ERROR_DISK_FULL before the file is opened", err)
	}
	if got, err := os.ReadFile(path); err != nil || string(got) != string(want) {
		t.Errorf("the refused start left %q (%v), want %q", got, err, want)
	}
}
