package logmode

import (
	"math/bits"
	"strings"
	"unicode/utf8"

	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// Well-known sessions that rules single out. Geoff Chappell's "LogFileMode": they "are
// identified, originally, by the GUID that is specified in the Guid member of the Wnode or
// is inferred from the session's name".
var (
	SystemTraceControlGUID = guid.MustParse("9e814aad-3204-11d2-9a82-006008a86939") // SystemTraceControlGuid
	CKCLGUID               = guid.MustParse("54dea73a-ed1f-42a4-af71-3e63d056f174") // CKCLGuid
)

// Names of the well-known sessions.
const (
	KernelLoggerName = "NT Kernel Logger"               // KERNEL_LOGGER_NAME
	CKCLName         = "Circular Kernel Context Logger" // the CKCL's session name
)

// MaxNameLength is the most characters a session name may have (MAXSTR, 1024: the
// LoggerName buffer StartTrace's callers are told to size, Microsoft Learn, "StartTrace").
const MaxNameLength = 1024

// CheckName checks what a session start names before any LogFileMode rule applies: a name
// of 1 to MaxNameLength characters without a NUL (Windows reads a LoggerName up to its
// first NUL), and SystemTraceControlGuid only with the name "NT Kernel Logger", in any
// case. StartTrace and etwemu modes check both apply it; the error is
// ERROR_INVALID_PARAMETER with the reason.
func CheckName(name string, g guid.GUID) error {
	if n := utf8.RuneCountInString(name); n == 0 || n > MaxNameLength {
		return winerr.New(winerr.ErrInvalidParameter, "session name must have 1 to %d characters, not %d", MaxNameLength, n)
	}
	if i := strings.IndexByte(name, 0); i >= 0 {
		return winerr.New(winerr.ErrInvalidParameter, "session name %q holds a NUL at byte %d: Windows reads a LoggerName up to its first NUL", name, i)
	}
	if g == SystemTraceControlGUID && !strings.EqualFold(name, KernelLoggerName) {
		return winerr.New(winerr.ErrInvalidParameter, "SystemTraceControlGuid requires the name %q", KernelLoggerName)
	}
	return nil
}

// Request is what a session start hands the kernel's mode check: the LogFileMode and the
// WMI_LOGGER_INFORMATION members the rules look at.
type Request struct {
	Version         winver.Version
	Mode            Mode
	Name            string    // session name
	GUID            guid.GUID // Wnode.Guid
	LogFileName     string
	MaximumFileSize uint32
	FlushTimer      uint32
	FlushThreshold  uint32
	// AutoLogger is the 0x00000002 bit of WMI_LOGGER_INFORMATION.Flags, which the kernel
	// sets for sessions it starts from AutoLogger settings and the documented StartTrace
	// never sets.
	AutoLogger bool
}

// Kind returns the kind of logger the request starts: a private logger when it sets
// EVENT_TRACE_PRIVATE_LOGGER_MODE (which never reaches the kernel), else a kernel logger.
func (q *Request) Kind() LoggerKind {
	if q.Mode&PrivateLogger != 0 {
		return Private
	}
	return Kernel
}

// has reports whether the request has property p.
func (q *Request) has(p Prop) bool {
	switch p {
	case LogFileName:
		return q.LogFileName != ""
	case MaximumFileSize:
		return q.MaximumFileSize != 0
	case AutoLoggerFlag:
		return q.AutoLogger
	case KernelLoggerID:
		return q.GUID == SystemTraceControlGUID || strings.EqualFold(q.Name, KernelLoggerName)
	case CKCLID:
		return q.GUID == CKCLGUID || strings.EqualFold(q.Name, CKCLName)
	case FlushTimer:
		return q.FlushTimer != 0
	case FlushThreshold:
		return q.FlushThreshold != 0
	}
	return false
}

// Outcome is what a rule did to one request.
type Outcome uint8

// Outcomes.
const (
	Refused   Outcome = iota + 1 // the rule refused the start
	Applied                      // an implication or override changed the effective mode
	Satisfied                    // a requirement was met, or an allowance applied
	Ignored                      // a flag the version does not recognise was dropped
)

var outcomeNames = [...]string{"", "refused", "applied", "satisfied", "ignored"}

func (o Outcome) String() string { return outcomeNames[o] }

// Fired is one rule that applied to a request, and what it did.
type Fired struct {
	Rule    *Rule // nil for Ignored
	Flag    Mode  // for Ignored: the dropped flag
	Outcome Outcome
}

// String is one line of `etwemu modes check`.
func (f Fired) String() string {
	if f.Rule == nil {
		return "ignored: " + Name(f.Flag) + " is not recognised"
	}
	return f.Outcome.String() + ": " + f.Rule.Describe()
}

// Decision is how a version of Windows answers a session start: refused, or accepted with
// an effective LoggerMode and adjusted properties.
type Decision struct {
	Request    Request
	Kind       LoggerKind
	Recognised Mode // requested bits the version knows
	Ignored    Mode // requested bits it does not know, dropped
	Implied    Mode // bits added by implications
	Overridden Mode // bits cleared by overrides
	Effective  Mode // the LoggerMode the session runs with
	// FlushTimer and FlushThreshold after overrides.
	FlushTimer, FlushThreshold uint32
	Fired                      []Fired
	// Err is nil for an accepted start; else STATUS_INVALID_PARAMETER (as
	// ERROR_INVALID_PARAMETER) naming the first refusing rule.
	Err error
}

// Accepted reports whether the start is accepted.
func (d *Decision) Accepted() bool { return d.Err == nil }

// Refusals returns the rules that refused the start.
func (d *Decision) Refusals() []*Rule {
	var out []*Rule
	for _, f := range d.Fired {
		if f.Outcome == Refused {
			out = append(out, f.Rule)
		}
	}
	return out
}

// EffectiveRequest is the request with the effective mode and properties, which Decide
// accepts unchanged.
func (d *Decision) EffectiveRequest() Request {
	q := d.Request
	q.Mode = d.Effective
	q.FlushTimer, q.FlushThreshold = d.FlushTimer, d.FlushThreshold
	return q
}

// ofVersion lists, for each emulated version, its rules: those of rules whose Versions
// contain it, in table order. It is derived from rules once, so that Decide, called on
// every session start, walks only the version's rules.
var ofVersion = func() (of [winver.Newest + 1][]*Rule) {
	for v := winver.Oldest; v <= winver.Newest; v++ {
		for i := range rules {
			if rules[i].Versions.Contains(v) {
				of[v] = append(of[v], &rules[i])
			}
		}
	}
	return of
}()

// Decide applies the rules of q.Version to q, as the kernel (or, for a private logger,
// the user-mode logger) would when starting the session. It never panics; an invalid
// version is refused.
func Decide(q Request) Decision {
	d := Decision{Request: q, Kind: q.Kind(), FlushTimer: q.FlushTimer, FlushThreshold: q.FlushThreshold}
	if !q.Version.Valid() {
		d.Err = winerr.New(winerr.ErrInvalidParameter, "Windows version %d is not one of the emulated versions", uint8(q.Version))
		return d
	}
	v := q.Version
	d.Recognised = Recognised(v, d.Kind, q.Mode)
	d.Ignored = q.Mode &^ d.Recognised
	for _, b := range d.Ignored.Bits() {
		d.Fired = append(d.Fired, Fired{Flag: b, Outcome: Ignored})
	}
	m := d.Recognised
	// The version's rules that can apply: those on every session and those of the flags
	// m holds. active holds for no other; walking only these is most of Decide's saving,
	// as a mode holds a few of the thirty-odd flags.
	var buf [64]*Rule // more grows on the heap
	of := applicable(v, m, buf[:0])
	active := func(r *Rule) bool {
		return r.Loggers&d.Kind != 0 &&
			(r.Flag == 0 || m&r.Flag != 0) && m&r.Unless == 0 && (r.Without == NoProp || !q.has(r.Without))
	}
	present := func(r *Rule) bool { // the Other flag or the Prop the rule names
		return (r.Other != 0 && m&r.Other != 0) || (r.Prop != NoProp && q.has(r.Prop))
	}
	allowed := func(n Need) bool {
		for _, r := range of {
			if r.Effect == Allows && r.Need == n && active(r) && (r.Flag != 0 || q.has(r.Prop)) {
				return true
			}
		}
		return false
	}

	// Constraints, on the recognised bits as requested.
	for _, r := range of {
		if !active(r) {
			continue
		}
		var ok bool
		switch r.Effect {
		case InvalidWith:
			ok = (r.Other != 0 || r.Prop != NoProp) && !present(r)
		case Requires:
			ok = present(r)
		case RequiresOneOf:
			ok = allowed(r.Need)
		default:
			continue
		}
		if !ok {
			d.Fired = append(d.Fired, Fired{Rule: r, Outcome: Refused})
		} else if r.Effect != InvalidWith {
			d.Fired = append(d.Fired, Fired{Rule: r, Outcome: Satisfied})
		}
	}
	if refused := d.Refusals(); len(refused) > 0 {
		d.Err = winerr.Because(winerr.ErrInvalidParameter, refused[0].Describe())
		return d
	}

	// Implications, then overrides computed from the implied mode all at once.
	for _, r := range of {
		if r.Effect == Implies && active(r) && m&r.Other != r.Other {
			d.Implied |= r.Other
			d.Fired = append(d.Fired, Fired{Rule: r, Outcome: Applied})
		}
	}
	if d.Implied != 0 {
		m |= d.Implied
		of = applicable(v, m, buf[:0])
	}
	for _, r := range of {
		if !active(r) {
			continue
		}
		switch {
		case r.Effect == Allows && (r.Flag != 0 || q.has(r.Prop)) && (r.Other == 0 || m&r.Other != 0) &&
			(r.Need != Stoppable || m&NonStoppable != 0):
			d.Fired = append(d.Fired, Fired{Rule: r, Outcome: Satisfied})
		case r.Effect == Overrides && present(r):
			d.Overridden |= r.Other
			switch r.Prop {
			case FlushTimer:
				d.FlushTimer = 0
			case FlushThreshold:
				d.FlushThreshold = 0
			}
			d.Fired = append(d.Fired, Fired{Rule: r, Outcome: Applied})
		}
	}
	d.Effective = m &^ d.Overridden
	return d
}

// ruleSet is a set of indexes into one version's ofVersion list.
type ruleSet [4]uint64

// byFlag indexes ofVersion: for each version, the rules of each flag's table, by the
// flag's bit number, and at index 32 the rules on every session. Derived once, like
// ofVersion, so that applicable ORs a set for each flag a mode holds instead of testing
// every rule of the version (the walk was most of Decide, which every start calls).
var byFlag = func() (by [winver.Newest + 1][33]ruleSet) {
	for v := range ofVersion {
		if len(ofVersion[v]) > 64*len(ruleSet{}) {
			panic("logmode: a version has more rules than a ruleSet holds")
		}
		for i, r := range ofVersion[v] {
			b := 32
			if r.Flag != 0 {
				if bits.OnesCount32(uint32(r.Flag)) != 1 {
					panic("logmode: a rule's Flag is not one flag: " + r.Flag.String())
				}
				b = bits.TrailingZeros32(uint32(r.Flag))
			}
			by[v][b][i/64] |= 1 << (i % 64)
		}
	}
	return by
}()

// applicable appends to out the rules of version v that are on every session or of a
// flag m holds, in their order, and returns it.
func applicable(v winver.Version, m Mode, out []*Rule) []*Rule {
	set := byFlag[v][32]
	for r := uint32(m); r != 0; r &= r - 1 {
		f := &byFlag[v][bits.TrailingZeros32(r)]
		for w := range set {
			set[w] |= f[w]
		}
	}
	of := ofVersion[v]
	for w, x := range set {
		for ; x != 0; x &= x - 1 {
			out = append(out, of[64*w+bits.TrailingZeros64(x)])
		}
	}
	return out
}

// Forbidden reports whether mode m, as the effective mode of an accepted start at version
// v for kind k, holds a pair of flags some InvalidWith rule of the version forbids. An
// accepted start's effective mode never does.
func Forbidden(v winver.Version, k LoggerKind, m Mode) *Rule {
	if !v.Valid() {
		return nil
	}
	for _, r := range ofVersion[v] {
		if r.Effect == InvalidWith && r.Other != 0 && r.Loggers&k != 0 &&
			m&r.Flag != 0 && m&r.Other != 0 && m&r.Unless == 0 {
			return r
		}
	}
	return nil
}
