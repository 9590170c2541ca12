package scenario

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/internal/callstack"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
)

// A failing command names its line and the Windows code; expect turns the failure into
// output, and an unmet expect is itself an error.
func TestRunErrors(t *testing.T) {
	for _, c := range []struct{ src, want string }{
		{"start s file=a.etl\nstart s file=b.etl\n", "line 2: start: ERROR_ALREADY_EXISTS"},
		{"bogus\n", `line 1: unknown command "bogus"`},
		{"start s color=red\n", `unknown option "color"`},
		{"start s mode=REAL_TIME\nenable s App pid=1000 pid=7\n", "line 2: enable: option pid given twice (pid=1000 and pid=7)"},
		{"start s buffer=4 BUFFER=8\n", "option buffer given twice"},
		{"start\n", "0 arguments"},
		{"expect ERROR_ALREADY_EXISTS start s file=a.etl\n", "expected ERROR_ALREADY_EXISTS, but start succeeded"},
		{"start s file=a.etl\nexpect ERROR_BUSY start s file=a.etl\n", "expected ERROR_BUSY, got ERROR_ALREADY_EXISTS"},
		{"write P 1\n", "write: EventWriteEx: ERROR_INVALID_HANDLE"},
		{"register P\nwrite P 1 size=70000\n", "size=70000: a number from 0 to 65535"},
		{"advance soon\n", "a duration"},
		{"logdump nothing\n", "ERROR_WMI_INSTANCE_NOT_FOUND"},
		{"kernel version=3.1\n", "unknown Windows version"},
	} {
		var out bytes.Buffer
		m := New(&out)
		err := m.Run(strings.NewReader(c.src))
		m.Close()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.src, err, c.want)
		}
	}
}

// The views render as JSON that a script can read back.
func TestViewsJSON(t *testing.T) {
	m, out := machine(t, "start s file=s.etl buffer=4", "register P", "enable s P level=5", "write P 3 proc=1")
	for view, check := range map[string]func(v any) bool{
		"strdump -json":   func(v any) bool { return v.([]any)[0].(map[string]any)["name"] == "s" },
		"logger s -json":  func(v any) bool { return v.(map[string]any)["structure"] == "WMI_LOGGER_CONTEXT" },
		"logger 2 -json":  func(v any) bool { return v.(map[string]any)["fields"].([]any)[0].(map[string]any)["value"] == "0x2" },
		"bufdump s -json": func(v any) bool { return len(v.([]any)) == 4 },
		"logdump s -json": func(v any) bool { return len(v.([]any)) == 3 && v.([]any)[0].(map[string]any)["providerName"] == "P" },
		"guids -json":     func(v any) bool { return len(v.([]any)[0].(map[string]any)["slots"].([]any)) == 1 },
		"regs -json":      func(v any) bool { return v.([]any)[0].(map[string]any)["enableMask"] == 1.0 },
		"pmc s -json":     func(v any) bool { return len(v.(map[string]any)["sources"].([]any)) == 0 },
	} {
		out.Reset()
		if err := m.Exec(view); err != nil {
			t.Fatalf("%s: %v", view, err)
		}
		var v any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil || !check(v) {
			t.Errorf("%s: %v\n%s", view, err, out.Bytes())
		}
	}
}

// The logger view says where its offsets come from: WMI_LOGGER_CONTEXT's are those of
// build 19569's symbols, which the catalogue shows as 2004; a private logger's
// ETW_UM_LOGGER_CONTEXT has rows for each version.
func TestLoggerViewNamesItsBuild(t *testing.T) {
	m, out := machine(t, "start k file=k.etl", "register P", "start p mode=PRIVATE_LOGGER file=p.etl guid=P")
	for name, want := range map[string]string{
		"k": "x64 offsets of ntoskrnl.exe build 19569, which the catalogue shows as 2004",
		"p": "x64 offsets from the layout catalogue",
	} {
		out.Reset()
		if err := m.Exec("logger " + name + " -json"); err != nil {
			t.Fatal(err)
		}
		var v struct{ Offsets string }
		if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Offsets != want {
			t.Errorf("logger %s -json: offsets %q (%v), want %q", name, v.Offsets, err, want)
		}
		out.Reset()
		if err := m.Exec("logger " + name); err != nil {
			t.Fatal(err)
		}
		if title, _, _ := strings.Cut(out.String(), "\n"); !strings.HasSuffix(title, "(Windows 2004; "+want+")") {
			t.Errorf("logger %s: title %q does not say %q", name, title, want)
		}
	}
}

