package emu

import (
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/session"
)

// The kernel's read-only views. A user reads sessions, GUID entries and PMC support
// through them as ControlTrace(QUERY) and a kernel debugger read the structures; the
// kernel's state changes only through its control surface (StartTrace, ControlTrace,
// EnableTraceEx2, EventRegister, EventSetInformation, TraceSetInformation, writes).

// Session is a read-only view of a running session's logger context: the kernel's
// WMI_LOGGER_CONTEXT, or for a private logger NTDLL's ETW_UM_LOGGER_CONTEXT. It leaves out
// every member a caller could change the session with.
type Session struct {
	l *session.Logger // immutable
}

// ID is the LoggerId.
func (s *Session) ID() uint16 { return s.l.ID() }

// Instance is the logger instance the session's handle carries.
func (s *Session) Instance() uint32 { return s.l.Instance() }

// Name is the LoggerName.
func (s *Session) Name() string { return s.l.Name() }

// GUID is the session GUID (Wnode.Guid).
func (s *Session) GUID() guid.GUID { return s.l.GUID() }

// Mode is the effective LoggerMode.
func (s *Session) Mode() uint32 { return s.l.Mode() }

// Kind says whether the session is a kernel or a private logger.
func (s *Session) Kind() logmode.LoggerKind { return s.l.Kind() }

// SystemLoggerIndex is the session's system-logger slot, and whether it holds one (a
// kernel session with EVENT_TRACE_SYSTEM_LOGGER_MODE does; a private logger never).
func (s *Session) SystemLoggerIndex() (int, bool) { return s.l.SystemLoggerIndex() }

// Secure reports EVENT_TRACE_SECURE_MODE.
func (s *Session) Secure() bool { return s.l.Secure() }

// BufferSize is the buffer size in bytes.
func (s *Session) BufferSize() uint32 { return s.l.BufferSize() }

// MaxEventSize is the largest record the session accepts (MaximumEventSize).
func (s *Session) MaxEventSize() uint32 { return s.l.MaxEventSize() }

// Streams is the number of per-processor buffer streams (1 with
// EVENT_TRACE_NO_PER_PROCESSOR_BUFFERING).
func (s *Session) Streams() int { return s.l.Streams() }

// Collecting is CollectionOn.
func (s *Session) Collecting() bool { return s.l.Collecting() }

// Stats returns the session's counters.
func (s *Session) Stats() session.Stats { return s.l.Stats() }

// ReadStats sets *st to the session's counters, as Stats returns them, reusing the memory
// of st.BuffersPerStream: for a caller that reads them often, such as a harness after
// every write.
func (s *Session) ReadStats(st *session.Stats) { s.l.ReadStats(st) }

// Properties returns the session's settings and counters as QueryTrace reports them.
func (s *Session) Properties() session.Properties { return s.l.Properties() }

// Memory returns the bytes the session's buffers reserve and commit.
func (s *Session) Memory() (reserved, committed uint64) { return s.l.Memory() }

// ClockType is the session's clock (Wnode.ClientContext).
func (s *Session) ClockType() clock.Type { return s.l.Clock().Type() }

// ClockSource says what the session's clock reads on this machine (the time-stamp
// counter, a monotonic clock, a manual clock).
func (s *Session) ClockSource() string { return s.l.Clock().Source() }

// LogFileName is the file the session writes now ("" for none).
func (s *Session) LogFileName() string { return s.l.LogFileName() }

// FileErr is the error that stopped the session's file, if one did.
func (s *Session) FileErr() error { return s.l.FileErr() }

// CompressionRatio returns the bytes of buffers compressed and the bytes they took.
func (s *Session) CompressionRatio() (in, out int64) { return s.l.CompressionRatio() }

// Waiters is the number of writers waiting for a buffer (EVENT_TRACE_BLOCKING_MODE).
func (s *Session) Waiters() int { return s.l.Waiters() }

// Consumers is the number of real-time consumers attached.
func (s *Session) Consumers() int { return s.l.Consumers() }

// RealTimeBacklog returns the most buffers a REAL_TIME session keeps while no consumer is
// attached (Config.RealTimeBacklog, bounded by session.MaxRealTimeBacklogBytes), 0 for
// other sessions and for one whose Sink takes its buffers.
func (s *Session) RealTimeBacklog() int { return s.l.RealTimeBacklog() }

// SetHeld holds back or releases the logger of a session of a synchronous kernel (see
// session.Logger.SetHeld), a test hook: held, full buffers wait for it and writers can
// run out of buffers.
func (s *Session) SetHeld(on bool) { s.l.SetHeld(on) }

// SetSwitchHook arranges for fn to run once, in the next writer that switches one of
// the session's buffers, between taking a free buffer and installing it (see
// session.Logger.SetSwitchHook), a test hook: fn can write as a second thread would that
// found the same buffer full at that moment.
func (s *Session) SetSwitchHook(fn func()) { s.l.SetSwitchHook(fn) }

// Buffers returns a view of each of the session's buffers.
func (s *Session) Buffers() []session.BufferView { return s.l.Buffers() }

// CurrentBuffers returns, per processor stream, the id of its current buffer or -1.
func (s *Session) CurrentBuffers() []int { return s.l.CurrentBuffers() }

