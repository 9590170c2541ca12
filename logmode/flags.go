package logmode

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"

	"github.com/etwemu/etwemu/internal/quote"
)

// Mode is a LogFileMode: the EVENT_TRACE_* bits of EVENT_TRACE_PROPERTIES.LogFileMode,
// which the kernel keeps as WMI_LOGGER_CONTEXT.LoggerMode.
type Mode uint32

// LogFileMode flags (evntrace.h Logging Mode Constants; ntwmi.h for the internal ones).
// They are untyped so that they fit both Mode and the uint32 of Properties.LogFileMode.
const (
	Sequential          = 0x00000001 // EVENT_TRACE_FILE_MODE_SEQUENTIAL
	Circular            = 0x00000002 // EVENT_TRACE_FILE_MODE_CIRCULAR
	Append              = 0x00000004 // EVENT_TRACE_FILE_MODE_APPEND
	NewFile             = 0x00000008 // EVENT_TRACE_FILE_MODE_NEWFILE
	MSFlushTimer        = 0x00000010 // EVENT_TRACE_USE_MS_FLUSH_TIMER
	Preallocate         = 0x00000020 // EVENT_TRACE_FILE_MODE_PREALLOCATE
	NonStoppable        = 0x00000040 // EVENT_TRACE_NONSTOPPABLE_MODE
	Secure              = 0x00000080 // EVENT_TRACE_SECURE_MODE
	RealTime            = 0x00000100 // EVENT_TRACE_REAL_TIME_MODE
	DelayOpenFile       = 0x00000200 // EVENT_TRACE_DELAY_OPEN_FILE_MODE
	Buffering           = 0x00000400 // EVENT_TRACE_BUFFERING_MODE
	PrivateLogger       = 0x00000800 // EVENT_TRACE_PRIVATE_LOGGER_MODE
	AddHeader           = 0x00001000 // EVENT_TRACE_ADD_HEADER_MODE
	KBytesForSize       = 0x00002000 // EVENT_TRACE_USE_KBYTES_FOR_SIZE
	GlobalSequence      = 0x00004000 // EVENT_TRACE_USE_GLOBAL_SEQUENCE
	LocalSequence       = 0x00008000 // EVENT_TRACE_USE_LOCAL_SEQUENCE
	Relog               = 0x00010000 // EVENT_TRACE_RELOG_MODE
	PrivateInProc       = 0x00020000 // EVENT_TRACE_PRIVATE_IN_PROC
	BufferInterface     = 0x00040000 // EVENT_TRACE_BUFFER_INTERFACE_MODE
	KDFilter            = 0x00080000 // EVENT_TRACE_KD_FILTER_MODE
	RealtimeRelog       = 0x00100000 // EVENT_TRACE_REALTIME_RELOG_MODE (EVENT_TRACE_MODE_RESERVED in 6.0)
	LostEventsDebug     = 0x00200000 // EVENT_TRACE_LOST_EVENTS_DEBUG_MODE
	StopOnHybrid        = 0x00400000 // EVENT_TRACE_STOP_ON_HYBRID_SHUTDOWN
	PersistOnHybrid     = 0x00800000 // EVENT_TRACE_PERSIST_ON_HYBRID_SHUTDOWN
	PagedMemory         = 0x01000000 // EVENT_TRACE_USE_PAGED_MEMORY
	SystemLogger        = 0x02000000 // EVENT_TRACE_SYSTEM_LOGGER_MODE
	Compressed          = 0x04000000 // EVENT_TRACE_COMPRESSED_MODE
	IndependentSession  = 0x08000000 // EVENT_TRACE_INDEPENDENT_SESSION_MODE
	NoPerProcessorBufs  = 0x10000000 // EVENT_TRACE_NO_PER_PROCESSOR_BUFFERING
	Blocking            = 0x20000000 // EVENT_TRACE_BLOCKING_MODE
	Unused40000000      = 0x40000000 // no name; apparently unused
	AddToTriageDump     = 0x80000000 // EVENT_TRACE_ADDTO_TRIAGE_DUMP
	None                = 0x00000000 // EVENT_TRACE_FILE_MODE_NONE
	privateLoggerFlags  = PrivateLogger | PrivateInProc
	fileModes           = Sequential | Circular | Append | NewFile
	destinationFlagList = RealTime | DelayOpenFile | Buffering
)

// flagName is one bit's Windows name and the short name the command line takes.
type flagName struct {
	bit          Mode
	name, short  string
	alias        string // another Windows name of the bit, if any
	definedSince string // "LogFileMode"'s remark: which header first defined it
}

