package emu

import (
	"strconv"
	"strings"

	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/internal/quote"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
)

// Properties is EVENT_TRACE_PROPERTIES; see session.Properties.
type Properties = session.Properties

// TraceHandle is a TRACEHANDLE: the logger id in the low 16 bits (as the kernel's
// TRACE_ENABLE_CONTEXT carries it) and the logger's instance above, so a handle to a
// stopped session never reaches a later session that reuses its id.
type TraceHandle uint64

// LoggerID returns the logger id the handle names.
func (h TraceHandle) LoggerID() uint16 { return uint16(h) }

func handleOf(l *session.Logger) TraceHandle {
	return TraceHandle(uint64(l.Instance())<<16 | uint64(l.ID()))
}

// Well-known sessions (evntrace.h).
var (
	SystemTraceControlGUID = logmode.SystemTraceControlGUID // SystemTraceControlGuid
)

const (
	KernelLoggerName = logmode.KernelLoggerName // KERNEL_LOGGER_NAME, logger id 0
	GlobalLoggerName = "GlobalLogger"           // GLOBAL_LOGGER_NAME, logger id 1
)

// MaxSystemLoggers is how many kernel sessions may run with EVENT_TRACE_SYSTEM_LOGGER_MODE
// (ETW_SYSTEM_LOGGER_SETTINGS.EtwpSystemLogger[8]); private loggers take no slot.
const MaxSystemLoggers = 8

// The LogFileMode flags most sessions start with, so that a program needs no other
// package for them; package logmode has every flag and the rules StartTrace applies.
const (
	FileModeSequential = logmode.Sequential // EVENT_TRACE_FILE_MODE_SEQUENTIAL
	FileModeCircular   = logmode.Circular   // EVENT_TRACE_FILE_MODE_CIRCULAR
	RealTimeMode       = logmode.RealTime   // EVENT_TRACE_REAL_TIME_MODE
	BufferingMode      = logmode.Buffering  // EVENT_TRACE_BUFFERING_MODE
)

// MemorySink keeps every sealed buffer of a session in memory: a stand-in for a
// real-time consumer in tests and examples (see session.MemorySink). It grows with every
// buffer; a benchmark's session takes DiscardSink or CountingSink.
type MemorySink = session.MemorySink

// DiscardSink drops every sealed buffer, counted as written: a real-time consumer that
// costs nothing, for benchmarks of the write path.
type DiscardSink = session.Discard

// CountingSink keeps no bytes, only the buffers and events it was handed, and refuses a
// buffer whose records do not walk (see session.Counter): a consumer that reads every
// record, in bounded memory.
type CountingSink = session.Counter

// ControlCode is an EVENT_TRACE_CONTROL_* code for ControlTrace.
type ControlCode uint32

// EVENT_TRACE_CONTROL_* values.
const (
	ControlQuery             ControlCode = 0 // EVENT_TRACE_CONTROL_QUERY
	ControlStop              ControlCode = 1 // EVENT_TRACE_CONTROL_STOP
	ControlUpdate            ControlCode = 2 // EVENT_TRACE_CONTROL_UPDATE
	ControlFlush             ControlCode = 3 // EVENT_TRACE_CONTROL_FLUSH
	ControlIncrementFile     ControlCode = 4 // EVENT_TRACE_CONTROL_INCREMENT_FILE
	ControlConvertToRealtime ControlCode = 5 // EVENT_TRACE_CONTROL_CONVERT_TO_REALTIME
)

