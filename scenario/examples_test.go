package scenario

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the examples' golden files")

// Every lesson in examples/ runs without an unexpected failure and prints what its
// golden file holds; go test ./scenario -update rewrites them.
func TestExamples(t *testing.T) {
	files, err := filepath.Glob("../examples/*.scenario")
	if err != nil || len(files) < 5 {
		t.Fatalf("examples: %v, %v", files, err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			got := runFile(t, f)
			golden := strings.TrimSuffix(f, ".scenario") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test ./scenario -update writes it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("output differs from %s (go test ./scenario -update rewrites it):\n%s", golden, got)
			}
			if again := runFile(t, f); !bytes.Equal(again, got) {
				t.Error("a second run printed something else")
			}
		})
	}
}

func runFile(t *testing.T, name string) []byte {
	t.Helper()
	src, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	m := New(&out)
	defer m.Close()
	if err := m.Run(bytes.NewReader(src)); err != nil {
		t.Fatalf("%v\n%s", err, out.Bytes())
	}
	return out.Bytes()
}
