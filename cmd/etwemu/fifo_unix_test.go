//go:build unix

package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/etwemu/etwemu/winerr"
)

// A named pipe given with -force: an output written whole (the bench's chart) is refused
// at once when no process reads the pipe, where opening it waited for a reader past
// Ctrl-C (with the bug, this test hangs until go test's timeout); a log file, written at
// offsets, is refused with ERROR_BAD_PATHNAME, not put down to a full disk.
func TestOutputToANamedPipe(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	if err := writeOutput(fifo, []byte("<svg/>")); !errors.Is(err, winerr.ErrBadPathname) || !strings.Contains(err.Error(), "no process reads") {
		t.Errorf("writeOutput to a pipe nobody reads: %v", err)
	}
	file := filepath.Join(dir, "chart.svg")
	if err := writeOutput(file, []byte("<svg/>")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(file); string(b) != "<svg/>" {
		t.Errorf("writeOutput wrote %q", b)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"demo", "-logfile", fifo, "-force", "-duration", "50ms", "-progress", "0"}, &out, &errb); code != 1 ||
		!strings.Contains(errb.String(), "ERROR_BAD_PATHNAME") || !strings.Contains(errb.String(), "cannot be written at an offset") {
		t.Errorf("demo -logfile to a pipe: exit %d, stderr %q", code, errb.String())
	}
}
