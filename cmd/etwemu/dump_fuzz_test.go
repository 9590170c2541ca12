package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/etl"
)

// dumpModes are every output path of dump.
var dumpModes = [][]string{
	{}, {"-json"}, {"-summary"}, {"-summary", "-json"}, {"-sort", "time"}, {"-sort", "time", "-json"},
	{"-buffers"}, {"-buffers", "-json"}, {"-payload", "0"},
}

// dumpSeeds writes small files with the demo (sequential, compressed, circular), each with
// a cut and a damaged copy, and returns their bytes.
func dumpSeeds(tb testing.TB) [][]byte {
	tb.Helper()
	dir := tb.TempDir()
	var out [][]byte
	for i, extra := range [][]string{nil, {"-compress"}, {"-mode", "CIRCULAR", "-max-file-size", "1"}} {
		path := filepath.Join(dir, "seed.etl")
		args := append([]string{"demo", "-logfile", path, "-events", "300", "-buffer-kb", "1", "-min-buffers", "64", "-progress", "0", "-processors", "2"}, extra...)
		var o, e bytes.Buffer
		if code := run(args, &o, &e); code != 0 {
			tb.Fatalf("demo %v: exit %d: %s", extra, code, e.String())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b, b[:len(b)*2/3])
		if i == 0 && len(b) > 3*1024 {
			bad := append([]byte{}, b...)
			copy(bad[2*1024+72:], []byte{0xF0, 0xFF, 0x13, 0xC0}) // a record size past its buffer
			out = append(out, bad)
		}
	}
	return out
}

// FuzzDump runs every dump mode on reader input: no panic, exit 0 or 1 (1 with the damage
// named on stderr), output proportional to what the format lets the input expand to, and
// -sort time holding no more than its bound of buffer data.
func FuzzDump(f *testing.F) {
	for _, b := range dumpSeeds(f) {
		f.Add(b)
	}
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(dir, "in.etl")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		// What the input can expand to: each record takes a line, the records are at most
		// one per 8 bytes of file plus one buffer's worth, and the data at most 33 times
		// the file plus one buffer (the reader's bounds).
		limit := int64(16 << 20)
		if rd, err := etl.NewReader(bytes.NewReader(b), int64(len(b))); err == nil && rd.Header().BufferSize >= 72 {
			limit = min(limit, int64(rd.Header().BufferSize))
		}
		n := int64(len(b))
		records := n/8 + limit/8 + 64
		bound := 16<<10 + 1200*records + 8*(33*n+2*limit)
		for _, mode := range dumpModes {
			var out, errb bytes.Buffer
			mergeHeld = 0
			code := run(append(append([]string{"dump"}, mode...), path), &out, &errb)
			switch {
			case code != 0 && code != 1:
				t.Fatalf("dump %v: exit %d: %s", mode, code, errb.String())
			case code == 1 && !strings.HasPrefix(errb.String(), "etwemu dump: "):
				t.Fatalf("dump %v: exit 1 with %q", mode, errb.String())
			case int64(out.Len()) > bound:
				t.Fatalf("dump %v: %d bytes of output from %d bytes of input (bound %d)", mode, out.Len(), n, bound)
			case mergeHeld > mergeMemory:
				t.Fatalf("dump %v: -sort time held %d bytes of buffers", mode, mergeHeld)
			}
		}
	})
}
