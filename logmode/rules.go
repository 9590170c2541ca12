package logmode

import (
	"fmt"
	"strings"
	"sync"

	"github.com/etwemu/etwemu/internal/quote"
	"github.com/etwemu/etwemu/winver"
)

// LoggerKind says which implementation of a logger a rule belongs to: the kernel's
// (WMI_LOGGER_CONTEXT) or the user-mode private logger's (ETW_UM_LOGGER_CONTEXT).
type LoggerKind uint8

// Logger kinds; a rule may apply to both.
const (
	Kernel  LoggerKind = 1 << iota // kernel-mode buffers, started through NtTraceControl
	Private                        // EVENT_TRACE_PRIVATE_LOGGER_MODE: user-mode buffers in the provider's process
	Both    = Kernel | Private
)

func (k LoggerKind) String() string {
	switch k {
	case Kernel:
		return "kernel logger"
	case Private:
		return "private logger"
	}
	return "all loggers"
}

// Prop is a start property other than a LogFileMode bit that a rule tests.
type Prop uint8

// Properties the rules test.
const (
	NoProp          Prop = iota
	LogFileName          // a LogFileName is given
	MaximumFileSize      // MaximumFileSize is not zero
	AutoLoggerFlag       // 0x00000002 in WMI_LOGGER_INFORMATION.Flags: an AutoLogger session
	KernelLoggerID       // the session is the NT Kernel Logger (SystemTraceControlGuid or its name)
	CKCLID               // the session is the Circular Kernel Context Logger (CKCLGuid or its name)
	FlushTimer           // a FlushTimer is given
	FlushThreshold       // a FlushThreshold is given
)

var propNames = [...]string{"", "LogFileName", "MaximumFileSize", "0x00000002 bit in Flags (AutoLogger)",
	"SystemTraceControlGuid", "CKCLGuid", "FlushTimer", "FlushThreshold"}

func (p Prop) String() string { return propNames[p] }

// Effect is what a rule does when its flag is set.
type Effect uint8

// Rule effects. The first three refuse a start (STATUS_INVALID_PARAMETER); the others
// adjust it silently, as Geoff Chappell's "LogFileMode" describes.
const (
	InvalidWith   Effect = iota // refused if Other or Prop is present (the flag alone if neither is named)
	Requires                    // refused unless Other or Prop is present
	RequiresOneOf               // refused unless a rule that Allows the same Need applies
	Implies                     // proceeds as if Other were set
	Overrides                   // proceeds as if Other were clear, or Prop zero
	Allows                      // satisfies the Need of a RequiresOneOf rule
)

// Need names what a RequiresOneOf rule asks for.
type Need uint8

// Needs.
const (
	NoNeed      Need = iota
	Stoppable        // something that allows EVENT_TRACE_NONSTOPPABLE_MODE
	Destination      // somewhere for the session's events to go
)

// Rule is one row of the per-flag tables of Geoff Chappell's "LogFileMode" (or of the
// private-logger rules): from which versions, for which loggers, what the flag does.
type Rule struct {
	Flag     Mode // the flag whose table the row is in; 0 for a rule on every session
	Versions winver.Range
	Loggers  LoggerKind
	Effect   Effect
	Other    Mode // the other flag(s) the effect names
	Prop     Prop // the property the effect names
	Need     Need // for RequiresOneOf and Allows
	Unless   Mode // InvalidWith and Allows apply only when none of these bits is set
	Without  Prop // Allows applies only when this property is absent
	Source   string
}

// Sources, as the rules cite them: public works, by author and title.
const (
	// Geoff Chappell's study of how the kernel interprets the flags when it starts a
	// session (geoffchappell.com, Kernel-Mode Windows: WMI_LOGGER_INFORMATION's
	// LogFileMode).
	srcLogFileMode = `Geoff Chappell, "LogFileMode"`
	// Microsoft's documentation of the flags (learn.microsoft.com, Event Tracing).
	srcModeConstants = `Microsoft Learn, "Logging Mode Constants"`
	// Microsoft's Performance Logs and Alerts protocol, whose section 2.2.9, ExtendedModes,
	// lists the restrictions on private sessions (learn.microsoft.com, Open Specifications).
	srcPLA = `Microsoft Learn, "[MS-PLA]: Performance Logs and Alerts Protocol"`
)

