package logmode

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// trigger builds a request that makes rule r fire wherever it is in force: the flag with
// the other flag or property the rule names (or without it, for a requirement), completed
// so that no other rule refuses it when r is an adjustment.
func trigger(r *Rule) Request {
	q := Request{Mode: r.Flag}
	if r.Loggers == Private {
		q.Mode |= PrivateLogger
	}
	set := func(p Prop) {
		switch p {
		case LogFileName:
			q.LogFileName = "trace.etl"
		case MaximumFileSize:
			q.MaximumFileSize = 16
		case AutoLoggerFlag:
			q.AutoLogger = true
		case KernelLoggerID:
			q.GUID = SystemTraceControlGUID
		case CKCLID:
			q.GUID = CKCLGUID
		case FlushTimer:
			q.FlushTimer = 1
		case FlushThreshold:
			q.FlushThreshold = 10
		}
	}
	switch r.Effect {
	case InvalidWith:
		q.Mode |= r.Other
		set(r.Prop)
		return q
	case Requires, RequiresOneOf:
		return q // without what it requires
	case Allows:
		q.Mode |= r.Other
		set(r.Prop)
		if r.Need == Stoppable {
			q.Mode |= NonStoppable
			q.AutoLogger = true
		}
	case Implies:
		// without the implied flag
	default:
		q.Mode |= r.Other
		set(r.Prop)
	}
	// Complete an adjustment's request so that it is accepted.
	if q.Mode&(Circular|NewFile|Preallocate) != 0 {
		set(MaximumFileSize)
	}
	if q.Mode&NewFile != 0 {
		q.LogFileName = "trace%d.etl"
	}
	if q.Mode&DelayOpenFile != 0 {
		q.LogFileName = "trace.etl" // 5.0 requires one
	}
	if q.Mode&Compressed != 0 && r.Loggers == Kernel {
		q.Mode |= Buffering
	}
	if q.Mode&Buffering == 0 && q.LogFileName == "" && r.Need != Destination {
		if q.Mode&PrivateLogger != 0 {
			q.LogFileName = "trace.etl" // a private logger cannot be real-time
		} else {
			q.Mode |= RealTime
		}
	}
	return q
}

func firedAt(v winver.Version, r *Rule) (Decision, Outcome) {
	q := trigger(r)
	q.Version = v
	d := Decide(q)
	for _, f := range d.Fired {
		if f.Rule == r {
			return d, f.Outcome
		}
	}
	return d, 0
}

// TestRuleBoundaries checks every rule at its version boundaries: it fires at the first
// and last version it is in force, and not at the version before or after, for refusals,
// implications, overrides and allowances alike.
func TestRuleBoundaries(t *testing.T) {
	want := map[Effect]Outcome{InvalidWith: Refused, Requires: Refused, RequiresOneOf: Refused,
		Implies: Applied, Overrides: Applied, Allows: Satisfied}
	for i := range rules {
		r := &rules[i]
		in := []winver.Version{r.Versions.From}
		out := []winver.Version{}
		if r.Versions.From > winver.Oldest {
			out = append(out, r.Versions.From-1)
		}
		if r.Versions.To != 0 {
			in = append(in, r.Versions.To)
			if r.Versions.To < winver.Newest {
				out = append(out, r.Versions.To+1)
			}
		} else {
			in = append(in, winver.Newest)
		}
		for _, v := range in {
			d, got := firedAt(v, r)
			if got != want[r.Effect] {
				t.Errorf("%s at %s: outcome %v, want %v; fired %v; err %v", r.Describe(), v, got, want[r.Effect], d.Fired, d.Err)
			}
			if got == Refused && !errors.Is(d.Err, winerr.ErrInvalidParameter) {
				t.Errorf("%s at %s: refused with %v, want ERROR_INVALID_PARAMETER", r.Describe(), v, d.Err)
			}
		}
		for _, v := range out {
			if d, got := firedAt(v, r); got != 0 {
				t.Errorf("%s at %s (outside its versions): outcome %v; fired %v", r.Describe(), v, got, d.Fired)
			}
		}
	}
}

func TestIssueExampleMessage(t *testing.T) {
	d := Decide(Request{Version: winver.V6_2, Mode: Circular | Sequential, LogFileName: "a.etl", MaximumFileSize: 10})
	if d.Accepted() {
		t.Fatal("SEQUENTIAL|CIRCULAR accepted")
	}
	msg := d.Err.Error()
	for _, w := range []string{"ERROR_INVALID_PARAMETER (87)", "EVENT_TRACE_FILE_MODE_SEQUENTIAL is invalid with EVENT_TRACE_FILE_MODE_CIRCULAR (5.0 and later)"} {
		if !strings.Contains(msg, w) {
			t.Errorf("message %q lacks %q", msg, w)
		}
	}
	if n := len(d.Refusals()); n != 2 {
		t.Errorf("%d refusals, want both rows of the pair: %v", n, d.Fired)
	}
}

