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
