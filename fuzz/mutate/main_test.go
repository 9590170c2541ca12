package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// Every planted bug's patch applies to the tree as it stands: the text it replaces is in
// its file exactly once, and the replacement differs. A change to the code a patch
// names fails here, not in a long mutation run.
func TestBugsApply(t *testing.T) {
	root := filepath.Join("..", "..")
	seen := map[string]bool{}
	for _, b := range bugs {
		if seen[b.name] {
			t.Errorf("two bugs named %q", b.name)
		}
		seen[b.name] = true
		src, err := os.ReadFile(filepath.Join(root, b.file))
		if err != nil {
			t.Errorf("%s: %v", b.name, err)
			continue
		}
		if n := bytes.Count(src, []byte(b.old)); n != 1 {
			t.Errorf("%s: %s holds the text to replace %d times, not once", b.name, b.file, n)
		}
		if b.old == b.new {
			t.Errorf("%s: the patch changes nothing", b.name)
		}
	}
	if len(bugs) < 10 {
		t.Errorf("%d planted bugs; the harness is measured on at least ten", len(bugs))
	}
}
