//go:build unix

package etl

import (
	"path/filepath"
	"strings"
	"syscall"
	"testing"
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
