// Package oracle is the fuzz harness's own reading of how a Windows version answers a
// session start's LogFileMode, written from the published sources without the
// emulator's code: a flat transcription of the per-flag tables of Geoff Chappell's
// "LogFileMode" (and, for private loggers, Microsoft Learn's "Logging Mode Constants"),
// one line per table row, and a few lines that interpret it. Package logmode answers the
// same question from its own rule table; the fuzz targets compare the two, so a rule
// wrong in one of them shows up as a difference rather than being wrong on both sides.
//
// Where the published text lost a list or a flag name in extraction, the rows say how
// they were rebuilt.
package oracle

import (
	"fmt"
	"math/bits"
	"strings"

	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/winver"
)

// values is the article's table of values and names, less the EVENT_TRACE_ prefixes
// (EVENT_TRACE_FILE_MODE_ becomes FILE_MODE_).
var values = map[string]uint32{
	"FILE_MODE_SEQUENTIAL": 0x00000001, "FILE_MODE_CIRCULAR": 0x00000002, "FILE_MODE_APPEND": 0x00000004,
	"FILE_MODE_NEWFILE": 0x00000008, "USE_MS_FLUSH_TIMER": 0x00000010, "FILE_MODE_PREALLOCATE": 0x00000020,
	"NONSTOPPABLE_MODE": 0x00000040, "SECURE_MODE": 0x00000080, "REAL_TIME_MODE": 0x00000100,
	"DELAY_OPEN_FILE_MODE": 0x00000200, "BUFFERING_MODE": 0x00000400, "PRIVATE_LOGGER_MODE": 0x00000800,
	"ADD_HEADER_MODE": 0x00001000, "USE_KBYTES_FOR_SIZE": 0x00002000, "USE_GLOBAL_SEQUENCE": 0x00004000,
	"USE_LOCAL_SEQUENCE": 0x00008000, "RELOG_MODE": 0x00010000, "PRIVATE_IN_PROC": 0x00020000,
	"BUFFER_INTERFACE_MODE": 0x00040000, "KD_FILTER_MODE": 0x00080000, "MODE_RESERVED": 0x00100000,
	"LOST_EVENTS_DEBUG_MODE": 0x00200000, "STOP_ON_HYBRID_SHUTDOWN": 0x00400000,
	"PERSIST_ON_HYBRID_SHUTDOWN": 0x00800000, "USE_PAGED_MEMORY": 0x01000000, "SYSTEM_LOGGER_MODE": 0x02000000,
	"COMPRESSED_MODE": 0x04000000, "INDEPENDENT_SESSION_MODE": 0x08000000,
	"NO_PER_PROCESSOR_BUFFERING": 0x10000000, "BLOCKING_MODE": 0x20000000, "ADDTO_TRIAGE_DUMP": 0x80000000,
}

// known is the article's Versions column: from which version (to which, if not the
// newest) a kernel logger recognises each flag. A flag not recognised is dropped. Flags
// with no versions there (PRIVATE_LOGGER_MODE, PRIVATE_IN_PROC, BLOCKING_MODE and bit
// 0x40000000) the kernel never recognises.
//
// A private logger (user-mode buffers, EVENT_TRACE_PRIVATE_LOGGER_MODE) recognises the
// same flags from the same versions, and besides [design choice: NTDLL's own table is
// not public; Geoff Chappell's "ETW_UM_LOGGER_CONTEXT" shows the two implementations
// sharing their structure]: PRIVATE_LOGGER_MODE itself (from 5.0), PRIVATE_IN_PROC (from
// 6.0, the Vista WDK that defined it), BLOCKING_MODE (from 6.1, where
// ETW_UM_LOGGER_CONTEXT gains the condition variable that blocking waits on) and
// RELOG_MODE (from 5.1: "only ever has been meaningful for user-mode tracing sessions").
const known = `
FILE_MODE_SEQUENTIAL        5.0
FILE_MODE_CIRCULAR          5.0
FILE_MODE_APPEND            5.1
FILE_MODE_NEWFILE           5.1
USE_MS_FLUSH_TIMER          6.1
FILE_MODE_PREALLOCATE       6.0
NONSTOPPABLE_MODE           6.0
SECURE_MODE                 6.0
REAL_TIME_MODE              5.0
DELAY_OPEN_FILE_MODE        5.0
BUFFERING_MODE              6.0
ADD_HEADER_MODE             6.0-6.0
USE_KBYTES_FOR_SIZE         6.0
USE_GLOBAL_SEQUENCE         5.1
USE_LOCAL_SEQUENCE          5.1
RELOG_MODE                  6.2        private 5.1
BUFFER_INTERFACE_MODE       6.1
KD_FILTER_MODE              6.0
MODE_RESERVED               6.0-6.0
LOST_EVENTS_DEBUG_MODE      6.2
STOP_ON_HYBRID_SHUTDOWN     6.2
PERSIST_ON_HYBRID_SHUTDOWN  6.2
USE_PAGED_MEMORY            6.0
SYSTEM_LOGGER_MODE          6.2
COMPRESSED_MODE             6.2
INDEPENDENT_SESSION_MODE    6.3
NO_PER_PROCESSOR_BUFFERING  6.1
ADDTO_TRIAGE_DUMP           6.2
PRIVATE_LOGGER_MODE         -          private 5.0
PRIVATE_IN_PROC             -          private 6.0
BLOCKING_MODE               -          private 6.1
`

