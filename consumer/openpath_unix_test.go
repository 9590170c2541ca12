//go:build unix

package consumer_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/etwemu/etwemu/consumer"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/winerr"
)

// FromFiles on the operating system's files refuses what is no ETL file before opening
// it, with Windows' code: a named pipe (opening it to read would wait for a writer, and
// Start and Stop with it: with the bug this test hangs until go test's timeout), a
// directory, a device and a file that is not there.
func TestFromFilesRefusesOtherFiles(t *testing.T) {
	k, err := emu.New(emu.Config{Processors: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("mkfifo:", err)
	}
	for _, tc := range []struct {
		path, why string
		code      error
	}{
		{fifo, "not a regular file (a pipe)", winerr.ErrInvalidParameter},
		{dir, "not a regular file (a directory)", winerr.ErrAccessDenied},
		{"/dev/zero", "not a regular file (a device)", winerr.ErrInvalidParameter},
		{filepath.Join(dir, "missing.etl"), "no such file", winerr.ErrFileNotFound},
	} {
		c := consumer.NewConsumerOn(context.Background(), k).FromFiles(tc.path)
		err := c.Start()
		if err == nil {
			err = c.Wait()
		}
		if err == nil || !strings.Contains(err.Error(), tc.why) || !errors.Is(err, tc.code) || !strings.Contains(err.Error(), tc.path) {
			t.Errorf("%s: %v; want %v and %q", tc.path, err, tc.code, tc.why)
		}
		c.Stop()
	}
}