// String says what the rule does, in the words of Geoff Chappell's "LogFileMode", without
// its versions.
func (r *Rule) String() string {
	subject := Name(r.Flag)
	if r.Flag == 0 {
		subject = "a session"
	}
	object := r.object()
	switch r.Effect {
	case InvalidWith:
		s := subject + " is invalid"
		if object != "" {
			s += " with " + object
		}
		if r.Unless != 0 {
			s += " unless " + joinOr(r.Unless) + " is set"
		}
		return s
	case Requires:
		return subject + " requires " + object
	case RequiresOneOf:
		if r.Need == Destination {
			return subject + " needs somewhere for its events to go"
		}
		return subject + " requires " + r.allowances()
	case Implies:
		return subject + " implies " + object
	case Overrides:
		return subject + " overrides " + object
	case Allows:
		s := subject
		if r.Flag == 0 {
			s = "a " + r.Prop.String()
		}
		if r.Without != 0 {
			s += " without a " + r.Without.String()
		}
		if r.Unless != 0 {
			s += " and without " + joinOr(r.Unless)
		}
		switch r.Need {
		case Destination:
			return s + " gives the session somewhere for its events to go"
		case Stoppable:
			return s + " allows " + Name(NonStoppable)
		}
		return s + " allows " + object
	}
	return subject
}

// Describe is String with the version range, as refusals quote it:
// "EVENT_TRACE_FILE_MODE_CIRCULAR is invalid with EVENT_TRACE_FILE_MODE_SEQUENTIAL (5.0 and
// later)".
func (r *Rule) Describe() string {
	describeOnce.Do(func() {
		described = make(map[*Rule]string, len(rules))
		for i := range rules {
			described[&rules[i]] = rules[i].describe()
		}
	})
	if s, ok := described[r]; ok {
		return s
	}
	return r.describe()
}

// described holds Describe's text for each rule of the table, written once
// (describeOnce): a refused start quotes its rule, and a fuzz run refuses thousands.
var (
	describeOnce sync.Once
	described    map[*Rule]string
)

func (r *Rule) describe() string {
	s := fmt.Sprintf("%s (%v", r, r.Versions)
	if r.Loggers != Both {
		s += ", " + r.Loggers.String() + "s"
	}
	s += ")"
	if r.Effect == RequiresOneOf && r.Need == Destination {
		s += ": " + r.allowances()
	}
	return s
}

