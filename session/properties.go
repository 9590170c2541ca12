package session

import (
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/guid"
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
	FlushTimer      uint32     // seconds (ms with EVENT_TRACE_USE_MS_FLUSH_TIMER); 0: no timed flush
	EnableFlags     uint32     // kernel (system provider) flags; recorded only
	FlushThreshold  uint32     // recorded only
	ClockType       clock.Type // Wnode.ClientContext; 0 means QPC
	GUID            guid.GUID  // Wnode.Guid, the session GUID
	LogFileName     string     // recorded; log files come with the ETL writer

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

// Buffer-size rules (MSDOC EVENT_TRACE_PROPERTIES; phnt MAX_ETW_BUFFER_SIZE): KB.
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
	Mode    uint32 // effective LoggerMode: the recognised bits
	Ignored uint32 // bits the version does not recognise
	Streams int    // per-processor buffer streams (1 with NO_PER_PROCESSOR_BUFFERING)
}

// Adjust validates p for Windows version v and a machine of nproc processors and rewrites
// it with the values the session will use, as StartTrace writes adjusted properties back:
// BufferSize in [4 KB, 1 MB or 16 MB], MinimumBuffers at least two per processor (two in
// all with EVENT_TRACE_NO_PER_PROCESSOR_BUFFERING), MaximumBuffers at least MinimumBuffers.
// LogFileMode bits the version does not recognise are dropped.
//
// The full version-by-version LogFileMode rules come later; this rejects the combinations
// that would make the model inconsistent, with STATUS_INVALID_PARAMETER's Win32 form
// ERROR_INVALID_PARAMETER.
func Adjust(v winver.Version, nproc int, p *Properties) (Adjusted, error) {
	var a Adjusted
	if p.ClockType == 0 {
		p.ClockType = clock.QPC
	}
	if !p.ClockType.Valid() {
		return a, winerr.New(winerr.ErrInvalidParameter, "clock type %d is not 1 (QPC), 2 (system time) or 3 (CPU cycles)", uint32(p.ClockType))
	}
	if p.LogFileMode&(ModePrivateLogger|ModePrivateInProc) != 0 {
		return a, winerr.New(winerr.ErrNotSupported, "%s: user-mode private loggers are not emulated yet",
			ModeString(p.LogFileMode&(ModePrivateLogger|ModePrivateInProc)))
	}
	a.Mode = recognised(v, p.LogFileMode)
	a.Ignored = p.LogFileMode &^ a.Mode
	if err := checkModeConflicts(v, a.Mode); err != nil {
		return a, err
	}
	p.LogFileMode = a.Mode

	maxKB := maxBufferSizeKB.At(v)
	switch {
	case p.BufferSize == 0:
		p.BufferSize = DefaultBufferSizeKB
	case p.BufferSize < MinBufferSizeKB:
		p.BufferSize = MinBufferSizeKB
	case p.BufferSize > maxKB:
		p.BufferSize = maxKB
	}

	a.Streams = max(nproc, 1)
	if a.Mode&ModeNoPerProcessorBuffers != 0 {
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

// conflict is one invalid pair of LogFileMode bits and the versions that reject it
// (seed 004).
type conflict struct {
	a, b     uint32
	versions winver.Range
}

// conflicts lists the pairs this first cut rejects: those that would leave the emulated
// session with two incompatible ways of treating its buffers.
var conflicts = []conflict{
	{ModeFileSequential, ModeFileCircular, winver.Since(winver.V5_0)},
	{ModeFileCircular, ModeFileAppend, winver.Since(winver.V5_1)},
	{ModeFileCircular, ModeFileNewFile, winver.Since(winver.V5_1)},
	{ModeFileSequential, ModeBuffering, winver.Since(winver.V6_0)},
	{ModeFileCircular, ModeBuffering, winver.Since(winver.V6_0)},
	{ModeFileAppend, ModeBuffering, winver.Since(winver.V6_0)},
	{ModeFileNewFile, ModeBuffering, winver.Since(winver.V6_0)},
	{ModeUseGlobalSequence, ModeUseLocalSequence, winver.Since(winver.V5_1)},
}

func checkModeConflicts(v winver.Version, mode uint32) error {
	for _, c := range conflicts {
		if mode&c.a != 0 && mode&c.b != 0 && c.versions.Contains(v) {
			return winerr.New(winerr.ErrInvalidParameter, "%s is invalid with %s (%v)", ModeName(c.a), ModeName(c.b), c.versions)
		}
	}
	return nil
}