// table is the per-flag tables, row by row: the flag whose table it is ("session" for a
// rule on every session), the versions ("6.0" from 6.0 on, "6.0-6.2" from 6.0 to 6.2),
// which loggers it binds ("both", or "kernel" for what only the kernel checks: the
// well-known sessions, the AutoLogger bit and the flags the kernel refuses as user-mode
// options; "private" for the private-logger rows), what it says, and what it names: a
// flag, or one of the properties LogFileName, MaximumFileSize, AutoLogger (the
// 0x00000002 bit in Flags), SystemTraceControlGuid, CKCLGuid, FlushTimer, FlushThreshold.
//
// What a row says:
//   - invalid: the start is refused (STATUS_INVALID_PARAMETER) if the named flag or
//     property is present, or if the flag is set at all when nothing is named;
//     "unless X|Y" exempts a request that sets X or Y;
//   - requires: refused unless the named flag or property is present;
//   - implies: the start proceeds as if the named flag were set;
//   - overrides: it proceeds as if the named flag were clear (the property zero);
//   - nonstop: the flag is one way to satisfy NONSTOPPABLE_MODE's "requires one of";
//     "unless X" means only without X;
//   - dest: the flag is one of the things a session needs one of for its events to go
//     somewhere.
//
// Rebuilt rows, where the extracted text lost a list:
//   - "Even for AutoLogger sessions, EVENT_TRACE_NONSTOPPABLE_MODE requires one of:" has
//     lost its list; the flags whose tables say "can allow EVENT_TRACE_NONSTOPPABLE_MODE"
//     are CIRCULAR, REAL_TIME (without a LogFileName) and BUFFERING, all from 6.0, and
//     those are the nonstop rows. DELAY_OPEN_FILE's 6.0-only constraint ("invalid with
//     EVENT_TRACE_NONSTOPPABLE_MODE if some other LogFileMode bits are clear, see above")
//     is read as: unless CIRCULAR or BUFFERING, the other two allowances.
//   - The lists after "EVENT_TRACE_REAL_TIME_MODE is required if all the following are
//     absent", "EVENT_TRACE_DELAY_OPEN_FILE_MODE is required if ..." (5.0 to 6.0) and
//     "EVENT_TRACE_BUFFERING_MODE is required if ..." (6.0 on) are lost; together they say
//     a session needs a LogFileName, REAL_TIME, DELAY_OPEN_FILE (to 6.0) or BUFFERING
//     (from 6.0): the dest rows.
//   - Three tables after KD_FILTER's prose have lost their flag's name; in the article's
//     order they are STOP_ON_HYBRID_SHUTDOWN's, PERSIST_ON_HYBRID_SHUTDOWN's and
//     USE_PAGED_MEMORY's (the prose after the third explains paged memory).
//
// Constraints look at the recognised flags as requested; implications are added next;
// overrides are then worked out from that mode all at once (so that in 6.2 BUFFERING's
// override of KD_FILTER "still overrides EVENT_TRACE_USE_PAGED_MEMORY").
const table = `
FILE_MODE_SEQUENTIAL        5.0       both    invalid   FILE_MODE_CIRCULAR
FILE_MODE_SEQUENTIAL        6.0       both    invalid   BUFFERING_MODE
FILE_MODE_CIRCULAR          5.0       both    invalid   FILE_MODE_SEQUENTIAL
FILE_MODE_CIRCULAR          5.1       both    invalid   FILE_MODE_APPEND
FILE_MODE_CIRCULAR          5.1       both    invalid   FILE_MODE_NEWFILE
FILE_MODE_CIRCULAR          6.0       both    invalid   BUFFERING_MODE
FILE_MODE_CIRCULAR          6.0       both    nonstop
FILE_MODE_CIRCULAR          6.2       both    requires  MaximumFileSize
FILE_MODE_APPEND            5.1       both    invalid   FILE_MODE_CIRCULAR
FILE_MODE_APPEND            6.0       both    invalid   FILE_MODE_PREALLOCATE
FILE_MODE_APPEND            6.0       both    invalid   BUFFERING_MODE
FILE_MODE_APPEND            6.0       both    implies   FILE_MODE_SEQUENTIAL
FILE_MODE_APPEND            6.1       both    invalid   FILE_MODE_NEWFILE
FILE_MODE_NEWFILE           5.1       both    invalid   FILE_MODE_CIRCULAR
FILE_MODE_NEWFILE           5.1       both    requires  LogFileName
FILE_MODE_NEWFILE           5.1       both    requires  MaximumFileSize
FILE_MODE_NEWFILE           5.2       kernel  invalid   SystemTraceControlGuid
FILE_MODE_NEWFILE           6.0       both    invalid   FILE_MODE_PREALLOCATE
FILE_MODE_NEWFILE           6.0       both    invalid   BUFFERING_MODE
FILE_MODE_NEWFILE           6.0       kernel  invalid   AutoLogger
FILE_MODE_NEWFILE           6.0       kernel  invalid   CKCLGuid
FILE_MODE_NEWFILE           6.0       both    implies   FILE_MODE_SEQUENTIAL
FILE_MODE_NEWFILE           6.1       both    invalid   FILE_MODE_APPEND
FILE_MODE_NEWFILE           6.2       both    invalid   SYSTEM_LOGGER_MODE
FILE_MODE_PREALLOCATE       6.0       both    invalid   FILE_MODE_APPEND
FILE_MODE_PREALLOCATE       6.0       both    invalid   FILE_MODE_NEWFILE
FILE_MODE_PREALLOCATE       6.0       both    requires  MaximumFileSize
NONSTOPPABLE_MODE           6.0       both    requires  AutoLogger
SECURE_MODE                 -         both    -
REAL_TIME_MODE              6.0       both    nonstop   unless LogFileName
REAL_TIME_MODE              5.0       both    dest
DELAY_OPEN_FILE_MODE        5.0-5.0   both    requires  LogFileName
DELAY_OPEN_FILE_MODE        6.0-6.0   both    invalid   NONSTOPPABLE_MODE unless FILE_MODE_CIRCULAR|BUFFERING_MODE
DELAY_OPEN_FILE_MODE        5.0-6.0   both    dest
BUFFERING_MODE              6.0       both    invalid   LogFileName
BUFFERING_MODE              6.0       both    invalid   FILE_MODE_SEQUENTIAL
BUFFERING_MODE              6.0       both    invalid   FILE_MODE_CIRCULAR
BUFFERING_MODE              6.0       both    invalid   FILE_MODE_APPEND
BUFFERING_MODE              6.0       both    invalid   FILE_MODE_NEWFILE
BUFFERING_MODE              6.0       both    nonstop
BUFFERING_MODE              6.0       both    dest
BUFFERING_MODE              6.1       both    invalid   BUFFER_INTERFACE_MODE
BUFFERING_MODE              6.1       both    overrides REAL_TIME_MODE
BUFFERING_MODE              6.1       both    overrides FlushTimer
BUFFERING_MODE              6.1-6.2   both    overrides KD_FILTER_MODE
BUFFERING_MODE              6.3       both    overrides FlushThreshold
session                     5.0       both    dest      LogFileName
USE_GLOBAL_SEQUENCE         5.1       both    invalid   USE_LOCAL_SEQUENCE
USE_LOCAL_SEQUENCE          5.1       both    invalid   USE_GLOBAL_SEQUENCE
RELOG_MODE                  6.2       kernel  invalid
BUFFER_INTERFACE_MODE       6.1       both    invalid   BUFFERING_MODE
BUFFER_INTERFACE_MODE       6.1       both    implies   SECURE_MODE
KD_FILTER_MODE              6.2       both    overrides USE_PAGED_MEMORY
STOP_ON_HYBRID_SHUTDOWN     6.2       both    invalid   PERSIST_ON_HYBRID_SHUTDOWN
PERSIST_ON_HYBRID_SHUTDOWN  6.2       both    invalid   STOP_ON_HYBRID_SHUTDOWN
USE_PAGED_MEMORY            6.2       both    invalid   SYSTEM_LOGGER_MODE
SYSTEM_LOGGER_MODE          6.2       both    invalid   FILE_MODE_NEWFILE
SYSTEM_LOGGER_MODE          6.2       both    invalid   USE_PAGED_MEMORY
COMPRESSED_MODE             6.2-1511  kernel  invalid
COMPRESSED_MODE             1607      kernel  requires  BUFFERING_MODE
PRIVATE_LOGGER_MODE         5.1       private invalid   FILE_MODE_APPEND
PRIVATE_LOGGER_MODE         5.1       private invalid   FILE_MODE_NEWFILE
PRIVATE_LOGGER_MODE         6.3       private invalid   INDEPENDENT_SESSION_MODE
PRIVATE_LOGGER_MODE         6.0       private overrides USE_PAGED_MEMORY
PRIVATE_LOGGER_MODE         5.0       private invalid   REAL_TIME_MODE
`

