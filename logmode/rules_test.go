package logmode

import (
	"regexp"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/winver"
)

// The private-logger start table says, by version, what Microsoft's documentation says:
// before 1703 a private logger without PRIVATE_IN_PROC needs a registered provider's GUID
// and is the process's only one, with PRIVATE_IN_PROC it needs neither and the process
// may run three; from 1703 none needs registering and a process may run eight. Before 6.0
// PRIVATE_IN_PROC is not recognised, so a start that sets it is a plain private logger.
func TestPrivateStartByVersion(t *testing.T) {
	for _, c := range []struct {
		v          winver.Version
		m          Mode
		registered bool
		perProcess int
	}{
		{winver.V5_2, PrivateLogger, true, 1},
		{winver.V5_2, PrivateLogger | PrivateInProc, true, 1}, // 5.2 does not know PRIVATE_IN_PROC
		{winver.V6_0, PrivateLogger | PrivateInProc, false, 3},
		{winver.V1607, PrivateLogger, true, 1},
		{winver.V1607, PrivateLogger | PrivateInProc, false, 3},
		{winver.V1703, PrivateLogger, false, 8},
		{winver.V1703, PrivateLogger | PrivateInProc, false, 8},
		{winver.V2004, PrivateLogger, false, 8},
	} {
		r := PrivateStartFor(c.v, c.m)
		if r.Registered != c.registered || r.PerProcess != c.perProcess {
			t.Errorf("%v %v: registered %v, %d per process (%s); want %v, %d", c.v, c.m, r.Registered, r.PerProcess, r, c.registered, c.perProcess)
		}
	}
}

// Every version has exactly one row for a start without PRIVATE_IN_PROC and, where the
// flag is recognised, one with it; every row allows at least one logger and cites public
// works by author and title.
func TestPrivateStartTableCovers(t *testing.T) {
	for _, v := range winver.All() {
		for _, inProc := range []bool{false, true} {
			if inProc && !Recognises(v, Private, PrivateInProc) {
				continue
			}
			n := 0
			for _, r := range PrivateStarts() {
				if r.InProc == inProc && r.Versions.Contains(v) {
					n++
				}
			}
			if n != 1 {
				t.Errorf("%v, PRIVATE_IN_PROC %v: %d rows, want 1", v, inProc, n)
			}
		}
	}
	public := regexp.MustCompile(`^(Geoff Chappell|Microsoft Learn), "[^"]+"$`)
	for _, r := range PrivateStarts() {
		if r.PerProcess < 1 {
			t.Errorf("%s: no private logger allowed", r)
		}
		for _, src := range strings.Split(r.Source, "; ") {
			if !public.MatchString(src) {
				t.Errorf("%s: source %q is not an author and a title", r, src)
			}
		}
	}
}

func TestPrivateStartString(t *testing.T) {
	got := PrivateStartFor(winver.V1607, PrivateLogger).String()
	want := "without EVENT_TRACE_PRIVATE_IN_PROC, 5.0 to 1607: Wnode.Guid must be a registered provider's GUID; at most 1 private logger per process"
	if got != want {
		t.Errorf("String:\n got %s\nwant %s", got, want)
	}
}

// Separators alone name no flag: refused, where an empty string is no flag at all.
func TestParseSeparatorsAlone(t *testing.T) {
	for _, s := range []string{"|", "||", " | ", ","} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) succeeded", s)
		}
	}
	if m, err := Parse(""); m != 0 || err != nil {
		t.Errorf("Parse(\"\"): %v, %v", m, err)
	}
}