// StartTrace starts a session named name with the properties p, which it rewrites with
// the adjusted values the session uses, as Windows does: the effective LoggerMode of the
// version's mode table (package logmode), adjusted buffer counts and sizes, and a
// session GUID generated from the name when p.GUID is GUID_NULL.
//
// With EVENT_TRACE_PRIVATE_LOGGER_MODE the session is a private logger: a user-mode
// logger in the emulated process, with an id after the kernel's 64 that does not count
// against them ([emulator choice]: how Windows numbers private loggers is not public),
// page-rounded buffer memory, and the version's private-logger start rule
// (logmode.PrivateStartFor): before 1703 p.GUID names a registered provider and the
// process runs one private logger, or up to three with EVENT_TRACE_PRIVATE_IN_PROC, which
// needs no registered GUID; from 1703 eight, none registered first. A private logger
// refuses EVENT_TRACE_REAL_TIME_MODE ([MS-PLA]: no real-time delivery), and with
// EVENT_TRACE_SYSTEM_LOGGER_MODE takes none of the kernel's system-logger slots.
//
// Errors: ERROR_INVALID_PARAMETER for a bad name (logmode.CheckName), a nil p, a bad clock
// type or a LogFileMode the version refuses (the message names the flags and the version
// rule);
// ERROR_ALREADY_EXISTS when a session of that name (case-insensitive) or GUID runs;
// ERROR_NO_SYSTEM_RESOURCES when the logger table is full, 8 system loggers run, or the
// process has all the private loggers it may have; ERROR_WMI_GUID_NOT_FOUND for a private
// logger whose provider is not registered.
func (k *Kernel) StartTrace(name string, p *Properties) (TraceHandle, error) {
	if p == nil {
		return 0, winerr.New(winerr.ErrInvalidParameter, "StartTrace needs properties")
	}
	if err := logmode.CheckName(name, p.GUID); err != nil {
		return 0, err
	}
	isKernel := p.GUID == SystemTraceControlGUID
	adj := *p
	a, err := session.Adjust(k.version, k.nproc, name, &adj)
	if err != nil {
		return 0, err
	}
	private := a.Kind == logmode.Private
	lower := lowerName(name)
	if adj.GUID.IsZero() && !private {
		adj.GUID = guid.FromName("etwemu session " + lower)
	}

	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed {
		return 0, winerr.New(winerr.ErrInvalidHandle, "the emulated kernel is closed")
	}
	if _, dup := k.names[lower]; dup {
		return 0, winerr.New(winerr.ErrAlreadyExists, "a session named %q is already running", name)
	}
	if !private {
		for i := range session.MaxLoggers {
			if l := k.loggers[i].Load(); l != nil && l.GUID() == adj.GUID {
				return 0, winerr.New(winerr.ErrAlreadyExists, "session %q already uses GUID %s", l.Name(), adj.GUID)
			}
		}
	}
	var id uint16
	if private {
		id, err = k.privateLoggerIDLocked(name, adj.GUID, adj.LogFileMode)
	} else {
		id, err = k.freeLoggerIDLocked(name, isKernel)
	}
	if err != nil {
		return 0, err
	}
	sysIndex := -1
	// [UNCERTAIN] What the user-mode logger does with EVENT_TRACE_SYSTEM_LOGGER_MODE is
	// not public. The eight system-logger slots are the kernel's
	// (ETW_SYSTEM_LOGGER_SETTINGS), and a private logger is not known to the kernel: it
	// takes no slot, so one process's private loggers cannot shut every kernel session out
	// of the mode.
	if adj.LogFileMode&logmode.SystemLogger != 0 && !private {
		if sysIndex = k.freeSystemLoggerLocked(); sysIndex < 0 {
			return 0, winerr.New(winerr.ErrNoSystemResources, "%d system loggers (EVENT_TRACE_SYSTEM_LOGGER_MODE) already run", MaxSystemLoggers)
		}
	}
	clk, err := k.clockFor(adj.ClockType)
	if err != nil {
		return 0, winerr.New(winerr.ErrInvalidParameter, "%v", err)
	}
	k.instances++
	l, err := session.Start(session.Config{
		Version: k.version, ID: id, Instance: k.instances, Name: name, Processors: k.nproc,
		Clock: clk, Props: adj, Adjusted: a, Synchronous: k.sync,
		SystemLoggerIndex: sysIndex, Permits: k.permits[adj.GUID],
		FileSystem: k.files, ProcessID: k.pid, RealTimeBacklog: k.rtBacklog,
	})
	if err != nil {
		k.instances--
		return 0, err
	}
	if sysIndex >= 0 {
		k.sysLoggers[sysIndex] = l
	}
	k.loggers[id].Store(l)
	k.names[lower] = id
	sink := p.Sink
	*p = l.Properties()
	p.Sink = sink
	return handleOf(l), nil
}