// The last five rows are the restrictions on private sessions: four from Microsoft Learn's
// "Logging Mode Constants" (APPEND "do not use with ... EVENT_TRACE_PRIVATE_LOGGER_MODE",
// NEWFILE not for private sessions, INDEPENDENT_SESSION_MODE not with PRIVATE_LOGGER_MODE,
// USE_PAGED_MEMORY ignored with PRIVATE_LOGGER_MODE) and one from Microsoft's [MS-PLA]
// protocol, 2.2.9 ExtendedModes ("Private sessions cannot be used" with real-time
// delivery); from the version that first recognises the other flag.

// The well-known sessions rows name ("LogFileMode": identified "by the GUID that is
// specified in the Guid member of the Wnode or is inferred from the session's name").
var (
	systemTraceControlGUID = guid.MustParse("9e814aad-3204-11d2-9a82-006008a86939")
	ckclGUID               = guid.MustParse("54dea73a-ed1f-42a4-af71-3e63d056f174")
)

// Request is what the oracle is asked: a session start's version, LogFileMode and the
// other WMI_LOGGER_INFORMATION members the rows name.
type Request struct {
	Version                    winver.Version
	Mode                       uint32
	Name                       string
	GUID                       guid.GUID
	LogFileName                bool
	MaximumFileSize            bool
	AutoLogger                 bool // the 0x00000002 bit in Flags
	FlushTimer, FlushThreshold uint32
}

