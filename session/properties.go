package session

import (
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// Properties models EVENT_TRACE_PROPERTIES, what StartTrace takes and ControlTrace
// returns: the requested settings (adjusted in place by StartTrace, as Windows writes
// adjusted values back) and the session's statistics. Sizes are in KB as in Windows.
// Not modelled: Wnode.BufferSize and the name offsets, which a Go API does not need.
type Properties struct {
	BufferSize      uint32     // KB
	MinimumBuffers  uint32     // buffers allocated at start
	MaximumBuffers  uint32     // upper bound on buffers
	MaximumFileSize uint32     // MB (KB with EVENT_TRACE_USE_KBYTES_FOR_SIZE)
	LogFileMode     uint32     // EVENT_TRACE_* mode bits
	FlushTimer      uint32     // seconds (ms with EVENT_TRACE_USE_MS_FLUSH_TIMER); 0: one second for a real-time session, else no timed flush (Logger.FlushInterval)
	EnableFlags     uint32     // kernel (system provider) flags; recorded only
	FlushThreshold  uint32     // recorded; EVENT_TRACE_BUFFERING_MODE overrides it from 6.3
	ClockType       clock.Type // Wnode.ClientContext; 0 means QPC
	GUID            guid.GUID  // Wnode.Guid, the session GUID
	LogFileName     string     // recorded; log files come with the ETL writer
	// AutoLogger models the 0x00000002 bit of WMI_LOGGER_INFORMATION.Flags, which the
	// kernel sets for the sessions it starts from AutoLogger settings (the documented
	// StartTrace never sets it). EVENT_TRACE_NONSTOPPABLE_MODE requires it.
	AutoLogger bool

	// Sink receives sealed buffers. It is an emulator extension: nil means Discard.
	Sink Sink

	// Statistics, filled by StartTrace and ControlTrace.
	NumberOfBuffers     uint32
	FreeBuffers         uint32
	EventsLost          uint32
	BuffersWritten      uint32
	LogBuffersLost      uint32
	RealTimeBuffersLost uint32
	LoggerThreadID      uint64
}

// Buffer-size rules (Microsoft Learn, "EVENT_TRACE_PROPERTIES"; phnt MAX_ETW_BUFFER_SIZE): KB.
const (
	DefaultBufferSizeKB = 64 // used when BufferSize is 0 [emulator choice: Windows picks by memory size]
	MinBufferSizeKB     = 4  // documented minimum (the kernel itself accepts 1)
)

// maxBufferSizeKB is the largest BufferSize by version: 1 MB before Windows 8, 16 MB from 8.
var maxBufferSizeKB = winver.Steps[uint32]{
	{Since: winver.V5_0, Value: 1024},
	{Since: winver.V6_2, Value: 16 * 1024},
}

// MaxBufferMemory bounds a session's buffers (MaximumBuffers × BufferSize), standing in
// for the kernel's share of non-paged pool (TRACE_MAXIMUM_NP_POOL_USAGE).
const MaxBufferMemory = 1 << 30

// extraMaximumBuffers is what WRK adds to MinimumBuffers for a default MaximumBuffers
// (2 + 20).
const extraMaximumBuffers = 22

// Adjusted is what Adjust decided, beyond the fields it rewrote in Properties.
type Adjusted struct {
	Mode    uint32 // effective LoggerMode: recognised bits, implications added, overrides cleared
	Ignored uint32 // bits the version does not recognise
	Streams int    // per-processor buffer streams (1 with NO_PER_PROCESSOR_BUFFERING)
	// Kind is the logger's implementation: the kernel's, or a user-mode private logger's.
	Kind logmode.LoggerKind
	// PageBufferSize is a private logger's buffer size rounded up to whole pages, the unit
	// in which it reserves and commits buffer memory (Geoff Chappell,
	// "ETW_UM_LOGGER_CONTEXT"); 0 for kernel loggers.
	PageBufferSize uint32
	// Decision is the mode table's answer, with every rule that fired.
	Decision logmode.Decision
}

// PageSize is the page size private loggers round their buffers to (x86 and x64).
const PageSize = 4096

// Adjust validates p for a session named name on Windows version v with nproc processors,
// and rewrites it with the values the session will use, as StartTrace writes adjusted
// properties back. The LogFileMode goes through the version's mode table (logmode.Decide):
// a refusal is STATUS_INVALID_PARAMETER's Win32 form ERROR_INVALID_PARAMETER naming the
// flags and the version rule; an accepted mode comes back effective (unrecognised bits
// dropped, implied bits added, overridden bits and properties cleared). Then BufferSize
// goes into [4 KB, 1 MB or 16 MB], MinimumBuffers to at least two per processor (two in
// all with EVENT_TRACE_NO_PER_PROCESSOR_BUFFERING), MaximumBuffers to at least
// MinimumBuffers.
func Adjust(v winver.Version, nproc int, name string, p *Properties) (Adjusted, error) {
	var a Adjusted
	if p.ClockType == 0 {
		p.ClockType = clock.QPC
	}
	if !p.ClockType.Valid() {
		return a, winerr.New(winerr.ErrInvalidParameter, "clock type %d is not 1 (QPC), 2 (system time) or 3 (CPU cycles)", uint32(p.ClockType))
	}
	a.Decision = logmode.Decide(logmode.Request{
		Version: v, Mode: logmode.Mode(p.LogFileMode), Name: name, GUID: p.GUID,
		LogFileName: p.LogFileName, MaximumFileSize: p.MaximumFileSize,
		FlushTimer: p.FlushTimer, FlushThreshold: p.FlushThreshold, AutoLogger: p.AutoLogger,
	})
	d := &a.Decision
	a.Kind = d.Kind
	if d.Err != nil {
		return a, d.Err
	}
	a.Mode, a.Ignored = uint32(d.Effective), uint32(d.Ignored)
	p.LogFileMode, p.FlushTimer, p.FlushThreshold = a.Mode, d.FlushTimer, d.FlushThreshold

	maxKB := maxBufferSizeKB.At(v)
	switch {
	case p.BufferSize == 0:
		p.BufferSize = DefaultBufferSizeKB
	case p.BufferSize < MinBufferSizeKB:
		p.BufferSize = MinBufferSizeKB
	case p.BufferSize > maxKB:
		p.BufferSize = maxKB
	}
	if a.Kind == logmode.Private {
		a.PageBufferSize = (p.BufferSize*1024 + PageSize - 1) &^ (PageSize - 1)
	}

	a.Streams = max(nproc, 1)
	if a.Mode&logmode.NoPerProcessorBufs != 0 {
		a.Streams = 1
	}
	p.MinimumBuffers = max(p.MinimumBuffers, uint32(2*a.Streams))
	if p.MaximumBuffers == 0 {
		p.MaximumBuffers = p.MinimumBuffers + extraMaximumBuffers
	}
	p.MaximumBuffers = max(p.MaximumBuffers, p.MinimumBuffers)
	limit := uint32(MaxBufferMemory / (uint64(p.BufferSize) * 1024))
	if p.MinimumBuffers > limit {
		return a, winerr.New(winerr.ErrNoSystemResources, "%d minimum buffers of %d KB exceed the emulator's %d MB of buffer memory",
			p.MinimumBuffers, p.BufferSize, MaxBufferMemory>>20)
	}
	p.MaximumBuffers = min(p.MaximumBuffers, limit)
	return a, nil
}
