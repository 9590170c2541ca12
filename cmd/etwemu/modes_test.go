package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestModesCheck(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"--version", "6.2", "--mode", "SEQUENTIAL,CIRCULAR", "--logfile", "a.etl", "--max-file-size", "10"}, 1, []string{
			"decision:   refused: ERROR_INVALID_PARAMETER (87): EVENT_TRACE_FILE_MODE_SEQUENTIAL is invalid with EVENT_TRACE_FILE_MODE_CIRCULAR (5.0 and later)",
			"refused: EVENT_TRACE_FILE_MODE_CIRCULAR is invalid with EVENT_TRACE_FILE_MODE_SEQUENTIAL (5.0 and later)",
			"satisfied: EVENT_TRACE_FILE_MODE_CIRCULAR requires MaximumFileSize (6.2 and later)"}},
		{[]string{"--version", "6.1", "--mode", "CIRCULAR", "--logfile", "a.etl"}, 0, []string{
			"decision:   accepted", "effective:  EVENT_TRACE_FILE_MODE_CIRCULAR (0x00000002)"}},
		{[]string{"--version", "6.2", "--mode", "0x400|EVENT_TRACE_REAL_TIME_MODE,kd_filter,paged_memory", "--flush-timer", "5"}, 0, []string{
			"effective:  EVENT_TRACE_BUFFERING_MODE (0x00000400)", "FlushTimer: 0 (requested 5)",
			"applied: EVENT_TRACE_KD_FILTER_MODE overrides EVENT_TRACE_USE_PAGED_MEMORY (6.2 and later)"}},
		{[]string{"--version", "2004", "--mode", "CIRCULAR,NONSTOPPABLE", "--logfile", "c.etl", "--max-file-size", "1", "--autologger"}, 0, []string{
			"satisfied: EVENT_TRACE_FILE_MODE_CIRCULAR allows EVENT_TRACE_NONSTOPPABLE_MODE (6.0 and later)"}},
		{[]string{"--version", "5.2", "--mode", "NEWFILE", "--logfile", "k%d.etl", "--max-file-size", "1", "--guid", "9e814aad-3204-11d2-9a82-006008a86939", "--name", "NT Kernel Logger"}, 1, []string{
			"invalid with SystemTraceControlGuid (5.2 and later, kernel loggers)"}},
		// What StartTrace checks of the name and GUID before the mode, modes check checks too.
		{[]string{"--mode", "REAL_TIME", "--guid", "9e814aad-3204-11d2-9a82-006008a86939", "--name", "foo"}, 1, []string{
			`decision:   refused: ERROR_INVALID_PARAMETER (87): SystemTraceControlGuid requires the name "NT Kernel Logger"`}},
		{[]string{"--mode", "REAL_TIME", "--name", ""}, 1, []string{"refused: ERROR_INVALID_PARAMETER (87): session name must have 1 to 1024 characters, not 0"}},
		{[]string{"--mode", "REAL_TIME", "--name", strings.Repeat("x", 1025)}, 1, []string{"not 1025"}},
		{[]string{"--mode", "REAL_TIME", "--guid", "9e814aad-3204-11d2-9a82-006008a86939", "--name", "nt kernel logger"}, 0, []string{"decision:   accepted"}},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := run(append([]string{"modes", "check"}, c.args...), &out, &errb)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d\n%s%s", c.args, code, c.code, out.String(), errb.String())
		}
		for _, w := range c.want {
			if !strings.Contains(out.String(), w) {
				t.Errorf("%v: output lacks %q:\n%s", c.args, w, out.String())
			}
		}
	}
	for _, bad := range [][]string{{"check", "--mode", "SEQUENTAL"}, {"check", "--version", "7"}, {"check", "--guid", "x"}, {"frob"}, {}} {
		var out, errb bytes.Buffer
		if code := run(append([]string{"modes"}, bad...), &out, &errb); code != 2 || errb.Len() == 0 {
			t.Errorf("modes %v: exit %d, stderr %q", bad, code, errb.String())
		}
	}
}

