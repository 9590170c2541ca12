//go:build unix

package etl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/etwemu/etwemu/winerr"
)

// A named pipe is refused without being opened: opening it to read would wait for a
// writer for ever (with the bug, this test hangs until go test's timeout).
func TestOpenNamedPipe(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	f, err := Open(path)
	if err == nil {
		f.Close()
		t.Fatal("a named pipe opened")
	}
	if !strings.Contains(err.Error(), "not a regular file (a pipe)") {
		t.Errorf("%v, want the pipe named", err)
	}
}

// A pseudo-file says it is empty and is not: it is refused as such, not read as an ETL
// file of 0 bytes.
func TestOpenPseudoFile(t *testing.T) {
	const path = "/proc/self/status"
	if st, err := os.Stat(path); err != nil || st.Size() != 0 {
		t.Skip("no procfs here")
	}
	f, err := Open(path)
	if err == nil {
		f.Close()
		t.Fatal("a pseudo-file opened")
	}
	if !errors.Is(err, winerr.ErrInvalidParameter) || !strings.Contains(err.Error(), "reads as 0 bytes but it holds some") {
		t.Errorf("%v, want ERROR_INVALID_PARAMETER and the reason", err)
	}
	// An empty file is what it says: too short for a buffer header.
	empty := filepath.Join(t.TempDir(), "empty.etl")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := Open(empty); err == nil || !errors.Is(err, winerr.ErrFileCorrupt) {
		if f != nil {
			f.Close()
		}
		t.Errorf("an empty file: %v, want ERROR_FILE_CORRUPT", err)
	}
}