// allowances lists the Allows rules that meet r's need, with their versions where they
// differ from r's: "EVENT_TRACE_FILE_MODE_CIRCULAR, ... or EVENT_TRACE_BUFFERING_MODE".
func (r *Rule) allowances() string {
	var parts []string
	for i := range rules {
		a := &rules[i]
		if a.Effect != Allows || a.Need != r.Need {
			continue
		}
		s := Name(a.Flag)
		if a.Flag == 0 {
			s = "a " + a.Prop.String()
		}
		if a.Without != NoProp {
			s += " without a " + a.Without.String()
		}
		if a.Versions != r.Versions {
			s += " (" + a.Versions.String() + ")"
		}
		parts = append(parts, s)
	}
	if len(parts) < 2 {
		return strings.Join(parts, "")
	}
	return "one of " + strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

func (r *Rule) object() string {
	if r.Other != 0 {
		return joinOr(r.Other)
	}
	if r.Prop != NoProp {
		return r.Prop.String()
	}
	return ""
}

func joinOr(m Mode) string {
	var parts []string
	for _, b := range m.Bits() {
		parts = append(parts, Name(b))
	}
	return strings.Join(parts, " or ")
}

// Recognition is the "Versions" column of Geoff Chappell's "LogFileMode": which versions
// know a flag at all. A flag unknown to a version is ignored by it (dropped from the
// effective mode).
type Recognition struct {
	Flag    Mode
	Kernel  winver.Range // zero: the kernel never recognises it
	Private winver.Range // for private loggers; zero: not recognised
}

var (
	since = winver.Since
	only  = winver.Only
	span  = winver.Between
)

// recognition lists every named flag. The kernel column is that of Geoff Chappell's
// "LogFileMode". The private column follows it for the flags both implementations share
// [design choice: the user-mode logger's own table is not public; the two implementations
// share their heritage, as Geoff Chappell's "ETW_UM_LOGGER_CONTEXT" shows] and differs where
// a source says so: PRIVATE_LOGGER and PRIVATE_IN_PROC are the user-mode logger's own
// ("LogFileMode": "not known to the kernel but ... vital to the separate NTDLL
// implementation"; PRIVATE_IN_PROC was defined in the Vista WDK); compression from 6.2
// ("ETW_UM_LOGGER_CONTEXT": "Windows 8 and higher provide for user-mode loggers to
// compress"); blocking mode from 6.1 ("ETW_UM_LOGGER_CONTEXT": the CONDITION_VARIABLE that
// supports it is there from 6.1; phnt's ntwmi.h: "Win7+"); RELOG, which "only ever has been
// meaningful for user-mode tracing sessions", from its definition in the XP DDK.
var recognition = []Recognition{
	{Sequential, since(winver.V5_0), since(winver.V5_0)},
	{Circular, since(winver.V5_0), since(winver.V5_0)},
	{Append, since(winver.V5_1), since(winver.V5_1)},
	{NewFile, since(winver.V5_1), since(winver.V5_1)},
	{MSFlushTimer, since(winver.V6_1), since(winver.V6_1)},
	{Preallocate, since(winver.V6_0), since(winver.V6_0)},
	{NonStoppable, since(winver.V6_0), since(winver.V6_0)},
	{Secure, since(winver.V6_0), since(winver.V6_0)},
	{RealTime, since(winver.V5_0), since(winver.V5_0)},
	{DelayOpenFile, since(winver.V5_0), since(winver.V5_0)},
	{Buffering, since(winver.V6_0), since(winver.V6_0)},
	{PrivateLogger, winver.Range{}, since(winver.V5_0)},
	{AddHeader, only(winver.V6_0), only(winver.V6_0)},
	{KBytesForSize, since(winver.V6_0), since(winver.V6_0)},
	{GlobalSequence, since(winver.V5_1), since(winver.V5_1)},
	{LocalSequence, since(winver.V5_1), since(winver.V5_1)},
	{Relog, since(winver.V6_2), since(winver.V5_1)},
	{PrivateInProc, winver.Range{}, since(winver.V6_0)},
	{BufferInterface, since(winver.V6_1), since(winver.V6_1)},
	{KDFilter, since(winver.V6_0), since(winver.V6_0)},
	{RealtimeRelog, only(winver.V6_0), only(winver.V6_0)},
	{LostEventsDebug, since(winver.V6_2), since(winver.V6_2)},
	{StopOnHybrid, since(winver.V6_2), since(winver.V6_2)},
	{PersistOnHybrid, since(winver.V6_2), since(winver.V6_2)},
	{PagedMemory, since(winver.V6_0), since(winver.V6_0)},
	{SystemLogger, since(winver.V6_2), since(winver.V6_2)},
	{Compressed, since(winver.V6_2), since(winver.V6_2)},
	{IndependentSession, since(winver.V6_3), since(winver.V6_3)},
	{NoPerProcessorBufs, since(winver.V6_1), since(winver.V6_1)},
	{Blocking, winver.Range{}, since(winver.V6_1)},
	{AddToTriageDump, since(winver.V6_2), since(winver.V6_2)},
}

// Recognises reports whether version v recognises flag f for loggers of kind k; an
// invalid version recognises nothing.
func Recognises(v winver.Version, k LoggerKind, f Mode) bool {
	if !v.Valid() {
		return false
	}
	for i := range recognition {
		if recognition[i].Flag == f {
			r := recognition[i].Kernel
			if k == Private {
				r = recognition[i].Private
			}
			return r.From != 0 && r.Contains(v)
		}
	}
	return false
}

// Recognised returns the bits of m that version v recognises for loggers of kind k.
func Recognised(v winver.Version, k LoggerKind, m Mode) Mode {
	if !v.Valid() {
		return 0
	}
	if k == Private {
		return m & recognisedBy[v][1]
	}
	return m & recognisedBy[v][0]
}

// recognisedBy holds, for each version, the flags Recognises says it recognises for
// kernel loggers (index 0) and private loggers (1): derived once from recognition, so
// that Recognised, on every start, is one AND.
var recognisedBy = func() (by [winver.Newest + 1][2]Mode) {
	for v := winver.Oldest; v <= winver.Newest; v++ {
		for i := range recognition {
			f := recognition[i].Flag
			if Recognises(v, Kernel, f) {
				by[v][0] |= f
			}
			if Recognises(v, Private, f) {
				by[v][1] |= f
			}
		}
	}
	return by
}()

// Recognitions returns the recognition table, in bit order.
func Recognitions() []Recognition { return append([]Recognition(nil), recognition...) }

// rules is Geoff Chappell's "LogFileMode", flag by flag in its order, then the
// private-logger rules.
//
// Where the published text lost a list, the rows below rebuild it from the sentences around:
//   - "Even for AutoLogger sessions, EVENT_TRACE_NONSTOPPABLE_MODE requires one of:" lost
//     its list. The flags whose tables say "can allow EVENT_TRACE_NONSTOPPABLE_MODE" are
//     CIRCULAR ("setting EVENT_TRACE_FILE_MODE_CIRCULAR is one way to allow ..."), REAL_TIME
//     ("setting EVENT_TRACE_REAL_TIME_MODE without also providing a LogFileName or setting
//     EVENT_TRACE_DELAY_OPEN_FILE_MODE allows ...") and BUFFERING ("setting
//     EVENT_TRACE_BUFFERING_MODE allows ..."), all from 6.0: those three are the list.
//     DELAY_OPEN_FILE_MODE's 6.0-only row ("invalid with EVENT_TRACE_NONSTOPPABLE_MODE if
//     some other LogFileMode bits are clear") is the REAL_TIME condition seen from the
//     other side: in 6.0 it refuses NONSTOPPABLE unless CIRCULAR or BUFFERING allows it;
//     from 6.1, where DELAY_OPEN_FILE_MODE has no effect, it no longer does.
//   - The lists after "EVENT_TRACE_REAL_TIME_MODE is required if all the following are
//     absent" (5.0 and higher), "EVENT_TRACE_DELAY_OPEN_FILE_MODE is required if ..." (5.0
//     to 6.0) and "EVENT_TRACE_BUFFERING_MODE is required if ..." (6.0 and higher) are
//     lost. Read together they are one rule seen from each of its members: a session needs
//     a LogFileName, REAL_TIME (5.0 and later), DELAY_OPEN_FILE (5.0 to 6.0) or BUFFERING
//     (6.0 and later). It is the Destination need below.
//   - The three tables between KD_FILTER's prose and USE_PAGED_MEMORY's prose carry no
//     flag name: by the article's order they are STOP_ON_HYBRID_SHUTDOWN's (invalid with
//     PERSIST_ON_HYBRID_SHUTDOWN), PERSIST_ON_HYBRID_SHUTDOWN's (invalid with STOP_...),
//     and USE_PAGED_MEMORY's (invalid with SYSTEM_LOGGER_MODE, which the prose after it
//     explains); SYSTEM_LOGGER_MODE's table follows.
//
// Constraints are tested against the recognised bits as requested ("the constraints that
// apply if the flag is set when trying to start"); implications are then added and
// overrides are computed from that mode all at once, which is what makes "this override
// of KD_FILTER still overrides USE_PAGED_MEMORY" in 6.2 hold.
var rules = []Rule{
	// EVENT_TRACE_FILE_MODE_SEQUENTIAL
	{Flag: Sequential, Versions: since(winver.V5_0), Loggers: Both, Effect: InvalidWith, Other: Circular, Source: srcLogFileMode},
	{Flag: Sequential, Versions: since(winver.V6_0), Loggers: Both, Effect: InvalidWith, Other: Buffering, Source: srcLogFileMode},
	// EVENT_TRACE_FILE_MODE_CIRCULAR
	{Flag: Circular, Versions: since(winver.V5_0), Loggers: Both, Effect: InvalidWith, Other: Sequential, Source: srcLogFileMode},
	{Flag: Circular, Versions: since(winver.V5_1), Loggers: Both, Effect: InvalidWith, Other: Append, Source: srcLogFileMode},
	{Flag: Circular, Versions: since(winver.V5_1), Loggers: Both, Effect: InvalidWith, Other: NewFile, Source: srcLogFileMode},
	{Flag: Circular, Versions: since(winver.V6_0), Loggers: Both, Effect: InvalidWith, Other: Buffering, Source: srcLogFileMode},
	{Flag: Circular, Versions: since(winver.V6_0), Loggers: Both, Effect: Allows, Need: Stoppable, Source: srcLogFileMode},
	{Flag: Circular, Versions: since(winver.V6_2), Loggers: Both, Effect: Requires, Prop: MaximumFileSize, Source: srcLogFileMode},
	// EVENT_TRACE_FILE_MODE_APPEND
	{Flag: Append, Versions: since(winver.V5_1), Loggers: Both, Effect: InvalidWith, Other: Circular, Source: srcLogFileMode},
	{Flag: Append, Versions: since(winver.V6_0), Loggers: Both, Effect: InvalidWith, Other: Preallocate, Source: srcLogFileMode},
	{Flag: Append, Versions: since(winver.V6_0), Loggers: Both, Effect: InvalidWith, Other: Buffering, Source: srcLogFileMode},
	{Flag: Append, Versions: since(winver.V6_0), Loggers: Both, Effect: Implies, Other: Sequential, Source: srcLogFileMode},
	{Flag: Append, Versions: since(winver.V6_1), Loggers: Both, Effect: InvalidWith, Other: NewFile, Source: srcLogFileMode},
	// EVENT_TRACE_FILE_MODE_NEWFILE
	{Flag: NewFile, Versions: since(winver.V5_1), Loggers: Both, Effect: InvalidWith, Other: Circular, Source: srcLogFileMode},
	{Flag: NewFile, Versions: since(winver.V5_1), Loggers: Both, Effect: Requires, Prop: LogFileName, Source: srcLogFileMode},
	{Flag: NewFile, Versions: since(winver.V5_1), Loggers: Both, Effect: Requires, Prop: MaximumFileSize, Source: srcLogFileMode},
	{Flag: NewFile, Versions: since(winver.V5_2), Loggers: Kernel, Effect: InvalidWith, Prop: KernelLoggerID, Source: srcLogFileMode},
	{Flag: NewFile, Versions: since(winver.V6_0), Loggers: Both, Effect: InvalidWith, Other: Preallocate, Source: srcLogFileMode},
	{Flag: NewFile, Versions: since(winver.V6_0), Loggers: Both, Effect: InvalidWith, Other: Buffering, Source: srcLogFileMode},
	{Flag: NewFile, Versions: since(winver.V6_0), Loggers: Kernel, Effect: InvalidWith, Prop: AutoLoggerFlag, Source: srcLogFileMode},
	{Flag: NewFile, Versions: since(winver.V6_0), Loggers: Kernel, Effect: InvalidWith, Prop: CKCLID, Source: srcLogFileMode},
	{Flag: NewFile, Versions: since(winver.V6_0), Loggers: Both, Effect: Implies, Other: Sequential, Source: srcLogFileMode},
	{Flag: NewFile, Versions: since(winver.V6_1), Loggers: Both, Effect: InvalidWith, Other: Append, Source: srcLogFileMode},
	{Flag: NewFile, Versions: since(winver.V6_2), Loggers: Both, Effect: InvalidWith, Other: SystemLogger, Source: srcLogFileMode},
	// EVENT_TRACE_FILE_MODE_PREALLOCATE
	{Flag: Preallocate, Versions: since(winver.V6_0), Loggers: Both, Effect: InvalidWith, Other: Append, Source: srcLogFileMode},
	{Flag: Preallocate, Versions: since(winver.V6_0), Loggers: Both, Effect: InvalidWith, Other: NewFile, Source: srcLogFileMode},
	{Flag: Preallocate, Versions: since(winver.V6_0), Loggers: Both, Effect: Requires, Prop: MaximumFileSize, Source: srcLogFileMode},
	// EVENT_TRACE_NONSTOPPABLE_MODE
	{Flag: NonStoppable, Versions: since(winver.V6_0), Loggers: Both, Effect: RequiresOneOf, Need: Stoppable, Source: srcLogFileMode},
	{Flag: NonStoppable, Versions: since(winver.V6_0), Loggers: Both, Effect: Requires, Prop: AutoLoggerFlag, Source: srcLogFileMode},
	// EVENT_TRACE_SECURE_MODE: nothing invalidates it; BUFFER_INTERFACE implies it (below).
	// EVENT_TRACE_REAL_TIME_MODE
	{Flag: RealTime, Versions: since(winver.V6_0), Loggers: Both, Effect: Allows, Need: Stoppable, Without: LogFileName, Source: srcLogFileMode},
	{Flag: RealTime, Versions: since(winver.V5_0), Loggers: Both, Effect: Allows, Need: Destination, Source: srcLogFileMode},
	// EVENT_TRACE_DELAY_OPEN_FILE_MODE
	{Flag: DelayOpenFile, Versions: only(winver.V5_0), Loggers: Both, Effect: Requires, Prop: LogFileName, Source: srcLogFileMode},
	{Flag: DelayOpenFile, Versions: only(winver.V6_0), Loggers: Both, Effect: InvalidWith, Other: NonStoppable, Unless: Circular | Buffering, Source: srcLogFileMode},
	{Flag: DelayOpenFile, Versions: span(winver.V5_0, winver.V6_0), Loggers: Both, Effect: Allows, Need: Destination, Source: srcLogFileMode},
	// EVENT_TRACE_BUFFERING_MODE
	{Flag: Buffering, Versions: since(winver.V6_0), Loggers: Both, Effect: InvalidWith, Prop: LogFileName, Source: srcLogFileMode},
	{Flag: Buffering, Versions: since(winver.V6_0), Loggers: Both, Effect: InvalidWith, Other: Sequential, Source: srcLogFileMode},
	{Flag: Buffering, Versions: since(winver.V6_0), Loggers: Both, Effect: InvalidWith, Other: Circular, Source: srcLogFileMode},
	{Flag: Buffering, Versions: since(winver.V6_0), Loggers: Both, Effect: InvalidWith, Other: Append, Source: srcLogFileMode},
	{Flag: Buffering, Versions: since(winver.V6_0), Loggers: Both, Effect: InvalidWith, Other: NewFile, Source: srcLogFileMode},
	{Flag: Buffering, Versions: since(winver.V6_0), Loggers: Both, Effect: Allows, Need: Stoppable, Source: srcLogFileMode},
	{Flag: Buffering, Versions: since(winver.V6_0), Loggers: Both, Effect: Allows, Need: Destination, Source: srcLogFileMode},
	{Flag: Buffering, Versions: since(winver.V6_1), Loggers: Both, Effect: InvalidWith, Other: BufferInterface, Source: srcLogFileMode},
	{Flag: Buffering, Versions: since(winver.V6_1), Loggers: Both, Effect: Overrides, Other: RealTime, Source: srcLogFileMode},
	{Flag: Buffering, Versions: since(winver.V6_1), Loggers: Both, Effect: Overrides, Prop: FlushTimer, Source: srcLogFileMode},
	{Flag: Buffering, Versions: span(winver.V6_1, winver.V6_2), Loggers: Both, Effect: Overrides, Other: KDFilter, Source: srcLogFileMode},
	{Flag: Buffering, Versions: since(winver.V6_3), Loggers: Both, Effect: Overrides, Prop: FlushThreshold, Source: srcLogFileMode},
	{Flag: Buffering, Versions: since(winver.V1607), Loggers: Kernel, Effect: Allows, Other: Compressed, Source: srcLogFileMode},
	// A session needs somewhere for its events to go (see the note above).
	{Flag: 0, Versions: since(winver.V5_0), Loggers: Both, Effect: RequiresOneOf, Need: Destination, Source: srcLogFileMode},
	{Flag: 0, Versions: since(winver.V5_0), Loggers: Both, Effect: Allows, Need: Destination, Prop: LogFileName, Source: srcLogFileMode},
	// EVENT_TRACE_USE_GLOBAL_SEQUENCE, EVENT_TRACE_USE_LOCAL_SEQUENCE
	{Flag: GlobalSequence, Versions: since(winver.V5_1), Loggers: Both, Effect: InvalidWith, Other: LocalSequence, Source: srcLogFileMode},
	{Flag: LocalSequence, Versions: since(winver.V5_1), Loggers: Both, Effect: InvalidWith, Other: GlobalSequence, Source: srcLogFileMode},
	// EVENT_TRACE_RELOG_MODE: rejected by the kernel from 6.2; a user-mode logger's option.
	{Flag: Relog, Versions: since(winver.V6_2), Loggers: Kernel, Effect: InvalidWith, Source: srcLogFileMode},
	// EVENT_TRACE_BUFFER_INTERFACE_MODE
	{Flag: BufferInterface, Versions: since(winver.V6_1), Loggers: Both, Effect: InvalidWith, Other: Buffering, Source: srcLogFileMode},
	{Flag: BufferInterface, Versions: since(winver.V6_1), Loggers: Both, Effect: Implies, Other: Secure, Source: srcLogFileMode},
	// EVENT_TRACE_KD_FILTER_MODE
	{Flag: KDFilter, Versions: since(winver.V6_2), Loggers: Both, Effect: Overrides, Other: PagedMemory, Source: srcLogFileMode},
	// EVENT_TRACE_STOP_ON_HYBRID_SHUTDOWN, EVENT_TRACE_PERSIST_ON_HYBRID_SHUTDOWN
	{Flag: StopOnHybrid, Versions: since(winver.V6_2), Loggers: Both, Effect: InvalidWith, Other: PersistOnHybrid, Source: srcLogFileMode},
	{Flag: PersistOnHybrid, Versions: since(winver.V6_2), Loggers: Both, Effect: InvalidWith, Other: StopOnHybrid, Source: srcLogFileMode},
	// EVENT_TRACE_USE_PAGED_MEMORY
	{Flag: PagedMemory, Versions: since(winver.V6_2), Loggers: Both, Effect: InvalidWith, Other: SystemLogger, Source: srcLogFileMode},
	// EVENT_TRACE_SYSTEM_LOGGER_MODE
	{Flag: SystemLogger, Versions: since(winver.V6_2), Loggers: Both, Effect: InvalidWith, Other: NewFile, Source: srcLogFileMode},
	{Flag: SystemLogger, Versions: since(winver.V6_2), Loggers: Both, Effect: InvalidWith, Other: PagedMemory, Source: srcLogFileMode},
	// EVENT_TRACE_COMPRESSED_MODE: the kernel's rules; private loggers compress from 6.2.
	{Flag: Compressed, Versions: span(winver.V6_2, winver.V1511), Loggers: Kernel, Effect: InvalidWith, Source: srcLogFileMode},
	{Flag: Compressed, Versions: since(winver.V1607), Loggers: Kernel, Effect: Requires, Other: Buffering, Source: srcLogFileMode},

	// Private loggers (EVENT_TRACE_PRIVATE_LOGGER_MODE): not in "LogFileMode", which covers
	// the kernel. The documented restrictions (Microsoft Learn, "Logging Mode Constants"):
	// APPEND "do not use with ... EVENT_TRACE_PRIVATE_LOGGER_MODE", NEWFILE is not allowed
	// for private sessions, INDEPENDENT_SESSION not with PRIVATE_LOGGER_MODE and
	// USE_PAGED_MEMORY ignored with PRIVATE_LOGGER_MODE; and [MS-PLA]: "Private sessions
	// cannot be used" with real-time delivery. The versions are those at which the other
	// flag is first recognised.
	{Flag: PrivateLogger, Versions: since(winver.V5_1), Loggers: Private, Effect: InvalidWith, Other: Append, Source: srcModeConstants},
	{Flag: PrivateLogger, Versions: since(winver.V5_1), Loggers: Private, Effect: InvalidWith, Other: NewFile, Source: srcModeConstants},
	{Flag: PrivateLogger, Versions: since(winver.V6_3), Loggers: Private, Effect: InvalidWith, Other: IndependentSession, Source: srcModeConstants},
	{Flag: PrivateLogger, Versions: since(winver.V6_0), Loggers: Private, Effect: Overrides, Other: PagedMemory, Source: srcModeConstants},
	{Flag: PrivateLogger, Versions: since(winver.V5_0), Loggers: Private, Effect: InvalidWith, Other: RealTime, Source: srcPLA},
}

// Rules returns the rule table, in the order of its sources.
func Rules() []Rule { return append([]Rule(nil), rules...) }

// RulesFor returns the rules in force at version v for loggers of kind k whose flag v
// recognises (session-wide rules included).
func RulesFor(v winver.Version, k LoggerKind) []Rule {
	var out []Rule
	for _, r := range rules {
		if r.Versions.Contains(v) && r.Loggers&k != 0 && (r.Flag == 0 || Recognises(v, k, r.Flag)) {
			out = append(out, r)
		}
	}
	return out
}

// PrivateStart is one row of the private-logger start table: what a version asks of a
// private logger's start beyond its LogFileMode rules, for starts with or without
// EVENT_TRACE_PRIVATE_IN_PROC. A private logger never reaches the kernel's checks
// (Geoff Chappell, "LogFileMode": the flag is "not known to the kernel"), so Microsoft's
// documentation is the only public source.
type PrivateStart struct {
	Versions winver.Range
	InProc   bool // the row is for starts whose effective mode has EVENT_TRACE_PRIVATE_IN_PROC
	// Registered: Wnode.Guid must be the GUID of a provider already registered.
	Registered bool
	// PerProcess is how many private loggers one process may run, this one included.
	PerProcess int
	Source     string // public works, by author and title, "; " between them
}

// Sources of the private-logger start table.
const (
	srcPrivateSession = `Microsoft Learn, "Configuring and Starting a Private Logger Session"`
	srcPrivateBoth    = srcModeConstants + "; " + srcPrivateSession
)

// privateStarts is the private-logger start table, by version, from Microsoft Learn:
//   - Registration. "Configuring and Starting a Private Logger Session": Wnode.Guid "must
//     contain the GUID of the provider, not the session, and the provider must have already
//     registered the GUID", but "if you also set the EVENT_TRACE_PRIVATE_IN_PROC logging
//     mode, you can use a different GUID for the session and provider"; from 1703 the
//     provider no longer needs to be registered before the private session starts. "Logging
//     Mode Constants" adds, for PRIVATE_IN_PROC, that "only the process that registered the
//     provider GUID can start the logger session with that GUID": a check between
//     processes, which never refuses in the emulator's one process, where every
//     registration is the starting process's own.
//   - Count. "Logging Mode Constants", EVENT_TRACE_PRIVATE_LOGGER_MODE: "Prior to Windows
//     10, version 1703 ... there can only be one private session per process (unless the
//     EVENT_TRACE_PRIVATE_IN_PROC mode is also specified, in which case you can create up
//     to three in-process private sessions)"; now "up to eight private session per
//     process" ("Configuring and Starting a Private Logger Session": from 1703, "a limit of
//     8"). [UNCERTAIN] Whether the one and the three are counted apart is not said: the
//     emulator counts every private logger of the process against the limit of the row the
//     new start falls in. PRIVATE_IN_PROC's own entry says "up to three" without a version;
//     the emulator reads it as the rule before 1703, where PRIVATE_LOGGER_MODE's entry puts
//     it, and allows eight of either kind from 1703.
//
// PRIVATE_IN_PROC is recognised from 6.0 (see recognition); before that every private
// logger falls in the first row. Not modelled: before 1703 only administrators could start
// a private logger without PRIVATE_IN_PROC ("Logging Mode Constants"); the emulator has no
// users.
var privateStarts = []PrivateStart{
	{Versions: span(winver.V5_0, winver.V1607), InProc: false, Registered: true, PerProcess: 1, Source: srcPrivateBoth},
	{Versions: span(winver.V6_0, winver.V1607), InProc: true, Registered: false, PerProcess: 3, Source: srcPrivateBoth},
	{Versions: since(winver.V1703), InProc: false, Registered: false, PerProcess: 8, Source: srcPrivateBoth},
	{Versions: since(winver.V1703), InProc: true, Registered: false, PerProcess: 8, Source: srcPrivateBoth},
}

// PrivateStartFor returns the row of the private-logger start table for a private logger
// started at version v with effective LogFileMode m (after the version's mode rules, so
// without flags v does not recognise).
func PrivateStartFor(v winver.Version, m Mode) PrivateStart {
	inProc := m&PrivateInProc != 0 && Recognises(v, Private, PrivateInProc)
	for _, r := range privateStarts {
		if r.InProc == inProc && r.Versions.Contains(v) {
			return r
		}
	}
	return PrivateStart{Versions: winver.Only(v), InProc: inProc} // unreachable: every version has both rows
}

// PrivateStarts returns the private-logger start table, in version order.
func PrivateStarts() []PrivateStart { return append([]PrivateStart(nil), privateStarts...) }

// String says what the row asks, as refusals quote it: "without
// EVENT_TRACE_PRIVATE_IN_PROC, 5.0 to 1607: Wnode.Guid must be a registered provider's
// GUID; at most 1 private logger per process".
func (r PrivateStart) String() string {
	s := "without "
	if r.InProc {
		s = "with "
	}
	s += Name(PrivateInProc) + ", " + r.Versions.String() + ": "
	if r.Registered {
		s += "Wnode.Guid must be a registered provider's GUID; "
	} else {
		s += "Wnode.Guid need not be registered; "
	}
	return s + fmt.Sprintf("at most %d private logger%s per process", r.PerProcess, quote.S(r.PerProcess))
}