// TestEffectiveModes checks implications and overrides end to end, at versions on both
// sides of each change.
func TestEffectiveModes(t *testing.T) {
	rt := Mode(RealTime)
	cases := []struct {
		name      string
		q         Request
		effective Mode
		timer     uint32
	}{
		{"append implies sequential from 6.0", Request{Version: winver.V6_0, Mode: Append, LogFileName: "a.etl"}, Append | Sequential, 0},
		{"append alone before 6.0", Request{Version: winver.V5_2, Mode: Append, LogFileName: "a.etl"}, Append, 0},
		{"newfile implies sequential", Request{Version: winver.V6_1, Mode: NewFile, LogFileName: "a%d.etl", MaximumFileSize: 1}, NewFile | Sequential, 0},
		{"buffer interface implies secure", Request{Version: winver.V6_1, Mode: BufferInterface | rt}, BufferInterface | Secure | rt, 0},
		{"buffering keeps real time in 6.0", Request{Version: winver.V6_0, Mode: Buffering | rt, FlushTimer: 3}, Buffering | rt, 3},
		{"buffering overrides real time and FlushTimer from 6.1", Request{Version: winver.V6_1, Mode: Buffering | rt, FlushTimer: 3}, Buffering, 0},
		{"6.1: buffering overrides kd filter, paged memory stays", Request{Version: winver.V6_1, Mode: Buffering | KDFilter | PagedMemory}, Buffering | PagedMemory, 0},
		{"6.2: the overridden kd filter still overrides paged memory", Request{Version: winver.V6_2, Mode: Buffering | KDFilter | PagedMemory}, Buffering, 0},
		{"6.3: kd filter stays and overrides paged memory", Request{Version: winver.V6_3, Mode: Buffering | KDFilter | PagedMemory}, Buffering | KDFilter, 0},
		{"unknown flags are ignored", Request{Version: winver.V5_0, Mode: rt | Buffering | IndependentSession | Unused40000000}, rt, 0},
		{"private logger ignores paged memory", Request{Version: winver.V6_0, Mode: PrivateLogger | PagedMemory, LogFileName: "p.etl"}, PrivateLogger, 0},
		{"private logger compresses from 6.2", Request{Version: winver.V6_2, Mode: PrivateLogger | Compressed, LogFileName: "p.etl"}, PrivateLogger | Compressed, 0},
		{"private logger before 6.2 ignores compression", Request{Version: winver.V6_1, Mode: PrivateLogger | Compressed | Blocking, LogFileName: "p.etl"}, PrivateLogger | Blocking, 0},
		{"kernel logger ignores blocking", Request{Version: winver.V2004, Mode: Blocking | rt}, rt, 0},
		{"kernel compression with buffering from 1607", Request{Version: winver.V1607, Mode: Compressed | Buffering}, Compressed | Buffering, 0},
		{"nonstoppable circular autologger", Request{Version: winver.V6_0, Mode: NonStoppable | Circular, LogFileName: "c.etl", MaximumFileSize: 1, AutoLogger: true}, NonStoppable | Circular, 0},
		{"nonstoppable real time without a file, 6.1 with delay open", Request{Version: winver.V6_1, Mode: NonStoppable | rt | DelayOpenFile, AutoLogger: true}, NonStoppable | rt | DelayOpenFile, 0},
	}
	for _, c := range cases {
		d := Decide(c.q)
		if !d.Accepted() {
			t.Errorf("%s: refused: %v", c.name, d.Err)
			continue
		}
		if d.Effective != c.effective || d.FlushTimer != c.timer {
			t.Errorf("%s: effective %v timer %d, want %v timer %d; fired %v", c.name, d.Effective, d.FlushTimer, c.effective, c.timer, d.Fired)
		}
	}
}

