package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Without -o the file goes to the temporary folder, never the current one.
func TestDefaultPathIsTemporary(t *testing.T) {
	if dir := filepath.Dir(defaultPath()); dir != filepath.Clean(os.TempDir()) {
		t.Fatalf("default file %s is not in the temporary folder %s", defaultPath(), os.TempDir())
	}
}

// run writes the file, says where as its first line, and reads every event back.
func TestRunSaysWhere(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tl.etl")
	var out bytes.Buffer
	if err := run(path, &out); err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(out.String(), "\n")
	if first != "wrote "+path+"; its events, read back:" {
		t.Fatalf("first line %q does not say where the file is (%s)", first, path)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() == 0 {
		t.Fatalf("%s: %v", path, err)
	}
	if n := strings.Count(rest, "Etwemu.Example.TraceLogging "); n != len(fields)+2 {
		t.Fatalf("%d events read back, want %d:\n%s", n, len(fields)+2, rest)
	}
}
