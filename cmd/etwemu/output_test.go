package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The commands that write a file never replace one silently: an existing file that is
// not of their kind, and any symbolic link, are refused without -force and left as they
// were; an existing file of their kind is replaced with a line on stderr saying so.
func TestNoSilentOverwrite(t *testing.T) {
	dir := t.TempDir()
	precious := []byte("a file of the user's own, not an ETL file\n")
	mk := func(name string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, precious, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	unchanged := func(p string) {
		t.Helper()
		if b, err := os.ReadFile(p); err != nil || !bytes.Equal(b, precious) {
			t.Errorf("%s was changed (%v)", p, err)
		}
	}
	link := func(target, name string) string {
		p := filepath.Join(dir, name)
		if err := os.Symlink(target, p); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
		return p
	}
	demo := func(path string, extra ...string) []string {
		return append([]string{"demo", "-logfile", path, "-events", "500", "-progress", "0", "-processors", "1"}, extra...)
	}
	logsave := func(path string, extra ...string) []string {
		return append([]string{"logsave", "-events", "2000", "-o", path}, extra...)
	}
	sweep := func(path string, extra ...string) []string {
		return append([]string{"bench", "-sweep", "-max-writers", "1", "-benchtime", "1ms", "-svg", path}, extra...)
	}
	for _, c := range []struct {
		name string
		args func(string, ...string) []string
	}{{"demo", demo}, {"logsave", logsave}, {"bench", sweep}} {
		// A file that is not of the command's kind: refused, kept.
		notMine := mk(c.name + ".txt")
		var out, errb bytes.Buffer
		if code := run(c.args(notMine), &out, &errb); code != 1 || !strings.Contains(errb.String(), "ERROR_ALREADY_EXISTS") ||
			!strings.Contains(errb.String(), "-force") || out.Len() != 0 {
			t.Errorf("%s over a file of the user's: exit %d, stdout %q, stderr %q; want it refused before anything runs", c.name, code, out.String(), errb.String())
		}
		unchanged(notMine)
		// A symbolic link, even to a file of the command's kind: refused, the target kept.
		target := mk(c.name + "-target.txt")
		ln := link(target, c.name+"-link")
		errb.Reset()
		if code := run(c.args(ln), &out, &errb); code != 1 || !strings.Contains(errb.String(), "symbolic link") {
			t.Errorf("%s through a link: exit %d, stderr %q; want it refused", c.name, code, errb.String())
		}
		unchanged(target)
		// A directory: refused even with -force.
		errb.Reset()
		if code := run(c.args(dir, "-force"), &out, &errb); code != 1 || !strings.Contains(errb.String(), "is a directory") {
			t.Errorf("%s over a directory: exit %d, stderr %q", c.name, code, errb.String())
		}
	}
	// -force replaces the user's file and writes through the link, saying so.
	for _, args := range [][]string{demo(filepath.Join(dir, "demo.txt"), "-force"), logsave(filepath.Join(dir, "logsave-link"), "-force")} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 || !strings.Contains(errb.String(), "-force: ") {
			t.Errorf("%v: exit %d, stderr %q; want it written, saying so", args, code, errb.String())
		}
	}
	if h, _, _ := readWhole(t, filepath.Join(dir, "logsave-target.txt")); h.BuffersWritten == 0 {
		t.Errorf("logsave -force through the link left no ETL file at its target")
	}
	// An ETL file is replaced, with a line saying so.
	etlFile := filepath.Join(dir, "ring.etl")
	for i := 0; i < 2; i++ {
		var out, errb bytes.Buffer
		if code := run(logsave(etlFile), &out, &errb); code != 0 {
			t.Fatalf("logsave: exit %d: %s", code, errb.String())
		}
		if said := strings.Contains(errb.String(), "replacing the ETL file "+etlFile); said != (i == 1) {
			t.Errorf("run %d: stderr %q; want a line saying the ETL file is replaced only when there was one", i, errb.String())
		}
	}
	var out, errb bytes.Buffer
	// A start the mode rules refuse replaces nothing and says nothing of replacing; nor
	// does a logsave whose events do not fit its buffers.
	before, _ := os.ReadFile(etlFile)
	if code := run(append(logsave(etlFile), "-payload", "65455"), &out, &errb); code != 1 || strings.Contains(errb.String(), "replacing") {
		t.Errorf("logsave over an ETL file, refused: exit %d, stderr %q", code, errb.String())
	}
	errb.Reset()
	if code := run(append(demo(etlFile), "-mode", "CIRCULAR", "-max-file-size", "0"), &out, &errb); code != 1 || strings.Contains(errb.String(), "replacing") {
		t.Errorf("demo over an ETL file, refused: exit %d, stderr %q", code, errb.String())
	}
	if after, _ := os.ReadFile(etlFile); !bytes.Equal(before, after) {
		t.Errorf("a refused start changed the ETL file")
	}
	errb.Reset()
	if code := run(demo(etlFile), &out, &errb); code != 0 || !strings.Contains(errb.String(), "etwemu demo: replacing the ETL file") {
		t.Errorf("demo over an ETL file: exit %d, stderr %q", code, errb.String())
	}
	// -force means nothing without a file to write.
	errb.Reset()
	if code := run([]string{"demo", "-force"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), "-force needs -logfile") {
		t.Errorf("demo -force alone: exit %d, stderr %q", code, errb.String())
	}
}