func TestRefusals(t *testing.T) {
	cases := []struct {
		name string
		q    Request
		want string // the first refusing rule
	}{
		{"no destination", Request{Version: winver.V2004}, "a session needs somewhere for its events to go"},
		{"delay open is a destination in 6.0", Request{Version: winver.V6_1, Mode: DelayOpenFile}, "needs somewhere"},
		{"circular needs a size from 6.2", Request{Version: winver.V6_2, Mode: Circular, LogFileName: "c.etl"}, "EVENT_TRACE_FILE_MODE_CIRCULAR requires MaximumFileSize (6.2 and later)"},
		{"newfile needs a name", Request{Version: winver.V5_1, Mode: NewFile | RealTime, MaximumFileSize: 1}, "EVENT_TRACE_FILE_MODE_NEWFILE requires LogFileName (5.1 and later)"},
		{"newfile not for the NT Kernel Logger", Request{Version: winver.V5_2, Mode: NewFile, Name: "NT Kernel Logger", LogFileName: "k%d.etl", MaximumFileSize: 1}, "invalid with SystemTraceControlGuid (5.2 and later, kernel loggers)"},
		{"newfile not for the CKCL", Request{Version: winver.V6_0, Mode: NewFile, GUID: CKCLGUID, LogFileName: "k%d.etl", MaximumFileSize: 1}, "invalid with CKCLGuid"},
		{"newfile not for an autologger", Request{Version: winver.V6_0, Mode: NewFile, AutoLogger: true, LogFileName: "k%d.etl", MaximumFileSize: 1}, "invalid with 0x00000002 bit in Flags (AutoLogger)"},
		{"nonstoppable needs the autologger flag", Request{Version: winver.V6_0, Mode: NonStoppable | Circular, LogFileName: "c.etl", MaximumFileSize: 1}, "requires 0x00000002 bit in Flags"},
		{"nonstoppable needs an allowing mode", Request{Version: winver.V6_0, Mode: NonStoppable | Sequential, LogFileName: "s.etl", AutoLogger: true}, "EVENT_TRACE_NONSTOPPABLE_MODE requires one of EVENT_TRACE_FILE_MODE_CIRCULAR, EVENT_TRACE_REAL_TIME_MODE without a LogFileName or EVENT_TRACE_BUFFERING_MODE (6.0 and later)"},
		{"real time with a file does not allow nonstoppable", Request{Version: winver.V2004, Mode: NonStoppable | RealTime, LogFileName: "s.etl", AutoLogger: true}, "requires one of"},
		{"6.0: delay open spoils real time's allowance", Request{Version: winver.V6_0, Mode: NonStoppable | RealTime | DelayOpenFile, AutoLogger: true}, "EVENT_TRACE_DELAY_OPEN_FILE_MODE is invalid with EVENT_TRACE_NONSTOPPABLE_MODE unless EVENT_TRACE_FILE_MODE_CIRCULAR or EVENT_TRACE_BUFFERING_MODE is set (6.0 only)"},
		{"compression before 1607", Request{Version: winver.V1511, Mode: Compressed | Buffering}, "EVENT_TRACE_COMPRESSED_MODE is invalid (6.2 to 1511, kernel loggers)"},
		{"compression without buffering", Request{Version: winver.V1607, Mode: Compressed | RealTime}, "EVENT_TRACE_COMPRESSED_MODE requires EVENT_TRACE_BUFFERING_MODE (1607 and later, kernel loggers)"},
		{"relog in the kernel", Request{Version: winver.V6_2, Mode: Relog | RealTime}, "EVENT_TRACE_RELOG_MODE is invalid (6.2 and later, kernel loggers)"},
		{"buffering with a file", Request{Version: winver.V6_0, Mode: Buffering, LogFileName: "b.etl"}, "EVENT_TRACE_BUFFERING_MODE is invalid with LogFileName (6.0 and later)"},
		{"system logger on paged memory", Request{Version: winver.V6_2, Mode: SystemLogger | PagedMemory | KDFilter | RealTime}, "EVENT_TRACE_USE_PAGED_MEMORY is invalid with EVENT_TRACE_SYSTEM_LOGGER_MODE (6.2 and later)"},
		{"private newfile", Request{Version: winver.V2004, Mode: PrivateLogger | NewFile, LogFileName: "p%d.etl", MaximumFileSize: 1}, "EVENT_TRACE_PRIVATE_LOGGER_MODE is invalid with EVENT_TRACE_FILE_MODE_NEWFILE (5.1 and later, private loggers)"},
		{"private independent", Request{Version: winver.V6_3, Mode: PrivateLogger | IndependentSession, LogFileName: "p.etl"}, "invalid with EVENT_TRACE_INDEPENDENT_SESSION_MODE"},
	}
	for _, c := range cases {
		d := Decide(c.q)
		if d.Accepted() {
			t.Errorf("%s: accepted as %v", c.name, d.Effective)
			continue
		}
		if !errors.Is(d.Err, winerr.ErrInvalidParameter) || !strings.Contains(d.Err.Error(), c.want) {
			t.Errorf("%s: %v, want ERROR_INVALID_PARAMETER with %q", c.name, d.Err, c.want)
		}
	}
}

