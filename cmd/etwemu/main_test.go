package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

func TestHelpAndUnknownCommands(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"help"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "demo") {
		t.Fatalf("help: code %d, %q", code, out.String())
	}
	out.Reset()
	if code := run([]string{"help", "demo"}, &out, &errb); code != 0 || !strings.Contains(out.String(), "-buffer-kb") {
		t.Fatalf("help demo: code %d, %q", code, out.String())
	}
	errb.Reset()
	if code := run([]string{"nonsense"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `unknown command "nonsense"`) {
		t.Fatalf("unknown command: code %d, %q", code, errb.String())
	}
	if code := run(nil, &out, &errb); code != 2 {
		t.Fatalf("no command: code %d", code)
	}
	if code := run([]string{"demo", "-payload", "-1"}, &out, &errb); code != 2 {
		t.Fatalf("bad payload: code %d", code)
	}
	if code := run([]string{"demo", "-version", "7"}, &out, &errb); code != 2 {
		t.Fatalf("bad version: code %d", code)
	}
}

// The demo's report agrees with itself: the writers' lost count equals the session's
// EventsLost, and it wrote events.
func TestDemoReport(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"demo", "-duration", "300ms", "-progress", "100ms", "-processors", "2", "-payload", "32", "-slow-sink", "1ms"}, &out, &errb)
	if code != 0 {
		t.Fatalf("demo exited %d: %s", code, errb.String())
	}
	s := out.String()
	num := func(re string) uint64 {
		m := regexp.MustCompile(re).FindStringSubmatch(s)
		if m == nil {
			t.Fatalf("report lacks %q:\n%s", re, s)
		}
		n, _ := strconv.ParseUint(m[1], 10, 64)
		return n
	}
	written := num(`events written\s+(\d+)`)
	lost := num(`events lost\s+(\d+)`)
	if sessionLost := num(`EventsLost of the session: (\d+)`); sessionLost != lost {
		t.Fatalf("writers counted %d lost, the session %d", lost, sessionLost)
	}
	if written == 0 || lost == 0 {
		t.Fatalf("written %d lost %d: a 1 ms/buffer sink should both pass and lose events", written, lost)
	}
	if !strings.Contains(s, "M events/s") || !strings.Contains(s, "buffers per processor  cpu0=") {
		t.Fatalf("report incomplete:\n%s", s)
	}
}
