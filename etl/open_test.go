package etl

import (
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/winerr"
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
		want := winerr.ErrInvalidParameter // a pipe or a device
		if kind == "a directory" {
			want = winerr.ErrAccessDenied // as CreateFile answers a directory opened as a file
		}
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", path, err, want)
		}
	}
}

// Clock.Time converts ticks to wall time exactly across the frequencies a file may
// claim, and says it cannot where a FILETIME cannot hold the result, rather than
// wrapping (a clock of 1 Hz advanced 2^40 ticks printed a time in 1795).
func TestClockTime(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ft := clock.FileTime(start)
	for _, c := range []struct {
		freq, perf, ts int64
		want           time.Duration
		ok             bool
	}{
		{10_000_000, 1000, 1000 + 10_000_000, time.Second, true},
		{10_000_000, 1000, 1000 - 15_000_000, -1500 * time.Millisecond, true},
		{3, 0, 7, 2*time.Second + 3333333*100*time.Nanosecond, true},
		{1 << 61, 5, 5 + 1<<61 - 1, 999999900 * time.Nanosecond, true}, // rest*1e7 past int64
		{1 << 61, 0, -(1<<61 - 1), -999999900 * time.Nanosecond, true},
		{1, 0, 1 << 40, 0, false},                  // 34,800 years on
		{1, 0, -(1 << 40), 0, false},               // and back
		{10_000_000, -10, math.MaxInt64, 0, false}, // the ticks since StartPerf overflow
	} {
		got, ok := Clock{Type: clock.QPC, Frequency: c.freq, StartTime: ft, StartPerf: c.perf}.Time(c.ts)
		if ok != c.ok || ok && !got.Equal(start.Add(c.want)) {
			t.Errorf("%d Hz, StartPerf %d, ts %d: %v %v, want %v %v", c.freq, c.perf, c.ts, got, ok, start.Add(c.want), c.ok)
		}
	}
}

// A path that is not there is ERROR_FILE_NOT_FOUND, and still fs.ErrNotExist.
func TestOpenMissing(t *testing.T) {
	_, err := Open(filepath.Join(t.TempDir(), "missing.etl"))
	if !errors.Is(err, winerr.ErrFileNotFound) || !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "missing.etl") {
		t.Errorf("%v, want ERROR_FILE_NOT_FOUND naming the path, and fs.ErrNotExist", err)
	}
}