func TestDecideInvalidVersion(t *testing.T) {
	if d := Decide(Request{Mode: RealTime}); d.Accepted() || !errors.Is(d.Err, winerr.ErrInvalidParameter) {
		t.Fatalf("version 0: %v", d.Err)
	}
}

func TestParse(t *testing.T) {
	cases := map[string]Mode{
		"SEQUENTIAL,CIRCULAR":                               Sequential | Circular,
		"EVENT_TRACE_REAL_TIME_MODE|buffering":              RealTime | Buffering,
		"real_time_mode file_mode_newfile":                  RealTime | NewFile,
		"0x100,PRIVATE_LOGGER":                              RealTime | PrivateLogger,
		"257":                                               RealTime | Sequential,
		"EVENT_TRACE_MODE_RESERVED":                         RealtimeRelog,
		"paged_memory,USE_PAGED_MEMORY,use_kbytes_for_size": PagedMemory | KBytesForSize,
		"NONE": 0, "": 0,
	}
	for in, want := range cases {
		got, err := Parse(in)
		if err != nil || got != want {
			t.Errorf("Parse(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"SEQUENTAL", "0x1FFFFFFFF", "-1"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("Parse(%q) accepted", bad)
		}
	}
	// Every name prints and parses back.
	for b := Mode(1); b != 0; b <<= 1 {
		for _, s := range []string{Name(b), ShortName(b)} {
			if got, err := Parse(s); err != nil || got != b {
				t.Errorf("Parse(%q) = %v, %v; want %#x", s, got, err, uint32(b))
			}
		}
	}
	if s := Mode(Sequential | RealTime).String(); s != "EVENT_TRACE_FILE_MODE_SEQUENTIAL|EVENT_TRACE_REAL_TIME_MODE" {
		t.Errorf("String: %s", s)
	}
}

// CheckName refuses what StartTrace refuses before the mode: a name of no characters or
// more than MaxNameLength, a NUL, SystemTraceControlGuid under another name.
func TestCheckName(t *testing.T) {
	for _, c := range []struct {
		name string
		g    guid.GUID
		ok   bool
	}{
		{"s", guid.GUID{}, true},
		{strings.Repeat("é", MaxNameLength), guid.GUID{}, true},
		{strings.Repeat("é", MaxNameLength+1), guid.GUID{}, false},
		{"", guid.GUID{}, false},
		{"a\x00b", guid.GUID{}, false},
		{"NT KERNEL LOGGER", SystemTraceControlGUID, true},
		{"other", SystemTraceControlGUID, false},
	} {
		err := CheckName(c.name, c.g)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, winerr.ErrInvalidParameter) {
			t.Errorf("CheckName(%.20q, %v) = %v, want ok %v", c.name, c.g, err, c.ok)
		}
	}
}

// The indexes Decide walks (byFlag, recognisedBy) say what a walk of the tables says:
// applicable gives, in table order, the version's rules on every session or of a flag
// the mode holds, and Recognised the bits Recognises accepts one by one.
func TestIndexesMatchTables(t *testing.T) {
	modes := []Mode{0, ^Mode(0)}
	for b := 0; b < 32; b++ {
		modes = append(modes, 1<<b, 1<<b|1<<((b+7)%32)|1<<((b+13)%32))
	}
	for v := winver.Oldest; v <= winver.Newest; v++ {
		for _, m := range modes {
			var want []*Rule
			for _, r := range ofVersion[v] {
				if r.Flag == 0 || m&r.Flag != 0 {
					want = append(want, r)
				}
			}
			if got := applicable(v, m, nil); !slices.Equal(got, want) {
				t.Errorf("%v mode %v: applicable gives %d rules, the table %d", v, m, len(got), len(want))
			}
			for _, k := range []LoggerKind{Kernel, Private} {
				var want Mode
				for _, b := range m.Bits() {
					if Recognises(v, k, b) {
						want |= b
					}
				}
				if got := Recognised(v, k, m); got != want {
					t.Errorf("%v %v mode %#x: Recognised %#x, flag by flag %#x", v, k, uint32(m), uint32(got), uint32(want))
				}
			}
		}
	}
	if got := Recognised(winver.Version(200), Kernel, ^Mode(0)); got != 0 {
		t.Errorf("an invalid version recognises %v", got)
	}
	for _, b := range (^Mode(0)).Bits() {
		if Recognises(winver.Version(200), Kernel, b) {
			t.Errorf("an invalid version recognises %v", b)
		}
	}
}