// privateLoggerIDLocked picks a private logger's id, after the kernel's table, once the
// version's private-logger start rule (logmode.PrivateStartFor: the provider's
// registration, the process's limit) allows it.
// Preconditions: k.mu is held.
func (k *Kernel) privateLoggerIDLocked(name string, provider guid.GUID, mode uint32) (uint16, error) {
	rule := logmode.PrivateStartFor(k.version, logmode.Mode(mode))
	if rule.Registered {
		e := k.guids.Lookup(provider, guidtable.TraceGuid)
		if e == nil || len(e.Registrations()) == 0 {
			// [UNCERTAIN] the documentation says the provider "must have already registered
			// the GUID" without naming the error; the emulator answers as for an unknown GUID.
			return 0, winerr.New(winerr.ErrWMIGuidNotFound, "private logger %q: Wnode.Guid %s is not a registered provider (Windows %s, %s)", name, provider, k.version, rule)
		}
	}
	limit, used := rule.PerProcess, 0
	free := -1
	for id := session.MaxLoggers; id < session.LoggerIDs; id++ {
		if k.loggers[id].Load() != nil || k.stopping[uint16(id)] {
			used++
		} else if free < 0 {
			free = id
		}
	}
	if used >= limit || free < 0 {
		return 0, winerr.New(winerr.ErrNoSystemResources, "the process already runs %d private logger(s) (Windows %s, %s)", used, k.version, rule)
	}
	return uint16(free), nil
}

// freeSystemLoggerLocked returns a free system-logger slot, or -1.
// Preconditions: k.mu is held.
func (k *Kernel) freeSystemLoggerLocked() int {
	for i, l := range k.sysLoggers {
		if l == nil {
			return i
		}
	}
	return -1
}

// freeLoggerIDLocked picks the logger id: 0 for the NT Kernel Logger, 1 for the Global
// Logger, else the first free id from 2.
// Preconditions: k.mu is held.
func (k *Kernel) freeLoggerIDLocked(name string, isKernel bool) (uint16, error) {
	limit := maxLoggers.At(k.version)
	reserved := func(id int) (uint16, error) {
		if k.loggers[id].Load() != nil || k.stopping[uint16(id)] {
			return 0, winerr.New(winerr.ErrAlreadyExists, "logger id %d (%s) is in use", id, name)
		}
		return uint16(id), nil
	}
	switch {
	case isKernel || strings.EqualFold(name, KernelLoggerName):
		return reserved(0)
	case strings.EqualFold(name, GlobalLoggerName):
		return reserved(1)
	}
	for id := 2; id < limit; id++ {
		if k.loggers[id].Load() == nil && !k.stopping[uint16(id)] {
			return uint16(id), nil
		}
	}
	return 0, winerr.New(winerr.ErrNoSystemResources, "all %d logger slots of Windows %s are in use", limit, k.version)
}

func (k *Kernel) clockFor(t clock.Type) (*clock.Clock, error) {
	if k.manual != nil {
		return clock.NewManual(t, k.manual, k.freq), nil
	}
	return clock.New(t)
}

// byHandle returns the running session with handle h, or nil. It takes no lock.
func (k *Kernel) byHandle(h TraceHandle) *session.Logger {
	l := k.loggers[h.LoggerID()%session.LoggerIDs].Load()
	if l == nil || handleOf(l) != h {
		return nil
	}
	return l
}

// lookup finds a running session by handle, or by name when the handle is 0.
func (k *Kernel) lookup(h TraceHandle, name string) (*session.Logger, error) {
	if h == 0 && name == "" {
		return nil, winerr.New(winerr.ErrInvalidParameter, "neither a trace handle nor a session name was given")
	}
	if h != 0 {
		l := k.byHandle(h)
		if l == nil { // written out, not formatted: calls on a stopped session's handle are common
			return nil, winerr.Because(winerr.ErrWMIInstanceNotFound, "no running session has handle 0x"+strconv.FormatUint(uint64(h), 16))
		}
		return l, nil
	}
	k.mu.Lock()
	id, ok := k.names[lowerName(name)]
	k.mu.Unlock()
	if !ok {
		return nil, winerr.New(winerr.ErrWMIInstanceNotFound, "no session named %s is running", quote.Short(name))
	}
	if l := k.loggers[id].Load(); l != nil {
		return l, nil
	}
	return nil, winerr.New(winerr.ErrWMIInstanceNotFound, "session %s is stopping", quote.Short(name))
}