// No line, however malformed, panics or leaves the machine unusable.
func TestExecNeverPanics(t *testing.T) {
	var out bytes.Buffer
	m := New(&out)
	defer m.Close()
	lines := []string{"", "#", "##", "start", "start s mode=0xFFFFFFFF file=x", "start s buffer=99999999999 file=x",
		"start s min=0x7fffffff max=1 file=x", "write", "write P -1", "write P 1 proc=999999", "register P guid=nope",
		"register P guid={00000000-0000-0000-0000-000000000000}", "enable s P level=999", "expect", "expect X",
		"expect SUCCESS echo hi", "advance -1s", "advance 1000000h", "kernel processors=0", "kernel processors=99999",
		"help nope", "help start", "logger", "bufdump s bytes=99999999", "logdump s t=0", "unregister P", "update s max=0",
		"stop s", "flush s", "pmc s", "files", "disable s P", "kernel", "strdump -json", "query s", "capture s P group=1",
		"traits P group=Q", "traits nobody", "counters s TotalCycles,bogus", "counters s 0xFFFFFFFF via=native", "hooks s 0x0524,0x7777",
		"hooks s 0xFFFFF", "hooks s 0x0524 via=native", "syswrite s 0x0524 size=65535 proc=7", "syswrite nobody zz", "unregister P", "write P 1 size=65535"}
	for _, l := range lines {
		_ = m.Exec(l) // errors are the point; a panic fails the test
	}
	if err := m.Exec("start last file=last.etl"); err != nil {
		t.Fatalf("the machine is unusable after the malformed lines: %v", err)
	}
}

// Peek is refused on a session with a logger goroutine, which moves buffers while they
// would be read.
func TestPeekNeedsSynchronousKernel(t *testing.T) {
	k, err := emu.New(emu.Config{Processors: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if _, err := k.StartTrace("async", &emu.Properties{LogFileMode: 0x100}); err != nil {
		t.Fatal(err)
	}
	err = k.Sessions()[0].Peek(func(session.BufferView, []byte) {})
	if !errors.Is(err, winerr.ErrNotSupported) {
		t.Fatalf("Peek on an asynchronous session: %v", err)
	}
}

// expect names a code the emulator returns, or SUCCESS: a misspelt code is refused
// before the command runs, not reported as a code the command did not return.
func TestExpectUnknownCode(t *testing.T) {
	var out bytes.Buffer
	m := New(&out)
	defer m.Close()
	err := m.Exec("expect ERROR_FOO start s mode=REAL_TIME")
	if err == nil || !strings.Contains(err.Error(), "ERROR_FOO is no Windows code") {
		t.Fatalf("expect ERROR_FOO: %v", err)
	}
	if err := m.Exec("start s mode=REAL_TIME"); err != nil {
		t.Fatalf("the refused expect ran its command: %v", err)
	}
	if err := m.Exec("expect error_already_exists start s mode=REAL_TIME"); err != nil {
		t.Fatal(err)
	}
}

// A write refused for its size or for a session's state says why, after the code
// EventWriteEx returned (which alone is all Windows says), and expect still matches the
// code.
func TestWriteErrorsExplained(t *testing.T) {
	for _, c := range []struct {
		lines []string
		want  string
	}{
		{[]string{"register a", "start s mode=REAL_TIME buffer=64", "enable s a", "write a 1 size=65535"},
			"ERROR_ARITHMETIC_OVERFLOW (534) (an event of 65535 payload bytes is 65615 bytes with its 80-byte header, and ETW takes at most 65,535 bytes an event)"},
		{[]string{"start s mode=REAL_TIME", "syswrite s 0x0524 size=65535"},
			"ERROR_ARITHMETIC_OVERFLOW (534) (an event of 65535 payload bytes is 65567 bytes with its 32-byte header"},
		{[]string{"register a", "start s mode=REAL_TIME buffer=4", "enable s a", "write a 1 size=5000"},
			"ERROR_MORE_DATA (234) (the record, the event's 5080 bytes with its 80-byte header and any extended items a session adds (an enable's props=, the session's PMC counters), does not fit"},
		{[]string{"register a", "start s mode=REAL_TIME", "enable s a", "write a 100000"},
			"ERROR_LOG_FILE_FULL (1502) (a REAL_TIME session that takes it has no consumer"},
	} {
		var out bytes.Buffer
		m := New(&out)
		last := len(c.lines) - 1
		for _, l := range c.lines[:last] {
			if err := m.Exec(l); err != nil {
				t.Fatalf("%s: %v", l, err)
			}
		}
		if err := m.Exec(c.lines[last]); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.lines[last], err, c.want)
		}
		code := strings.Fields(c.want)[0]
		if err := m.Exec("expect " + code + " " + c.lines[last]); err != nil {
			t.Errorf("expect %s %s: %v", code, c.lines[last], err)
		}
		m.Close()
	}
}

