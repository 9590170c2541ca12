package session

import (
	"strings"

	"github.com/etwemu/etwemu/winver"
)

// LogFileMode flags (evntrace.h Logging Mode Constants; ntwmi.h for internal ones).
const (
	ModeFileSequential        = 0x00000001 // EVENT_TRACE_FILE_MODE_SEQUENTIAL
	ModeFileCircular          = 0x00000002 // EVENT_TRACE_FILE_MODE_CIRCULAR
	ModeFileAppend            = 0x00000004 // EVENT_TRACE_FILE_MODE_APPEND
	ModeFileNewFile           = 0x00000008 // EVENT_TRACE_FILE_MODE_NEWFILE
	ModeUseMSFlushTimer       = 0x00000010 // EVENT_TRACE_USE_MS_FLUSH_TIMER
	ModeFilePreallocate       = 0x00000020 // EVENT_TRACE_FILE_MODE_PREALLOCATE
	ModeNonStoppable          = 0x00000040 // EVENT_TRACE_NONSTOPPABLE_MODE
	ModeSecure                = 0x00000080 // EVENT_TRACE_SECURE_MODE
	ModeRealTime              = 0x00000100 // EVENT_TRACE_REAL_TIME_MODE
	ModeDelayOpenFile         = 0x00000200 // EVENT_TRACE_DELAY_OPEN_FILE_MODE
	ModeBuffering             = 0x00000400 // EVENT_TRACE_BUFFERING_MODE
	ModePrivateLogger         = 0x00000800 // EVENT_TRACE_PRIVATE_LOGGER_MODE
	ModeAddHeader             = 0x00001000 // EVENT_TRACE_ADD_HEADER_MODE
	ModeUseKBytesForSize      = 0x00002000 // EVENT_TRACE_USE_KBYTES_FOR_SIZE
	ModeUseGlobalSequence     = 0x00004000 // EVENT_TRACE_USE_GLOBAL_SEQUENCE
	ModeUseLocalSequence      = 0x00008000 // EVENT_TRACE_USE_LOCAL_SEQUENCE
	ModeRelog                 = 0x00010000 // EVENT_TRACE_RELOG_MODE
	ModePrivateInProc         = 0x00020000 // EVENT_TRACE_PRIVATE_IN_PROC
	ModeBufferInterface       = 0x00040000 // EVENT_TRACE_BUFFER_INTERFACE_MODE
	ModeKDFilter              = 0x00080000 // EVENT_TRACE_KD_FILTER_MODE
	ModeRealtimeRelog         = 0x00100000 // EVENT_TRACE_REALTIME_RELOG_MODE (EVENT_TRACE_MODE_RESERVED in 6.0)
	ModeLostEventsDebug       = 0x00200000 // EVENT_TRACE_LOST_EVENTS_DEBUG_MODE
	ModeStopOnHybridShutdown  = 0x00400000 // EVENT_TRACE_STOP_ON_HYBRID_SHUTDOWN
	ModePersistOnHybridShut   = 0x00800000 // EVENT_TRACE_PERSIST_ON_HYBRID_SHUTDOWN
	ModeUsePagedMemory        = 0x01000000 // EVENT_TRACE_USE_PAGED_MEMORY
	ModeSystemLogger          = 0x02000000 // EVENT_TRACE_SYSTEM_LOGGER_MODE
	ModeCompressed            = 0x04000000 // EVENT_TRACE_COMPRESSED_MODE
	ModeIndependentSession    = 0x08000000 // EVENT_TRACE_INDEPENDENT_SESSION_MODE
	ModeNoPerProcessorBuffers = 0x10000000 // EVENT_TRACE_NO_PER_PROCESSOR_BUFFERING
	ModeBlocking              = 0x20000000 // EVENT_TRACE_BLOCKING_MODE
	ModeAddToTriageDump       = 0x80000000 // EVENT_TRACE_ADDTO_TRIAGE_DUMP
)

// modeRule says which versions of the kernel recognise a LogFileMode flag (seed 004's
// "Versions" column). A flag the version does not recognise is ignored by it. Flags with
// no kernel versions in the seed (PRIVATE_LOGGER, PRIVATE_IN_PROC, BLOCKING) belong to the
// user-mode logger and have an empty range here.
type modeRule struct {
	bit      uint32
	name     string
	versions winver.Range
}