// A file in a folder that does not exist is refused before the command's work starts
// (a sweep, a demo), not once that work is done; a file in a folder that exists passes.
func TestOutputFolderMustExist(t *testing.T) {
	var errb bytes.Buffer
	missing := filepath.Join(t.TempDir(), "no-such-folder", "x.svg")
	if err := checkOutput(&errb, "bench", "svg", missing, svgOutput, false, false); err == nil || !strings.Contains(err.Error(), "ERROR_PATH_NOT_FOUND") {
		t.Errorf("a file in a missing folder: %v, want ERROR_PATH_NOT_FOUND", err)
	}
	var out bytes.Buffer
	if code := run([]string{"bench", "-sweep", "-max-writers", "1", "-benchtime", "1ms", "-svg", missing}, &out, &errb); code != 2 && code != 1 || out.Len() != 0 {
		t.Errorf("bench -sweep -svg into a missing folder: exit %d, %d bytes of sweep on stdout: it ran before refusing", code, out.Len())
	}
	if err := checkOutput(&errb, "bench", "svg", filepath.Join(t.TempDir(), "x.svg"), svgOutput, false, false); err != nil {
		t.Errorf("a new file in an existing folder: %v", err)
	}
}

// A demo whose -pmc settings the PMC rules refuse (an unknown profile source, one named
// twice, a version without PMC support for loggers) is refused before StartTrace opens
// its log file: an earlier trace at -logfile keeps its bytes.
func TestDemoPMCRefusalKeepsLogFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "earlier.etl")
	var out, errb bytes.Buffer
	if code := run([]string{"demo", "-logfile", path, "-events", "100", "-progress", "0"}, &out, &errb); code != 0 {
		t.Fatalf("demo: exit %d: %s", code, errb.String())
	}
	earlier, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"-pmc", "0xFFFFFFFF"}, "is not a KPROFILE_SOURCE"},
		{[]string{"-pmc", "TotalCycles,TotalCycles", "-pmc-source", "synthetic"}, "named twice"},
		{[]string{"-pmc", "TotalCycles", "-pmc-source", "synthetic", "-version", "6.1"}, "ERROR_NOT_SUPPORTED"},
	} {
		out.Reset()
		errb.Reset()
		args := append([]string{"demo", "-logfile", path, "-events", "10", "-progress", "0"}, c.args...)
		if code := run(args, &out, &errb); code != 1 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v: exit %d, %q; want 1 and %q", c.args, code, errb.String(), c.want)
		}
		if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, earlier) {
			t.Errorf("%v: the refused demo changed %s (%d bytes, were %d; %v)", c.args, path, len(b), len(earlier), err)
		}
	}
}

// A file of the kernel's own (procfs says size 0) is not an empty file a command may
// replace: without -force it is refused as a device is, and nothing is written to it.
func TestKernelFilesRefused(t *testing.T) {
	const comm = "/proc/self/comm"
	if st, err := os.Stat(comm); err != nil || st.Size() != 0 || !pseudoFile(comm) {
		t.Skipf("no procfs here (%v)", err)
	}
	for _, args := range [][]string{{"demo", "-events", "10", "-progress", "0", "-logfile", comm}, {"logsave", "-o", comm}} {
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code == 0 || !strings.Contains(errb.String(), "ERROR_ALREADY_EXISTS (183)") || !strings.Contains(errb.String(), "of the kernel's own") {
			t.Errorf("%v: exit %d, %q", args, code, errb.String())
		}
	}
}
