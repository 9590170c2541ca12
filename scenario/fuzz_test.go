package scenario

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/etwemu/etwemu/logmode"
)

// fuzzLimits keep each fuzz input within a few hundred MB and a fraction of a second
// a line: the same language, with smaller counts than a user gets.
var fuzzLimits = Limits{Disk: 4 << 20, Processors: 8, Events: 256, BufferKB: 64, Buffers: 32}

// countWriter counts what the views print and keeps none of it.
type countWriter struct{ n int }

func (c *countWriter) Write(p []byte) (int, error) { c.n += len(p); return len(p), nil }

// FuzzScenario feeds any bytes to the language as `etwemu shell` reads them: line by
// line in bounded memory, each line run whatever the one before did, then every session
// stopped. No input panics, holds a line past MaxLine, or fills the in-memory disk past
// its capacity; the seeds are the lessons in examples/ and lines at the limits.
func FuzzScenario(f *testing.F) {
	lessons, _ := filepath.Glob("../examples/*.scenario")
	for _, name := range lessons {
		if src, err := os.ReadFile(name); err == nil {
			f.Add(src)
		}
	}
	for _, s := range []string{
		"kernel processors=8 disk=4\nstart s file=s.etl mode=SEQUENTIAL buffer=64\nregister P\nenable s P level=255 any=0xffffffffffffffff\nwrite P 256 size=65535 proc=7\nquery s\nfiles\nstop s\n",
		"advance 2562047h\nadvance 2562047h\nexpect SUCCESS advance 100ns\nlogdump 2 t=0x7fffffff\nbufdump 2 bytes=65536 -json\n",
		"start s mode=BUFFERING buffer=64 min=32 max=32\nregister P\nenable s P\nwrite P 256 size=1000\nsave s s.etl\nupdate s max=32 flush=1\ncounters s TotalCycles via=native\nhooks s 0x0524\nsyswrite s 0x0524 size=65535\npmc s\n",
		"start s1\nenable s1 P\nwrite Q 2\nlogdump s t=-1\nkernel processors=9\nkernel disk=5\nwrite P 257\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var out countWriter
		m := NewLimited(&out, fuzzLimits)
		defer m.Close()
		ctx := context.Background()
		for l := range Lines(ctx, bytes.NewReader(data)) {
			if l.Err != nil {
				if !errors.Is(l.Err, ErrLineTooLong) {
					t.Fatalf("line %d: %v", l.N, l.Err)
				}
				continue
			}
			if len(l.Text) > MaxLine {
				t.Fatalf("line %d: %d bytes", l.N, len(l.Text))
			}
			_ = m.ExecContext(ctx, l.Text) // errors are the language answering
			if m.fs != nil && m.fs.Used() > m.fs.Capacity() {
				t.Fatalf("line %d: the disk holds %d of %d bytes", l.N, m.fs.Used(), m.fs.Capacity())
			}
		}
		_ = m.StopAll()
		if m.k != nil && len(m.k.Sessions()) > 0 {
			for _, l := range m.k.Sessions() {
				if l.Mode()&logmode.NonStoppable == 0 { // only Close stops it
					t.Fatalf("session %q runs after StopAll", l.Name())
				}
			}
		}
	})
}