// Answer is the oracle's answer: refused, or accepted with the effective LoggerMode and
// FlushTimer and FlushThreshold.
type Answer struct {
	Accepted                   bool
	Private                    bool // a private logger (PRIVATE_LOGGER_MODE)
	Effective                  uint32
	FlushTimer, FlushThreshold uint32
	Why                        string // for a refusal: the row that refused
}

type row struct {
	flag     uint32 // 0: every session
	from, to winver.Version
	kernel   bool // binds kernel loggers
	private  bool // binds private loggers
	says     string
	flagArg  uint32 // the flag named, or 0
	propArg  string // the property named, or ""
	unless   uint32
	unlessP  string
	line     string
}

type recog struct {
	kernelFrom, kernelTo, privFrom, privTo winver.Version
}

var (
	rows  []row
	recs  = map[uint32]recog{}
	props = map[string]bool{"LogFileName": true, "MaximumFileSize": true, "AutoLogger": true,
		"SystemTraceControlGuid": true, "CKCLGuid": true, "FlushTimer": true, "FlushThreshold": true}
)

func version(s string) (from, to winver.Version) {
	a, b, span := strings.Cut(s, "-")
	from = mustVersion(a)
	to = winver.Newest
	if span {
		to = mustVersion(b)
	}
	return from, to
}

func mustVersion(s string) winver.Version {
	v, err := winver.Parse(s)
	if err != nil {
		panic("oracle: " + err.Error())
	}
	return v
}

func flag(name string) uint32 {
	v, ok := values[name]
	if !ok {
		panic("oracle: no flag " + name)
	}
	return v
}

