package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRunAndShell(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"run", "../../examples/02-ninth-session.scenario"}, &out, &errb); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "as expected, enable failed: ERROR_NO_SYSTEM_RESOURCES") {
		t.Errorf("run printed:\n%s", out.String())
	}

	bad := filepath.Join(t.TempDir(), "bad.scenario")
	if err := os.WriteFile(bad, []byte("start s file=a.etl\nstart s file=a.etl\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errb.Reset()
	if code := run([]string{"run", bad}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "line 2: start: ERROR_ALREADY_EXISTS") {
		t.Errorf("failing scenario: exit %d, stderr %q", code, errb.String())
	}

	// The shell goes on after an error and reads to the end of a pipe, without prompts.
	out.Reset()
	errb.Reset()
	in := strings.NewReader("start s file=a.etl\nstart s file=a.etl\nstrdump\nquit\nstrdump\n")
	if code := shell(in, &out, &errb, false); code != 0 {
		t.Fatalf("shell: exit %d", code)
	}
	if !strings.Contains(errb.String(), "error: start: ERROR_ALREADY_EXISTS") || strings.Count(out.String(), "loggers running") != 1 || strings.Contains(out.String(), "etwemu>") {
		t.Errorf("shell: stdout %q, stderr %q", out.String(), errb.String())
	}

	out.Reset()
	if code := run([]string{"help", "run"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "logdump NAME") {
		t.Errorf("help run: exit %d\n%s", code, out.String())
	}
}