// Peek calls fn with a copy of each buffer's complete records, valid until fn returns
// (see session.Logger.Peek): a synchronous kernel only.
func (s *Session) Peek(fn func(v session.BufferView, data []byte)) error { return s.l.Peek(fn) }

// PMC returns the session's PMC support (ETW_PMC_SUPPORT), or nil before a counter
// list is set.
func (s *Session) PMC() *PMCSupport {
	if p := s.l.PMC(); p != nil {
		return &PMCSupport{p}
	}
	return nil
}

// PMCSupport is a read-only view of a session's ETW_PMC_SUPPORT: the counters and the
// hook ids TraceSetInformation set. It leaves out the setters.
type PMCSupport struct {
	s *pmc.Support // immutable
}

// Sources are the nominated profile sources.
func (p *PMCSupport) Sources() []pmc.ProfileSource {
	return append([]pmc.ProfileSource(nil), p.s.Sources()...)
}

// HookIDs are the system events that carry the counters.
func (p *PMCSupport) HookIDs() []uint16 { return p.s.HookIDs() }

// CountersCount is ETW_PMC_SUPPORT.CountersCount.
func (p *PMCSupport) CountersCount() int { return p.s.CountersCount() }

// Reads is how many times processor proc's counters were read into records: 0 for a
// processor the session does not have.
func (p *PMCSupport) Reads(proc int) uint64 { return p.s.Reads(proc) }

// SourceName names the counter source (synthetic, perf_event, ...).
func (p *PMCSupport) SourceName() string { return p.s.SourceName() }

// Layout is the ETW_PMC_SUPPORT layout of the emulated version.
func (p *PMCSupport) Layout() pmc.Layout { return p.s.Layout() }

// Image returns the structure's bytes as the emulated version lays it out for arch.
func (p *PMCSupport) Image(arch int) []byte { return p.s.Image(arch) }

// GuidEntry is a read-only view of an ETW_GUID_ENTRY: a provider's (or a provider
// group's) eight enable slots, their aggregate and its registrations. It leaves out the
// hash-bucket links and the lock.
type GuidEntry struct {
	e *guidtable.Entry // immutable
}

// EnableSlot is one TRACE_ENABLE_INFO as a slot of a GUID entry holds it.
type EnableSlot struct {
	IsEnabled       bool
	Level           uint8
	LoggerID        uint16
	EnableProperty  uint32
	MatchAnyKeyword uint64
	MatchAllKeyword uint64
	// Filter is a copy of the enable's filters (ETW_FILTER_HEADER's PID, EXECUTABLE_NAME
	// and EVENT_ID filters); nil for none.
	Filter *guidtable.Filter
}

func enableSlot(i *guidtable.EnableInfo) EnableSlot {
	return EnableSlot{IsEnabled: i.IsEnabled != 0, Level: i.Level, LoggerID: i.LoggerID, EnableProperty: i.EnableProperty,
		MatchAnyKeyword: i.MatchAnyKeyword, MatchAllKeyword: i.MatchAllKeyword, Filter: i.Filter.Clone()}
}

// GUID is the provider's (or group's) GUID.
func (g GuidEntry) GUID() guid.GUID { return g.e.GUID() }

// Type is EtwTraceGuidType or EtwGroupGuidType.
func (g GuidEntry) Type() guidtable.Type { return g.e.Type() }

// RefCount is the entry's reference count.
func (g GuidEntry) RefCount() int64 { return g.e.RefCount() }

// Mask has one bit per slot in use.
func (g GuidEntry) Mask() uint8 { return g.e.Mask() }

// Slot returns EnableInfo[i]; false for a slot no session holds, and for an i that is
// not one of the eight slots.
func (g GuidEntry) Slot(i int) (EnableSlot, bool) {
	if uint(i) >= guidtable.Slots {
		return EnableSlot{}, false
	}
	if s := g.e.Slot(i); s != nil {
		return enableSlot(s), true
	}
	return EnableSlot{}, false
}

// Provider returns ProviderEnableInfo, the aggregate of the slots.
func (g GuidEntry) Provider() EnableSlot {
	if p := g.e.Provider(); p != nil {
		return enableSlot(p)
	}
	return EnableSlot{}
}

// Registrations is how many registrations are on the entry's list.
func (g GuidEntry) Registrations() int { return len(g.e.Registrations()) }

// GuidEntries returns a view of every GUID entry of the kernel's table.
func (k *Kernel) GuidEntries() []GuidEntry {
	var out []GuidEntry
	if k.guids == nil { // a Kernel not made by New has no table
		return nil
	}
	for _, e := range k.guids.Entries() {
		out = append(out, GuidEntry{e})
	}
	return out
}

// GuidEntryCount returns how many GUID entries the kernel's table holds.
func (k *Kernel) GuidEntryCount() int {
	if k.guids == nil {
		return 0
	}
	return k.guids.Len()
}

// LookupGuidEntry returns the entry of provider g (a provider group's with group).
func (k *Kernel) LookupGuidEntry(g guid.GUID, group bool) (GuidEntry, bool) {
	typ := guidtable.TraceGuid
	if group {
		typ = guidtable.GroupGuid
	}
	if k.guids == nil {
		return GuidEntry{}, false
	}
	if e := k.guids.Lookup(g, typ); e != nil {
		return GuidEntry{e}, true
	}
	return GuidEntry{}, false
}