// A register that fails (a GUID that does not parse, GUID_NULL) leaves the name as it
// was: a later register without guid= takes the name's EventSource GUID.
func TestFailedRegisterLeavesTheName(t *testing.T) {
	for _, bad := range []string{"register A guid=nope", "expect ERROR_INVALID_PARAMETER register A guid=00000000-0000-0000-0000-000000000000"} {
		var out bytes.Buffer
		m := New(&out)
		err := m.Exec(bad)
		if strings.HasPrefix(bad, "expect") && err != nil || !strings.HasPrefix(bad, "expect") && err == nil {
			t.Fatalf("%s: %v", bad, err)
		}
		out.Reset()
		if err := m.Exec("register A"); err != nil {
			t.Fatalf("register A after %q: %v", bad, err)
		}
		if want := guid.FromName("A").String(); !strings.Contains(out.String(), want) {
			t.Errorf("after %q, register A says %q, want its GUID %s", bad, out.String(), want)
		}
		m.Close()
	}
}

// Options with fixed values refuse any other (they ran as the default), and a scenario
// saved with a UTF-8 byte order mark runs: the mark before its first line is dropped.
func TestOptionChoicesAndByteOrderMark(t *testing.T) {
	for _, c := range []struct{ line, want string }{
		{"counters s TotalCycles via=bogus", "via=bogus: want via=native"},
		{"hooks s 0x0524 via=xyz", "via=xyz: want via=native"},
		{"enable s A group=7", "group=7: want group=1 or group=0"},
		{"guid A group=2", "group=2: want group=1 or group=0"},
		{"start t mode=REAL_TIME autologger=yes", "autologger=yes: want autologger=1 or autologger=0"},
	} {
		var out bytes.Buffer
		m := New(&out)
		for _, l := range []string{"start s mode=REAL_TIME", "register A"} {
			if err := m.Exec(l); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.Exec(c.line); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.line, err, c.want)
		}
		m.Close()
	}
	var out bytes.Buffer
	m := New(&out)
	defer m.Close()
	if err := m.Run(strings.NewReader("\uFEFFstart s mode=REAL_TIME\r\nstop s\r\n")); err != nil {
		t.Errorf("a scenario with a byte order mark: %v", err)
	}
}

// TestEnableFiltersAndProps: enable's keep= and drop= pass an EVENT_ID filter, pid= a
// PID filter and exe= an EXECUTABLE_NAME filter that the kernel applies to each event, props= sets EnableProperty bits by name, and what the
// options cannot say is refused with the names they take.
func TestEnableFiltersAndProps(t *testing.T) {
	m, out := machine(t, "register a", "start s mode=REAL_TIME", "start t mode=REAL_TIME",
		"enable s a keep=2,3", "enable t a drop=0x2 props=sid,key")
	for _, c := range []struct{ line, want string }{
		{"write a 3 id=1", "logger 3: 3 written"},
		{"write a 2 id=2", "logger 2: 2 written"},
		{"start u mode=REAL_TIME", "started u"},
		{"enable u a props=ignore-keyword-0", "enabled a on u"},
		{"write a 1 id=7", "logger 3: 1 written"}, // keyword 0: u ignores it
		{"disable s a", "disabled a on s"},
		{"disable u a", "disabled a on u"},
		{"enable t a pid=7,1000 keep=4", "enabled a on t"},
		{"write a 1 id=4", "logger 3: 1 written"},
		{"enable t a pid=7", "enabled a on t"},
		{"write a 1 id=4", "no session took it"},
		{"enable t a exe=other.exe,SCENARIO.exe", "enabled a on t"},
		{"write a 1 id=4", "logger 3: 1 written"},
		{"enable t a exe=other.exe", "enabled a on t"},
		{"write a 1 id=4", "no session took it"},
	} {
		out.Reset()
		if err := m.Exec(c.line); err != nil || !strings.Contains(out.String(), c.want) || strings.Count(out.String(), "written") > 1 {
			t.Errorf("%s: %v, %q; want only %q", c.line, err, out.String(), c.want)
		}
	}
	for _, c := range []struct{ line, want string }{
		{"enable s a keep=1 drop=2", "ERROR_INVALID_PARAMETER"},
		{"enable s a keep=70000", "event ids from 0 to 65535"},
		{"enable s a pid=-1", "process ids from 0"},
		{"enable s a pid=1,2,3,4,5,6,7,8,9", "ERROR_INVALID_PARAMETER"},
		{"enable s a props=sid,colour", `"colour" is not one of`},
		{"enable s a exe=a.exe,,b.exe", "exe=a.exe,,b.exe: name 2 of 3 is empty"},
		{"enable s a exe=", "exe=: name 1 of 1 is empty"},
		{"enable s a exe=a.exe;b.exe", "name 1 of 1 holds a ';'"},
		{"enable s a exe=a\x00b.exe", `exe=a\x00b.exe: name 1 of 1 holds a ';' (which separates the filter's names) or a NUL`},
		{"enable s a exe=ok.exe,\xff\xfe.exe", `exe=ok.exe,\xff\xfe.exe: name 2 of 2 is not UTF-8`},
		// What a user typed comes back escaped and cut short.
		{"enable s a props=stack,\x1b[2J", `props=stack,\x1b[2J: "\x1b[2J" is not one of`},
		{"enable s a props=" + strings.Repeat("z", 50000), `props=zzzz`},
		{"enable s a level=" + strings.Repeat("9", 50000), "(50000 bytes): a number from 0 to 255"},
		{"disable s a keep=1", "keep"},
		{"enable s a # a note", "a # starts a comment only at the start of a line"},
	} {
		if err := m.Exec(c.line); err == nil || !strings.Contains(err.Error(), c.want) || len(err.Error()) > 1000 || strings.ContainsAny(err.Error(), "\x00\x1b\xff") {
			t.Errorf("%.100s: %.1100v, want an error of at most 1,000 bytes, nothing a terminal acts on, saying %q", c.line, err, c.want)
		}
	}
}