// ControlTrace queries, stops, updates or flushes a session found by handle (or by name
// when h is 0), and fills p (if not nil) with its properties and counters.
//
// Update changes MaximumBuffers and FlushTimer when they are non-zero. The other changes
// Windows' UpdateTrace makes, a new LogFileName (switching files, or writing a
// BUFFERING session's ring to a file) and REAL_TIME turned on or off in LogFileMode, are
// not emulated: they are refused with ERROR_NOT_SUPPORTED rather than ignored, while the
// session's own name and mode (as a query returned them) pass. Flush returns when
// the flushed buffers have reached the sink. Stop disables the session for every provider
// (their callbacks run), writes everything accepted and returns the final counters.
//
// Errors: ERROR_WMI_INSTANCE_NOT_FOUND when no such session runs; ERROR_ACTIVE_CONNECTIONS
// when another stop of it is in progress; ERROR_ACCESS_DENIED to stop an
// EVENT_TRACE_NONSTOPPABLE_MODE session; ERROR_INVALID_PARAMETER for an unknown code;
// ERROR_INVALID_PARAMETER for INCREMENT_FILE on a session without NEWFILE;
// ERROR_NOT_SUPPORTED for CONVERT_TO_REALTIME and for an update of the log file or mode;
// ERROR_POSSIBLE_DEADLOCK for a flush or stop called from the session's own Sink, which
// its logger goroutine is waiting for (an etwemu Sink; Windows has none).
func (k *Kernel) ControlTrace(h TraceHandle, name string, p *Properties, code ControlCode) error {
	l, err := k.lookup(h, name)
	if err != nil {
		if code == ControlStop && h != 0 {
			k.mu.Lock()
			busy := k.stopping[h.LoggerID()]
			k.mu.Unlock()
			if busy {
				return winerr.New(winerr.ErrActiveConnections, "session with handle %#x is already stopping", uint64(h))
			}
		}
		return err
	}
	if (code == ControlFlush || code == ControlStop) && l.CalledFromSink() {
		what := "EVENT_TRACE_CONTROL_FLUSH"
		if code == ControlStop {
			what = "EVENT_TRACE_CONTROL_STOP"
		}
		return winerr.New(winerr.ErrPossibleDeadlock, "%s of session %q called from its Sink: the session's logger goroutine, which would do it, is waiting for the Sink to return", what, l.Name())
	}
	switch code {
	case ControlQuery:
	case ControlFlush:
		l.Flush()
	case ControlUpdate:
		if err := updatable(l, p); err != nil {
			return err
		}
		if p != nil && p.MaximumBuffers != 0 {
			l.SetMaximumBuffers(p.MaximumBuffers)
		}
		if p != nil && p.FlushTimer != 0 {
			l.SetFlushTimer(p.FlushTimer)
		}
	case ControlStop:
		if l.NonStoppable() {
			// [UNCERTAIN] no public source names the code; a refusal to stop reads as a
			// denied access.
			return winerr.New(winerr.ErrAccessDenied, "session %q has EVENT_TRACE_NONSTOPPABLE_MODE and refuses to stop", l.Name())
		}
		if err := k.stop(l); err != nil {
			return err
		}
	case ControlIncrementFile:
		if l.Mode()&logmode.NewFile == 0 {
			return winerr.New(winerr.ErrInvalidParameter, "EVENT_TRACE_CONTROL_INCREMENT_FILE needs EVENT_TRACE_FILE_MODE_NEWFILE; session %q has mode %s", l.Name(), logmode.Mode(l.Mode()).Short())
		}
		if err := l.NextFile(); err != nil {
			return err
		}
	case ControlConvertToRealtime:
		return winerr.New(winerr.ErrNotSupported, "EVENT_TRACE_CONTROL_CONVERT_TO_REALTIME is not emulated")
	default:
		return winerr.New(winerr.ErrInvalidParameter, "unknown control code %d", code)
	}
	if p != nil {
		sink := p.Sink
		*p = l.Properties()
		p.Sink = sink
	}
	return nil
}

// stop takes l out of the logger table, disables it for every provider, then stops it.
func (k *Kernel) stop(l *session.Logger) error {
	k.mu.Lock()
	if k.loggers[l.ID()].Load() != l {
		k.mu.Unlock()
		return winerr.New(winerr.ErrActiveConnections, "session %q is already stopping", l.Name())
	}
	k.stopping[l.ID()] = true
	if i, ok := l.SystemLoggerIndex(); ok {
		k.sysLoggers[i] = nil
	}
	changes := k.guids.DisableLogger(l.ID())
	var regs []guidtable.Registration // whose entries held the session: theirs are the routes to it
	for _, c := range changes {
		regs = append(regs, c.Regs...)
	}
	k.rerouteLocked(regs...)
	k.loggers[l.ID()].Store(nil)
	delete(k.names, lowerName(l.Name()))
	for _, c := range changes {
		k.queueChangeLocked(c, changeDisable, guid.Null)
	}
	k.mu.Unlock()
	k.notify.run()

	l.Stop()

	k.mu.Lock()
	if s := l.PMC(); s != nil {
		s.Close() // writers are done: the counters go back to the HAL
	}
	delete(k.stopping, l.ID())
	k.mu.Unlock()
	return nil
}