var modeRules = []modeRule{
	{ModeFileSequential, "EVENT_TRACE_FILE_MODE_SEQUENTIAL", winver.Since(winver.V5_0)},
	{ModeFileCircular, "EVENT_TRACE_FILE_MODE_CIRCULAR", winver.Since(winver.V5_0)},
	{ModeFileAppend, "EVENT_TRACE_FILE_MODE_APPEND", winver.Since(winver.V5_1)},
	{ModeFileNewFile, "EVENT_TRACE_FILE_MODE_NEWFILE", winver.Since(winver.V5_1)},
	{ModeUseMSFlushTimer, "EVENT_TRACE_USE_MS_FLUSH_TIMER", winver.Since(winver.V6_1)},
	{ModeFilePreallocate, "EVENT_TRACE_FILE_MODE_PREALLOCATE", winver.Since(winver.V6_0)},
	{ModeNonStoppable, "EVENT_TRACE_NONSTOPPABLE_MODE", winver.Since(winver.V6_0)},
	{ModeSecure, "EVENT_TRACE_SECURE_MODE", winver.Since(winver.V6_0)},
	{ModeRealTime, "EVENT_TRACE_REAL_TIME_MODE", winver.Since(winver.V5_0)},
	{ModeDelayOpenFile, "EVENT_TRACE_DELAY_OPEN_FILE_MODE", winver.Since(winver.V5_0)},
	{ModeBuffering, "EVENT_TRACE_BUFFERING_MODE", winver.Since(winver.V6_0)},
	{ModePrivateLogger, "EVENT_TRACE_PRIVATE_LOGGER_MODE", winver.Range{}},
	{ModeAddHeader, "EVENT_TRACE_ADD_HEADER_MODE", winver.Only(winver.V6_0)},
	{ModeUseKBytesForSize, "EVENT_TRACE_USE_KBYTES_FOR_SIZE", winver.Since(winver.V6_0)},
	{ModeUseGlobalSequence, "EVENT_TRACE_USE_GLOBAL_SEQUENCE", winver.Since(winver.V5_1)},
	{ModeUseLocalSequence, "EVENT_TRACE_USE_LOCAL_SEQUENCE", winver.Since(winver.V5_1)},
	{ModeRelog, "EVENT_TRACE_RELOG_MODE", winver.Since(winver.V6_2)},
	{ModePrivateInProc, "EVENT_TRACE_PRIVATE_IN_PROC", winver.Range{}},
	{ModeBufferInterface, "EVENT_TRACE_BUFFER_INTERFACE_MODE", winver.Since(winver.V6_1)},
	{ModeKDFilter, "EVENT_TRACE_KD_FILTER_MODE", winver.Since(winver.V6_0)},
	{ModeRealtimeRelog, "EVENT_TRACE_REALTIME_RELOG_MODE", winver.Only(winver.V6_0)},
	{ModeLostEventsDebug, "EVENT_TRACE_LOST_EVENTS_DEBUG_MODE", winver.Since(winver.V6_2)},
	{ModeStopOnHybridShutdown, "EVENT_TRACE_STOP_ON_HYBRID_SHUTDOWN", winver.Since(winver.V6_2)},
	{ModePersistOnHybridShut, "EVENT_TRACE_PERSIST_ON_HYBRID_SHUTDOWN", winver.Since(winver.V6_2)},
	{ModeUsePagedMemory, "EVENT_TRACE_USE_PAGED_MEMORY", winver.Since(winver.V6_0)},
	{ModeSystemLogger, "EVENT_TRACE_SYSTEM_LOGGER_MODE", winver.Since(winver.V6_2)},
	{ModeCompressed, "EVENT_TRACE_COMPRESSED_MODE", winver.Since(winver.V6_2)},
	{ModeIndependentSession, "EVENT_TRACE_INDEPENDENT_SESSION_MODE", winver.Since(winver.V6_3)},
	{ModeNoPerProcessorBuffers, "EVENT_TRACE_NO_PER_PROCESSOR_BUFFERING", winver.Since(winver.V6_1)},
	{ModeBlocking, "EVENT_TRACE_BLOCKING_MODE", winver.Range{}},
	{ModeAddToTriageDump, "EVENT_TRACE_ADDTO_TRIAGE_DUMP", winver.Since(winver.V6_2)},
}

// ModeName returns the Windows name of one LogFileMode bit.
func ModeName(bit uint32) string {
	for _, r := range modeRules {
		if r.bit == bit {
			return r.name
		}
	}
	return "0x" + strings.ToUpper(hex32(bit))
}

// ModeString lists the bits of mode by their Windows names, joined with "|".
func ModeString(mode uint32) string {
	if mode == 0 {
		return "EVENT_TRACE_FILE_MODE_NONE"
	}
	var parts []string
	for bit := uint32(1); bit != 0; bit <<= 1 {
		if mode&bit != 0 {
			parts = append(parts, ModeName(bit))
		}
	}
	return strings.Join(parts, "|")
}

// recognised returns the bits of mode that kernel version v recognises.
func recognised(v winver.Version, mode uint32) uint32 {
	var out uint32
	for _, r := range modeRules {
		if mode&r.bit != 0 && r.versions.From != 0 && r.versions.Contains(v) {
			out |= r.bit
		}
	}
	return out
}

func hex32(v uint32) string {
	const digits = "0123456789abcdef"
	var b [8]byte
	for i := 7; i >= 0; i-- {
		b[i] = digits[v&0xF]
		v >>= 4
	}
	return string(b[:])
}
