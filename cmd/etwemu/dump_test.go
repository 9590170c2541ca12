package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The newcomer's two commands: demo -logfile makes a file, dump reads every record back.
func TestDemoLogfileThenDump(t *testing.T) {
	for _, extra := range [][]string{{"-max-file-size", "1"}, {"-compress", "-max-file-size", "1"}, {"-mode", "CIRCULAR,USE_KBYTES_FOR_SIZE", "-max-file-size", "256"}} {
		path := filepath.Join(t.TempDir(), "out.etl")
		var out, errb bytes.Buffer
		args := append([]string{"demo", "-logfile", path, "-duration", "100ms", "-progress", "0", "-processors", "2", "-buffer-kb", "16"}, extra...)
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("%v: exit %d\n%s%s", extra, code, out.String(), errb.String())
		}
		if !strings.Contains(out.String(), "read it back with: etwemu dump "+path) {
			t.Errorf("%v: demo does not say how to read the file:\n%s", extra, out.String())
		}
		written := regexp.MustCompile(`buffers written +(\d+)`).FindStringSubmatch(out.String())
		out.Reset()
		if code := run([]string{"dump", "-json", path}, &out, &errb); code != 0 {
			t.Fatalf("%v: dump exit %d: %s", extra, code, errb.String())
		}
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 1<<20)
		var header map[string]any
		records := 0
		for sc.Scan() {
			var m map[string]any
			if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
				t.Fatalf("dump -json line %q: %v", sc.Text(), err)
			}
			if header == nil {
				header = m
				continue
			}
			if m["kind"] != "event" || m["provider"] == "" {
				t.Fatalf("record %v", m)
			}
			records++
		}
		if header["logger"] != "etwemu-demo" || records == 0 {
			t.Errorf("%v: header %v, %d records", extra, header, records)
		}
		if w, _ := strconv.Atoi(written[1]); header["buffers_written"] != float64(w) {
			t.Errorf("%v: file header says %v buffers written, the demo's query %d", extra, header["buffers_written"], w)
		}
	}
}

func TestLogsave(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ring.etl")
	var out, errb bytes.Buffer
	if code := run([]string{"logsave", "-events", "5000", "-buffers", "4", "-o", path}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s%s", code, out.String(), errb.String())
	}
	m := regexp.MustCompile(`newest (\d+) events`).FindStringSubmatch(out.String())
	if m == nil || !strings.Contains(out.String(), "overwritten") {
		t.Fatalf("logsave output:\n%s", out.String())
	}
	out.Reset()
	run([]string{"dump", path}, &out, &errb)
	if !strings.Contains(out.String(), "\n"+m[1]+" records\n") {
		t.Errorf("dump of the saved ring does not hold the %s newest events:\n%s", m[1], tail(out.String()))
	}
}

func TestDumpErrors(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"dump"}, &out, &errb); code != 2 {
		t.Errorf("dump without a file: exit %d", code)
	}
	bad := filepath.Join(t.TempDir(), "bad.etl")
	writeFile(t, bad, bytes.Repeat([]byte{0x11}, 300))
	if code := run([]string{"dump", bad}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "offset 0x") {
		t.Errorf("dump of garbage: exit %d, %q", code, errb.String())
	}
}

func tail(s string) string {
	if len(s) > 400 {
		return s[len(s)-400:]
	}
	return s
}

func writeFile(t *testing.T, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