// StopTrace is ControlTrace with EVENT_TRACE_CONTROL_STOP.
func (k *Kernel) StopTrace(h TraceHandle, name string, p *Properties) error {
	return k.ControlTrace(h, name, p, ControlStop)
}

// QueryTrace is ControlTrace with EVENT_TRACE_CONTROL_QUERY.
func (k *Kernel) QueryTrace(h TraceHandle, name string, p *Properties) error {
	return k.ControlTrace(h, name, p, ControlQuery)
}

// FlushTrace is ControlTrace with EVENT_TRACE_CONTROL_FLUSH.
func (k *Kernel) FlushTrace(h TraceHandle, name string, p *Properties) error {
	return k.ControlTrace(h, name, p, ControlFlush)
}

// Session returns a view of the running session with handle h; nil if none.
func (k *Kernel) Session(h TraceHandle) *Session {
	l, err := k.lookup(h, "")
	if err != nil {
		return nil
	}
	return &Session{l}
}

// Sessions returns a view of every running session, in logger-id order.
func (k *Kernel) Sessions() []*Session {
	var out []*Session
	for _, l := range k.running() {
		out = append(out, &Session{l})
	}
	return out
}

// running returns every running session's logger, in logger-id order.
func (k *Kernel) running() []*session.Logger {
	var out []*session.Logger
	for i := range k.loggers {
		if l := k.loggers[i].Load(); l != nil {
			out = append(out, l)
		}
	}
	return out
}

// GrantLogEvent allows provider to log to the EVENT_TRACE_SECURE_MODE sessions whose GUID
// is session, now and in sessions started later with that GUID: the emulator's form of
// granting TRACELOG_LOG_EVENT on the session GUID (EventAccessControl), with the provider
// GUID standing for the account.
func (k *Kernel) GrantLogEvent(session, provider guid.GUID) { k.setLogEvent(session, provider, true) }

// RevokeLogEvent takes back what GrantLogEvent gave.
func (k *Kernel) RevokeLogEvent(session, provider guid.GUID) { k.setLogEvent(session, provider, false) }

func (k *Kernel) setLogEvent(sg, provider guid.GUID, allow bool) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.permits == nil { // a Kernel not made by New
		k.permits = map[guid.GUID]session.Permits{}
	}
	next := session.Permits{}
	for g, ok := range k.permits[sg] {
		next[g] = ok
	}
	if allow {
		next[provider] = true
	} else {
		delete(next, provider)
	}
	k.permits[sg] = next
	for i := range k.loggers {
		if l := k.loggers[i].Load(); l != nil && l.GUID() == sg {
			l.SetPermits(next)
		}
	}
}

// updatable refuses the changes of an EVENT_TRACE_CONTROL_UPDATE that the emulator does
// not make: a LogFileName other than the session's file (Windows switches to it, or
// writes a BUFFERING ring there) and a LogFileMode whose REAL_TIME bit differs from the
// session's (Windows turns real-time delivery on or off; it changes no other bit).
// Leaving them out, or passing back what a query returned, changes nothing and passes.
func updatable(l *session.Logger, p *Properties) error {
	if p == nil {
		return nil
	}
	if p.LogFileName != "" && p.LogFileName != l.LogFileName() {
		return winerr.New(winerr.ErrNotSupported, "switching session %q to log file %q with EVENT_TRACE_CONTROL_UPDATE is not emulated; stop it and start it again with that LogFileName", l.Name(), p.LogFileName)
	}
	if p.LogFileMode != 0 && (p.LogFileMode^l.Mode())&logmode.RealTime != 0 {
		return winerr.New(winerr.ErrNotSupported, "turning EVENT_TRACE_REAL_TIME_MODE on or off in session %q (LogFileMode %s, asked %s) with EVENT_TRACE_CONTROL_UPDATE is not emulated", l.Name(), logmode.Mode(l.Mode()).Short(), logmode.Mode(p.LogFileMode).Short())
	}
	return nil
}