// An enable by a provider's name reports the EnableMask of every registration of that
// name's GUID, under whatever names they were registered (register R guid=...), and
// "not registered" only when none is.
func TestEnableReportsRegistrationsOfTheGUID(t *testing.T) {
	var out bytes.Buffer
	m := New(&out)
	defer m.Close()
	g := guid.FromName("App")
	for _, c := range []struct{ line, want string }{
		{"start s mode=REAL_TIME", "started s"},
		{"enable s App", "enabled App on s (LoggerId 2): not registered"},
		{"register r0 guid=" + g.String(), "registered r0"},
		{"register r1 guid=" + g.String(), "registered r1"},
		{"unregister r1", "unregistered r1"},
		{"enable s App level=4", "enabled App on s (LoggerId 2): r0's EnableMask now 0x01\n"},
	} {
		out.Reset()
		if err := m.Exec(c.line); err != nil || !strings.Contains(out.String(), c.want) {
			t.Errorf("%s: %v, %q; want %q", c.line, err, out.String(), c.want)
		}
	}
}

// A write command writes from deeper than a STACK_TRACE item reaches, so the item holds
// all 32 return addresses whatever runs the scenario: a 16-byte event's record is the
// 0x50-byte header, the item's 8-byte head and MatchId with 32 addresses, and the payload.
func TestWriteStackItemsFull(t *testing.T) {
	m, out := machine(t, "register a", "start s mode=REAL_TIME", "enable s a props=stack", "write a 1 size=16")
	out.Reset()
	if err := m.Exec("logdump s -json"); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`"size": %d,`, 0x50+8+8+8*callstack.Frames+16); !strings.Contains(out.String(), want) {
		t.Errorf("logdump: want a record of %s\n%s", want, out.String())
	}
}

// machine returns a Machine that has run lines, each of which must succeed, and the
// buffer it writes to; the test closes it.
func machine(t *testing.T, lines ...string) (*Machine, *bytes.Buffer) {
	t.Helper()
	var out bytes.Buffer
	m := New(&out)
	t.Cleanup(m.Close)
	for _, l := range lines {
		if err := m.Exec(l); err != nil {
			t.Fatalf("%s: %v", l, err)
		}
	}
	return m, &out
}

// A word that starts with # in the middle of a line gets a hint that comments start
// lines, unless it is a logger's #ID.
func TestCommentHint(t *testing.T) {
	var out bytes.Buffer
	m := New(&out)
	defer m.Close()
	const hint = "a # starts a comment only at the start of a line"
	for line, want := range map[string]bool{"logger s # note": true, "logger s #note": true, "logger #2 #3": false, "logger s #2": false} {
		err := m.Exec(line)
		if err == nil || strings.Contains(err.Error(), hint) != want {
			t.Errorf("%s: %v; want an error, with the hint %v", line, err, want)
		}
	}
}
