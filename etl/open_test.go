package etl

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// Open reads regular files only: a reader goes to its buffers' offsets, and a pipe or a
// device read as a file looked empty ("0 bytes, less than one buffer header").
func TestOpenNotRegular(t *testing.T) {
	cases := map[string]string{t.TempDir(): "a directory"}
	if _, err := os.Stat(os.DevNull); err == nil && os.DevNull == "/dev/null" {
		cases[os.DevNull] = "a device"
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if _, err := os.Stat("/proc/self/fd"); err == nil {
		cases["/proc/self/fd/"+strconv.Itoa(int(r.Fd()))] = "a pipe"
	}
	for path, kind := range cases {
		f, err := Open(path)
		if err == nil {
			f.Close()
			t.Errorf("%s: opened", path)
			continue
		}
		if want := "not a regular file (" + kind + ")"; !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "save its bytes to a file first") == (kind == "a directory") {
			t.Errorf("%s: %v, want %q", path, err, want)
		}
	}
}