// names is the table of values and names of Geoff Chappell's "LogFileMode", in bit order.
var names = [32]flagName{
	{Sequential, "EVENT_TRACE_FILE_MODE_SEQUENTIAL", "SEQUENTIAL", "", "DDK for Windows 2000"},
	{Circular, "EVENT_TRACE_FILE_MODE_CIRCULAR", "CIRCULAR", "", "DDK for Windows 2000"},
	{Append, "EVENT_TRACE_FILE_MODE_APPEND", "APPEND", "", "DDK for Windows XP"},
	{NewFile, "EVENT_TRACE_FILE_MODE_NEWFILE", "NEWFILE", "", "DDK for Windows XP"},
	{MSFlushTimer, "EVENT_TRACE_USE_MS_FLUSH_TIMER", "MS_FLUSH_TIMER", "", "Enterprise WDK for 1511"},
	{Preallocate, "EVENT_TRACE_FILE_MODE_PREALLOCATE", "PREALLOCATE", "", "DDK for Windows XP"},
	{NonStoppable, "EVENT_TRACE_NONSTOPPABLE_MODE", "NONSTOPPABLE", "", "WDK for Windows Vista"},
	{Secure, "EVENT_TRACE_SECURE_MODE", "SECURE", "", "WDK for Windows Vista"},
	{RealTime, "EVENT_TRACE_REAL_TIME_MODE", "REAL_TIME", "", "DDK for Windows 2000"},
	{DelayOpenFile, "EVENT_TRACE_DELAY_OPEN_FILE_MODE", "DELAY_OPEN_FILE", "", "DDK for Windows 2000"},
	{Buffering, "EVENT_TRACE_BUFFERING_MODE", "BUFFERING", "", "DDK for Windows 2000"},
	{PrivateLogger, "EVENT_TRACE_PRIVATE_LOGGER_MODE", "PRIVATE_LOGGER", "", "DDK for Windows 2000"},
	{AddHeader, "EVENT_TRACE_ADD_HEADER_MODE", "ADD_HEADER", "", "DDK for Windows 2000"},
	{KBytesForSize, "EVENT_TRACE_USE_KBYTES_FOR_SIZE", "KBYTES_FOR_SIZE", "", "WDK for Windows Vista"},
	{GlobalSequence, "EVENT_TRACE_USE_GLOBAL_SEQUENCE", "GLOBAL_SEQUENCE", "", "DDK for Windows XP"},
	{LocalSequence, "EVENT_TRACE_USE_LOCAL_SEQUENCE", "LOCAL_SEQUENCE", "", "DDK for Windows XP"},
	{Relog, "EVENT_TRACE_RELOG_MODE", "RELOG", "", "DDK for Windows XP"},
	{PrivateInProc, "EVENT_TRACE_PRIVATE_IN_PROC", "PRIVATE_IN_PROC", "", "WDK for Windows Vista"},
	{BufferInterface, "EVENT_TRACE_BUFFER_INTERFACE_MODE", "BUFFER_INTERFACE", "", "Enterprise WDK for 1511"},
	{KDFilter, "EVENT_TRACE_KD_FILTER_MODE", "KD_FILTER", "", "Enterprise WDK for 1511"},
	{RealtimeRelog, "EVENT_TRACE_REALTIME_RELOG_MODE", "REALTIME_RELOG", "EVENT_TRACE_MODE_RESERVED", "WDK for Windows Vista (as EVENT_TRACE_MODE_RESERVED)"},
	{LostEventsDebug, "EVENT_TRACE_LOST_EVENTS_DEBUG_MODE", "LOST_EVENTS_DEBUG", "", "Enterprise WDK for 1511"},
	{StopOnHybrid, "EVENT_TRACE_STOP_ON_HYBRID_SHUTDOWN", "STOP_ON_HYBRID_SHUTDOWN", "", "WDK for Windows 8"},
	{PersistOnHybrid, "EVENT_TRACE_PERSIST_ON_HYBRID_SHUTDOWN", "PERSIST_ON_HYBRID_SHUTDOWN", "", "WDK for Windows 8"},
	{PagedMemory, "EVENT_TRACE_USE_PAGED_MEMORY", "PAGED_MEMORY", "", "DDK for Windows XP"},
	{SystemLogger, "EVENT_TRACE_SYSTEM_LOGGER_MODE", "SYSTEM_LOGGER", "", "WDK for Windows 8"},
	{Compressed, "EVENT_TRACE_COMPRESSED_MODE", "COMPRESSED", "", "WDK for 1607"},
	{IndependentSession, "EVENT_TRACE_INDEPENDENT_SESSION_MODE", "INDEPENDENT_SESSION", "", "WDK for Windows 8.1"},
	{NoPerProcessorBufs, "EVENT_TRACE_NO_PER_PROCESSOR_BUFFERING", "NO_PER_PROCESSOR_BUFFERING", "", "WDK for Windows 7"},
	{Blocking, "EVENT_TRACE_BLOCKING_MODE", "BLOCKING", "", "Enterprise WDK for 1511"},
	{Unused40000000, "", "", "", "apparently unused"},
	{AddToTriageDump, "EVENT_TRACE_ADDTO_TRIAGE_DUMP", "ADDTO_TRIAGE_DUMP", "", "WDK for Windows 8"},
}