func TestModesTable(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"modes", "table", "--version", "6.1"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	s := out.String()
	for _, w := range []string{"EVENT_TRACE_BUFFERING_MODE overrides EVENT_TRACE_KD_FILTER_MODE (6.1 to 6.2)",
		"EVENT_TRACE_BUFFER_INTERFACE_MODE implies EVENT_TRACE_SECURE_MODE (6.1 and later)",
		"Not recognised (ignored) by 6.1:", "SYSTEM_LOGGER", "a session needs somewhere for its events to go"} {
		if !strings.Contains(s, w) {
			t.Errorf("table lacks %q", w)
		}
	}
	if strings.Contains(s, "0x02000000  EVENT_TRACE_SYSTEM_LOGGER_MODE") || strings.Contains(s, "overrides FlushThreshold") {
		t.Errorf("6.1 table lists a 6.2+ flag or a 6.3+ rule:\n%s", s)
	}
	out.Reset()
	if code := run([]string{"modes", "table", "--version", "6.2", "--private"}, &out, &errb); code != 0 ||
		!strings.Contains(out.String(), "EVENT_TRACE_COMPRESSED_MODE") || strings.Contains(out.String(), "EVENT_TRACE_COMPRESSED_MODE is invalid") {
		t.Errorf("private 6.2 table: exit %d\n%s", code, out.String())
	}
}

// modes check -json gives the decision a script reads, with the exit status of the text:
// the refusal's code and reason, or the effective mode and what changed, and every rule
// that fired, as the text lists them.
func TestModesCheckJSON(t *testing.T) {
	for _, c := range []struct {
		args     []string
		code     int
		accepted bool
		check    func(v decisionView) bool
	}{
		{[]string{"-version", "6.2", "-mode", "SEQUENTIAL,CIRCULAR", "-logfile", "a.etl", "-max-file-size", "10"}, 1, false, func(v decisionView) bool {
			return v.Code == "ERROR_INVALID_PARAMETER" && strings.Contains(v.Error, "is invalid with") && v.Effective == nil && v.Requested.Value == "0x00000003"
		}},
		{[]string{"-mode", "REAL_TIME", "-name", ""}, 1, false, func(v decisionView) bool {
			return v.Code == "ERROR_INVALID_PARAMETER" && strings.Contains(v.Error, "session name") && len(v.Fired) == 0
		}},
		{[]string{"-mode", "REAL_TIME"}, 0, true, func(v decisionView) bool {
			return v.Effective != nil && v.Effective.Flags == "EVENT_TRACE_REAL_TIME_MODE" && v.Error == "" && v.Kind == "kernel logger"
		}},
	} {
		var out, text, errb bytes.Buffer
		code := runModes(append([]string{"check", "-json"}, c.args...), &out, &errb)
		var v decisionView
		if err := json.Unmarshal(out.Bytes(), &v); err != nil || code != c.code || v.Accepted != c.accepted || !c.check(v) {
			t.Errorf("%q: exit %d, %v: %s", c.args, code, err, out.String())
			continue
		}
		runModes(append([]string{"check"}, c.args...), &text, &errb)
		for _, f := range v.Fired {
			if !strings.Contains(text.String(), f) {
				t.Errorf("%q: the JSON's rule %q is not in the text:\n%s", c.args, f, text.String())
			}
		}
	}
}

// modes table -json holds the rows, rules and ignored flags its text shows.
func TestModesTableJSON(t *testing.T) {
	var out, text, errb bytes.Buffer
	if code := runModes([]string{"table", "-version", "6.1", "-json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var v tableView
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Version != "6.1" || len(v.Flags) < 10 || len(v.EverySession) == 0 || len(v.Ignored) == 0 {
		t.Fatalf("%v: %s", err, out.String())
	}
	runModes([]string{"table", "-version", "6.1"}, &text, &errb)
	for _, r := range v.Flags {
		if !strings.Contains(text.String(), r.Flag) || (len(r.Rules) > 0 && !strings.Contains(text.String(), r.Rules[0])) {
			t.Errorf("row %+v is not in the text", r)
		}
	}
}
