package main

import (
	"bytes"
	"testing"
)

// etwemu --version, -version and -v print what etwemu version prints, flags included.
func TestVersionFlags(t *testing.T) {
	for _, args := range [][]string{{}, {"-json"}} {
		var want, werr bytes.Buffer
		if code := run(append([]string{"version"}, args...), &want, &werr); code != 0 || want.Len() == 0 {
			t.Fatalf("version %v: exit %d, %q %q", args, code, want.String(), werr.String())
		}
		for _, alias := range []string{"--version", "-version", "-v"} {
			var out, errb bytes.Buffer
			if code := run(append([]string{alias}, args...), &out, &errb); code != 0 || out.String() != want.String() || errb.Len() != 0 {
				t.Errorf("etwemu %s %v: exit %d, printed %q (stderr %q); want what version prints: %q", alias, args, code, out.String(), errb.String(), want.String())
			}
		}
	}
}