// Name returns the Windows name of one bit, or its hex value for a bit without a name.
func Name(bit Mode) string {
	if bits.OnesCount32(uint32(bit)) == 1 {
		if n := names[bits.TrailingZeros32(uint32(bit))].name; n != "" {
			return n
		}
	}
	return fmt.Sprintf("0x%08X", uint32(bit))
}

// ShortName returns the command line's short name of one bit (SEQUENTIAL, REAL_TIME, ...),
// or its hex value.
func ShortName(bit Mode) string {
	if bits.OnesCount32(uint32(bit)) == 1 {
		if n := names[bits.TrailingZeros32(uint32(bit))].short; n != "" {
			return n
		}
	}
	return fmt.Sprintf("0x%08X", uint32(bit))
}

// Bits returns the set bits of m, lowest first.
func (m Mode) Bits() []Mode {
	var out []Mode
	for r := uint32(m); r != 0; r &= r - 1 {
		out = append(out, Mode(1)<<bits.TrailingZeros32(r))
	}
	return out
}

// String lists the bits of m by their Windows names joined with "|";
// EVENT_TRACE_FILE_MODE_NONE for no bits.
func (m Mode) String() string { return m.join(Name, "|") }

// Short lists the bits of m by their short names joined with ",", or "NONE".
func (m Mode) Short() string { return m.join(ShortName, ",") }

func (m Mode) join(name func(Mode) string, sep string) string {
	if m == 0 {
		if sep == "|" {
			return "EVENT_TRACE_FILE_MODE_NONE"
		}
		return "NONE"
	}
	var parts []string
	for _, b := range m.Bits() {
		parts = append(parts, name(b))
	}
	return strings.Join(parts, sep)
}

// Has reports whether every bit of f is set in m.
func (m Mode) Has(f Mode) bool { return m&f == f }

// Parse reads a LogFileMode written as flags separated by "," or "|": each a Windows name
// (EVENT_TRACE_FILE_MODE_SEQUENTIAL), the name without its EVENT_TRACE_ prefix
// (FILE_MODE_SEQUENTIAL, REAL_TIME_MODE), a short name (SEQUENTIAL, REAL_TIME), or a
// number (0x101, 257). Case does not matter. NONE and the empty string are 0.
func Parse(s string) (Mode, error) {
	var m Mode
	fields := strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == '|' || r == ' ' })
	if len(fields) == 0 && strings.TrimSpace(s) != "" {
		return 0, fmt.Errorf("%s names no LogFileMode flag, only separators", quote.Short(s))
	}
	for _, f := range fields {
		b, err := parseOne(f)
		if err != nil {
			return 0, err
		}
		m |= b
	}
	return m, nil
}

func parseOne(f string) (Mode, error) {
	u := strings.ToUpper(f)
	if u == "NONE" || u == "EVENT_TRACE_FILE_MODE_NONE" || u == "FILE_MODE_NONE" {
		return 0, nil
	}
	if v, err := strconv.ParseUint(f, 0, 32); err == nil {
		return Mode(v), nil
	}
	for _, n := range names {
		if n.name == "" {
			continue
		}
		full := strings.TrimPrefix(n.name, "EVENT_TRACE_")
		switch u {
		case n.name, n.short, full, n.alias, strings.TrimPrefix(n.alias, "EVENT_TRACE_"),
			strings.TrimSuffix(full, "_MODE"), strings.TrimPrefix(full, "FILE_MODE_"), strings.TrimPrefix(full, "USE_"):
			return n.bit, nil
		}
	}
	return 0, fmt.Errorf("%s is not a LogFileMode flag (try a Windows name such as EVENT_TRACE_REAL_TIME_MODE, a short name such as REAL_TIME, or hex such as 0x100)", quote.Short(f))
}