func init() {
	for _, line := range strings.Split(strings.TrimSpace(known), "\n") {
		f := strings.Fields(line)
		var r recog
		if f[1] != "-" {
			r.kernelFrom, r.kernelTo = version(f[1])
			r.privFrom, r.privTo = r.kernelFrom, r.kernelTo
		}
		if len(f) == 4 { // "private V"
			r.privFrom, r.privTo = version(f[3])
		}
		recs[flag(f[0])] = r
	}
	for _, line := range strings.Split(strings.TrimSpace(table), "\n") {
		f := strings.Fields(line)
		if f[1] == "-" {
			continue // a flag nothing constrains
		}
		r := row{says: f[3], line: line}
		if f[0] != "session" {
			r.flag = flag(f[0])
		}
		r.from, r.to = version(f[1])
		r.kernel, r.private = f[2] != "private", f[2] != "kernel"
		rest := f[4:]
		if len(rest) > 0 && rest[0] != "unless" {
			if props[rest[0]] {
				r.propArg = rest[0]
			} else {
				r.flagArg = flag(rest[0])
			}
			rest = rest[1:]
		}
		if len(rest) == 2 && rest[0] == "unless" {
			for _, n := range strings.Split(rest[1], "|") {
				if props[n] {
					r.unlessP = n
				} else {
					r.unless |= flag(n)
				}
			}
		}
		rows = append(rows, r)
	}
}

// Decide answers q by the rows.
func Decide(q Request) Answer {
	a := Answer{Private: q.Mode&values["PRIVATE_LOGGER_MODE"] != 0, FlushTimer: q.FlushTimer, FlushThreshold: q.FlushThreshold}
	if !q.Version.Valid() {
		a.Why = "not an emulated version"
		return a
	}
	v := q.Version
	// The recognised flags.
	var m uint32
	for b := q.Mode; b != 0; b &= b - 1 {
		bit := uint32(1) << bits.TrailingZeros32(b)
		r := recs[bit]
		from, to := r.kernelFrom, r.kernelTo
		if a.Private {
			from, to = r.privFrom, r.privTo
		}
		if from != 0 && v >= from && v <= to {
			m |= bit
		}
	}
	has := func(p string) bool {
		switch p {
		case "LogFileName":
			return q.LogFileName
		case "MaximumFileSize":
			return q.MaximumFileSize
		case "AutoLogger":
			return q.AutoLogger
		case "SystemTraceControlGuid":
			return q.GUID == systemTraceControlGUID || strings.EqualFold(q.Name, "NT Kernel Logger")
		case "CKCLGuid":
			return q.GUID == ckclGUID || strings.EqualFold(q.Name, "Circular Kernel Context Logger")
		case "FlushTimer":
			return q.FlushTimer != 0
		case "FlushThreshold":
			return q.FlushThreshold != 0
		}
		return false
	}
	inForce := func(r *row, mode uint32) bool {
		return v >= r.from && v <= r.to && (a.Private && r.private || !a.Private && r.kernel) &&
			(r.flag == 0 || mode&r.flag != 0) && mode&r.unless == 0 && (r.unlessP == "" || !has(r.unlessP))
	}
	named := func(r *row, mode uint32) bool { return mode&r.flagArg != 0 || r.propArg != "" && has(r.propArg) }
	one := func(says string) bool { // some nonstop or dest row in force
		for i := range rows {
			if r := &rows[i]; r.says == says && inForce(r, m) && (r.propArg == "" || has(r.propArg)) {
				return true
			}
		}
		return false
	}
	refuse := func(why string) Answer { a.Why = why; return a }
	for i := range rows {
		r := &rows[i]
		if !inForce(r, m) {
			continue
		}
		switch {
		case r.says == "invalid" && (named(r, m) || r.flagArg == 0 && r.propArg == ""):
			return refuse(r.line)
		case r.says == "requires" && !named(r, m):
			return refuse(r.line)
		}
	}
	if m&values["NONSTOPPABLE_MODE"] != 0 && v >= winver.V6_0 && !one("nonstop") {
		return refuse("NONSTOPPABLE_MODE requires one of the nonstop rows")
	}
	if !one("dest") {
		return refuse("a session needs somewhere for its events to go")
	}
	for i := range rows {
		if r := &rows[i]; r.says == "implies" && inForce(r, m) {
			m |= r.flagArg
		}
	}
	var cleared uint32
	for i := range rows {
		if r := &rows[i]; r.says == "overrides" && inForce(r, m) && named(r, m) {
			cleared |= r.flagArg
			switch r.propArg {
			case "FlushTimer":
				a.FlushTimer = 0
			case "FlushThreshold":
				a.FlushThreshold = 0
			}
		}
	}
	a.Accepted, a.Effective = true, m&^cleared
	return a
}

// String is the answer in a line, for failure messages.
func (a Answer) String() string {
	if !a.Accepted {
		return "refused: " + a.Why
	}
	return fmt.Sprintf("accepted as %#08x (FlushTimer %d, FlushThreshold %d)", a.Effective, a.FlushTimer, a.FlushThreshold)
}
