package session

import (
	"runtime"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/winver"
)

// MaxLoggers is the size of the kernel's logger table (MAXLOGGERS) from 5.1 on.
const MaxLoggers = 64

// MaxPrivateLoggers is how many private loggers one process may run (8 from 1703,
// Microsoft Learn, "Configuring and Starting a Private Logger Session"). They do not
// count against MaxLoggers; the emulator gives them the ids after the kernel's table.
const MaxPrivateLoggers = 8

// LoggerIDs is the number of logger ids: the kernel table's, then the private loggers'.
const LoggerIDs = MaxLoggers + MaxPrivateLoggers

// stream is one processor's current-buffer slot (ProcessorBuffers[cpu] in 5.2,
// ETW_SILO_TRACING_BLOCK.ProcessorBuffers[logger] later), alone on a 64-byte cache line,
// with the free buffer that processor takes next (spare). Exactly 64 bytes, so indexing
// the array is a shift rather than a multiply (BenchmarkWrite; TestStreamSize).
type stream struct {
	cur atomic.Pointer[Buffer] // atomic; installed by switching writers, swapped out by the logger
	// spare is a free buffer set aside for this stream's next switch, so that the writer
	// that fills a buffer finds the next one on its own cache line without taking freeMu.
	// Atomic; stored under freeMu by pushFree (when a buffer this stream filled comes back
	// from the sink, and only into an empty slot), taken by the switching writer with a
	// swap.
	// [emulator choice] Windows keeps one free list per logger (an SLIST); the spare is
	// what a per-processor lookaside in front of it would hold. Nil when the session has
	// none (BUFFERING and BLOCKING sessions take every buffer from the free list).
	spare atomic.Pointer[Buffer]
	_     [streamSize - 2*unsafe.Sizeof(uintptr(0))]byte // the two pointers are 4 bytes on 32-bit systems
}

// streamSize is the cache-line size of the processors the emulator runs on (64 bytes on
// x86 and most ARM64 cores).
const streamSize = 64

// Config is what a kernel passes to Start: identity, version, processors, clock and the
// already adjusted properties.
type Config struct {
	Version    winver.Version
	ID         uint16 // LoggerId, the slot in the logger table
	Instance   uint32 // distinguishes loggers that reuse an id
	Name       string
	Processors int
	Clock      *clock.Clock
	Props      Properties // adjusted by Adjust
	Adjusted   Adjusted
	// SystemLoggerIndex is the session's slot among the system loggers
	// (WMI_LOGGER_CONTEXT.Flags.SystemLoggerIndex), or -1: a kernel logger with
	// EVENT_TRACE_SYSTEM_LOGGER_MODE holds one, a private logger none.
	SystemLoggerIndex int
	// Permits, for an EVENT_TRACE_SECURE_MODE session, are the providers allowed to log
	// to it at start; see SetPermits.
	Permits Permits
	// FileSystem is where the log file is written; nil means the operating system's.
	FileSystem etl.FileSystem
	// ProcessID is the emulated process id written into the log-file header event.
	ProcessID uint32
	// RealTimeBacklog bounds the buffers a REAL_TIME session keeps while no consumer is
	// attached (DefaultRealTimeBacklog when 0).
	RealTimeBacklog int
	// Synchronous makes the session deterministic, for fuzzing and replayable tests: no
	// logger goroutine runs; the writer that fills a buffer seals it and hands it to the
	// sink before its Write returns; Flush and Stop do their work on the caller; FlushTimer
	// and the housekeeping tick are not acted on. Windows has no such mode. The Sink then
	// runs holding the session's logger work: it must not write to, flush, stop or check
	// its own session, which would wait for itself.
	Synchronous bool
}

// Logger is the emulator's model of WMI_LOGGER_CONTEXT, one tracing session. It keeps the
// members the buffer manager needs: LoggerId, name, LoggerMode, BufferSize,
// Minimum/Maximum/NumberOfBuffers, BuffersAvailable, the free and flush lists, the
// per-processor current buffers and the loss counters. A private logger (Kind Private)
// stands for ETW_UM_LOGGER_CONTEXT, the user-mode logger Geoff Chappell describes in
// "ETW_UM_LOGGER_CONTEXT", which keeps the same members in its own order, reserves
// page-rounded buffer memory for MaximumBuffers and commits it as buffers are needed. The
// log file is an etl.Writer in place of the file handle; real-time consumers attach through
// Consume. Not modelled: stack tracing, DELAY_OPEN_FILE_MODE's late open, security
// descriptors beyond the SECURE_MODE permission set.
type Logger struct {
	// Immutable after Start.
	version    winver.Version
	id         uint16
	instance   uint32
	name       string
	mode       uint32
	kind       logmode.LoggerKind
	pageBuf    uint32 // private loggers: buffer size rounded up to pages; 0 for kernel loggers
	sysIndex   int    // system-logger slot, or -1 (SystemLoggerIndex)
	secure     bool   // EVENT_TRACE_SECURE_MODE: Write checks permits
	bufSize    uint32 // bytes
	maxRecord  uint32 // largest aligned record: BufferSize - 0x48
	minBuffers uint32
	clock      *clock.Clock
	tsc        bool     // clock.ReadsTSC: Write reads the counter inline
	streams    []stream // one per processor, or one with EVENT_TRACE_NO_PER_PROCESSOR_BUFFERING
	// pmcData is PmcData, the PMC configuration (ETW_PMC_SUPPORT) once counters are set:
	// beside the fields Write reads, so its check shares their cache line. Atomic
	// pointer; stored once by the kernel under its control lock (SetPMC), loaded by
	// every writer.
	pmcData   atomic.Pointer[pmc.Support]
	sink      Sink
	props     Properties // settings as adjusted at start
	startTime int64      // FILETIME at start (ETW_REF_CLOCK.StartTime)
	startPerf int64      // session clock at start (ETW_REF_CLOCK.StartPerfClock)
	threadID  uint64     // synthetic LoggerThreadId
	bufferID  uint16     // LoggerId as written in buffers (0xFFFF for logger 0)
	nproc     int        // emulated processors (Config.Processors)
	pid       uint32     // emulated process id (Config.ProcessID), for log-file headers

	maxBuffers atomic.Uint32 // MaximumBuffers; written by Update under the kernel's control lock
	flushTimer atomic.Uint32 // FlushTimer; same
	// permits is the SECURE_MODE permission set. Atomic pointer to an immutable map;
	// replaced by SetPermits (the kernel, under its control lock), read by writers.
	permits atomic.Pointer[Permits]
	// rtFull is set when a REAL_TIME session with no consumer has filled its backlog:
	// writers that need a new buffer are refused with ERROR_LOG_FILE_FULL. Atomic; set by
	// the logger goroutine (deliver), cleared by Consume.
	rtFull atomic.Bool
	// fileErr is the first log-file error. Atomic; stored by the logger goroutine.
	fileErr    atomic.Pointer[error]
	collecting atomic.Bool // CollectionOn; cleared once by Stop
	// slow counts writers inside the slow path (switching buffers or counting a loss), the
	// emulator's stand-in for the logger rundown reference the kernel's reserve helpers
	// take. Atomic; writers add and drop, Stop waits for zero after clearing collecting.
	// The fast path does not touch it: a writer there holds a buffer reference instead.
	slow atomic.Int64

	// Counters. Atomic; EventsLost is added to by writers, the rest by the logger goroutine.
	eventsLost     atomic.Uint64
	eventsDenied   atomic.Uint64 // SECURE_MODE refusals; added to by writers (Deny)
	buffersWritten atomic.Uint64
	// EventsOverwritten and BuffersOverwritten count what a BUFFERING session's ring
	// recycled: not lost in Windows' terms, but no longer anywhere. Added to by the writer
	// that recycles, under freeMu.
	eventsOverwritten  atomic.Uint64
	buffersOverwritten atomic.Uint64
	logBuffersLost     atomic.Uint64
	logEventsLost      atomic.Uint64 // the events in the buffers logBuffersLost counts; both added to by whoever does the logger's work
	rtBuffersLost      atomic.Uint64
	rtEventsLost       atomic.Uint64 // the events in the buffers rtBuffersLost counts; both added to under rt.mu
	numberOfBuffers    atomic.Int64
	freeBuffers        atomic.Int64 // BuffersAvailable
	peakBuffers        atomic.Int64
	perStream          []atomic.Uint64 // buffers written per stream; logger goroutine writes
	// loggerWakeups counts the times a writer woke the logger goroutine (a send on wake
	// that was not folded into one already pending), or did its work in a synchronous
	// session. Atomic; added to by writers in signal.
	loggerWakeups atomic.Uint64
	// loggerBusy is the time the logger goroutine spent working (sealing, handing on and
	// recycling buffers, growing the free list) rather than waiting to be woken, and
	// outputTime the part of it spent handing sealed buffers to the real-time
	// consumers, the sink and the file. Nanoseconds; atomic, added to by the logger
	// goroutine (outputTime also by whoever flushes a synchronous session).
	loggerBusy, outputTime atomic.Int64
	// sinkCall numbers the logger goroutine's calls of a Sink of the user's, with bit 0
	// set while one runs; sinkThread is the OS thread that call is locked to, stored
	// before the bit is set. Together they tell a control call made from the Sink, which
	// would wait for the goroutine it runs on (CalledFromSink). Atomic; written by the
	// logger goroutine only (a synchronous session has none, and leaves them zero).
	sinkCall   atomic.Uint64
	sinkThread atomic.Uint64

	freeMu sync.Mutex
	free   []*Buffer // FreeList (LIFO); protected by freeMu
	flushQ []*Buffer // FlushList (FIFO); protected by freeMu
	all    []*Buffer // GlobalList; protected by freeMu
	// shortage says that a writer found no free buffer and woke the logger goroutine,
	// which has not yet topped up. Atomic: set by writers (noteShortage), cleared by the
	// logger in grow, under freeMu. While it is set, writers refused a buffer count
	// their loss, yield, and return without taking freeMu or waking the logger again.
	shortage atomic.Bool

	// drainQ is the batch the logger is sealing, and drained how many of it are done:
	// buffers drainQ[drained:] are in flight, on no list (for Check). Protected by freeMu.
	// Once drained, its array is flushQ's at the next drain, so writers' appends reuse it.
	drainQ  []*Buffer
	drained int

	seq int64 // next buffer SequenceNumber; owned by the logger goroutine (or syncMu)

	file *etl.Writer // the log file, or nil; owned by the logger goroutine (or syncMu)
	rt   *realtime   // REAL_TIME delivery, or nil; immutable pointer
	// buffering is EVENT_TRACE_BUFFERING_MODE: full buffers stay on the flush list as a
	// ring until a snapshot, and a writer short of buffers recycles the oldest. Immutable.
	buffering bool
	// blocking is EVENT_TRACE_BLOCKING_MODE on a private logger: a writer short of buffers
	// waits on freed (with freeMu) instead of losing its event. Immutable.
	blocking bool
	// spares: full buffers come back to their stream's spare slot when it is empty
	// (stream.spare); off for BUFFERING (the ring is the flush list) and BLOCKING (a
	// waiting writer can take only from the free list). Immutable.
	spares  bool
	freed   *sync.Cond   // broadcast under freeMu when a buffer is freed or collection stops
	waiters atomic.Int64 // writers waiting in waitFree; atomic
	// wakeAt is how many full buffers wait before a writer wakes the logger: FlushThreshold
	// when set, else flushBatch. Immutable.
	wakeAt int

	// synchronous is Config.Synchronous; immutable. syncMu then stands in for the logger
	// goroutine: whoever does the logger's work holds it.
	synchronous bool
	syncMu      sync.Mutex
	// held is the test hook SetHeld: a synchronous session's logger work is put off.
	// Atomic; set by the caller driving the session.
	held atomic.Bool
	// switchHook is the test hook SetSwitchHook: run once by the next writer that
	// switches a buffer, between taking it and installing it. Atomic; set by the caller
	// driving the session, taken (swapped to nil) by that writer.
	switchHook atomic.Pointer[func()]

	wake chan struct{} // capacity 1; writers signal full buffers and shortages
	reqs chan request
	done chan struct{} // closed when the logger goroutine exits
}

// Start creates the logger context, opens its log file (writing the header buffer),
// allocates MinimumBuffers buffers, hands one to each processor stream (as the 5.2 kernel
// does) and starts the logger goroutine. It fails only when the log file cannot be
// created; the error carries the Windows code.
func Start(cfg Config) (*Logger, error) {
	p := cfg.Props
	l := &Logger{
		version: cfg.Version, id: cfg.ID, instance: cfg.Instance, name: cfg.Name,
		mode: p.LogFileMode, kind: cfg.Adjusted.Kind, pageBuf: cfg.Adjusted.PageBufferSize,
		sysIndex: cfg.SystemLoggerIndex, secure: p.LogFileMode&logmode.Secure != 0, bufSize: p.BufferSize * 1024, minBuffers: p.MinimumBuffers,
		clock: cfg.Clock, tsc: cfg.Clock.ReadsTSC(), streams: make([]stream, cfg.Adjusted.Streams),
		sink: p.Sink, props: p,
		startTime: clock.FileTime(time.Now()), threadID: 0x1000 + 4*uint64(cfg.ID),
		bufferID: cfg.ID, perStream: make([]atomic.Uint64, cfg.Adjusted.Streams),
		wake: make(chan struct{}, 1), reqs: make(chan request), done: make(chan struct{}),
		synchronous: cfg.Synchronous, nproc: cfg.Processors, pid: cfg.ProcessID,
	}
	l.props.Sink = nil
	l.props.LogFileName = ""
	l.buffering = l.mode&logmode.Buffering != 0
	l.blocking = l.mode&logmode.Blocking != 0 && l.kind == logmode.Private
	l.spares = !l.buffering && !l.blocking
	l.freed = sync.NewCond(&l.freeMu)
	l.wakeAt = flushBatch
	if p.FlushThreshold > 0 {
		l.wakeAt = int(p.FlushThreshold)
	}
	if l.mode&logmode.RealTime != 0 {
		l.rt = &realtime{limit: cfg.RealTimeBacklog}
		if l.rt.limit <= 0 {
			l.rt.limit = DefaultRealTimeBacklog
		}
		l.rt.limit = min(l.rt.limit, max(1, MaxRealTimeBacklogBytes/int(l.bufSize)))
	}
	if cfg.ID == 0 {
		l.bufferID = abi.KernelLoggerBufferID
	}
	l.maxRecord = l.bufSize - abi.BufferHeaderSize
	l.startPerf = l.clock.Now()
	l.seq = 1 // a log file's header buffer is number 0
	if p.LogFileName != "" && !l.buffering {
		if err := l.openFile(&cfg); err != nil {
			return nil, err
		}
		l.props.LogFileName = l.file.Name()
	}
	if l.buffering {
		// BUFFERING ignores MaximumBuffers: the ring is MinimumBuffers.
		p.MaximumBuffers = p.MinimumBuffers
	}
	l.maxBuffers.Store(p.MaximumBuffers)
	l.SetPermits(cfg.Permits)
	l.flushTimer.Store(p.FlushTimer)
	l.allocate(int(p.MinimumBuffers))
	for i := range l.streams {
		b := l.popFree()
		b.open(i)
		l.streams[i].cur.Store(b)
	}
	l.collecting.Store(true)
	if !l.synchronous {
		go l.run()
	}
	return l, nil
}

// allocate adds up to n buffers to the free list, never past MaximumBuffers, and returns
// how many it added. Only Start and the logger goroutine call it (invariant 4).
func (l *Logger) allocate(n int) int {
	l.freeMu.Lock()
	defer l.freeMu.Unlock()
	room := int(l.maxBuffers.Load()) - len(l.all)
	n = min(n, room)
	for i := 0; i < n; i++ {
		b := newBuffer(l.bufSize, len(l.all))
		l.all = append(l.all, b)
		l.free = append(l.free, b)
	}
	if n > 0 {
		if l.blocking {
			l.freed.Broadcast()
		}
		l.numberOfBuffers.Store(int64(len(l.all)))
		l.freeBuffers.Store(int64(len(l.free)))
		l.peakBuffers.Store(max(l.peakBuffers.Load(), int64(len(l.all))))
	}
	return max(n, 0)
}

// ID returns the LoggerId.
func (l *Logger) ID() uint16 { return l.id }

// Instance returns the instance number that tells loggers reusing one id apart.
func (l *Logger) Instance() uint32 { return l.instance }

// Name returns the session name.
func (l *Logger) Name() string { return l.name }

// GUID returns the session GUID (Wnode.Guid, generated by StartTrace for GUID_NULL).
func (l *Logger) GUID() guid.GUID { return l.props.GUID }

// Mode returns the effective LoggerMode.
func (l *Logger) Mode() uint32 { return l.mode }

// Independent reports whether the session has EVENT_TRACE_INDEPENDENT_SESSION_MODE.
func (l *Logger) Independent() bool { return l.mode&logmode.IndependentSession != 0 }

// Kind returns whether the session is a kernel logger or a user-mode private logger.
func (l *Logger) Kind() logmode.LoggerKind { return l.kind }

// SystemLoggerIndex returns the session's system-logger slot, and whether it holds one:
// a kernel logger with EVENT_TRACE_SYSTEM_LOGGER_MODE does; a private logger, whose mode
// may hold the flag, does not (the slots are the kernel's).
func (l *Logger) SystemLoggerIndex() (int, bool) {
	return l.sysIndex, l.mode&logmode.SystemLogger != 0 && l.sysIndex >= 0
}

// NonStoppable reports whether the session has EVENT_TRACE_NONSTOPPABLE_MODE.
func (l *Logger) NonStoppable() bool { return l.mode&logmode.NonStoppable != 0 }

// Secure reports whether the session has EVENT_TRACE_SECURE_MODE.
func (l *Logger) Secure() bool { return l.secure }

// Permits is the set of providers allowed to log to a SECURE_MODE session: the
// emulator's stand-in for the TRACELOG_LOG_EVENT right in the session GUID's security
// descriptor, with provider GUIDs in place of the accounts Windows names (the emulator
// has one account).
type Permits map[guid.GUID]bool

// SetPermits replaces the session's permission set. The map must not change afterwards.
func (l *Logger) SetPermits(p Permits) { l.permits.Store(&p) }

// Permits reports whether provider g may log to the session: always, unless the session
// has EVENT_TRACE_SECURE_MODE.
func (l *Logger) Permits(g guid.GUID) bool {
	return !l.secure || (*l.permits.Load())[g]
}

// Memory returns the buffer memory the session holds: reserved and committed bytes. A
// private logger reserves page-rounded space for MaximumBuffers at start and commits it
// buffer by buffer (Geoff Chappell, "ETW_UM_LOGGER_CONTEXT"); a kernel logger allocates
// whole buffers, so both are what its buffers take.
func (l *Logger) Memory() (reserved, committed uint64) {
	n := uint64(l.numberOfBuffers.Load())
	if l.kind == logmode.Private {
		return uint64(l.maxBuffers.Load()) * uint64(l.pageBuf), n * uint64(l.pageBuf)
	}
	return n * uint64(l.bufSize), n * uint64(l.bufSize)
}

// BufferSize returns the buffer size in bytes.
func (l *Logger) BufferSize() uint32 { return l.bufSize }

// MaxEventSize returns the largest record, unaligned, that fits in a buffer.
func (l *Logger) MaxEventSize() uint32 { return l.maxRecord }

// Sink returns where the session's sealed buffers go.
func (l *Logger) Sink() Sink { return l.sink }

// Clock returns the session's clock.
func (l *Logger) Clock() *clock.Clock { return l.clock }

// Streams returns the number of processor streams (1 with NO_PER_PROCESSOR_BUFFERING).
func (l *Logger) Streams() int { return len(l.streams) }

// Collecting reports whether the session accepts events (CollectionOn).
func (l *Logger) Collecting() bool { return l.collecting.Load() }

// Stats is a snapshot of the session's counters, as ControlTrace query reports them.
type Stats struct {
	NumberOfBuffers int64
	FreeBuffers     int64
	PeakBuffers     int64
	EventsLost      uint64
	EventsDenied    uint64 // refused by SECURE_MODE (an emulator counter; Windows logs an event)
	BuffersWritten  uint64
	LogBuffersLost  uint64
	// LogEventsLost is the events (EVENT_HEADER records) in the buffers LogBuffersLost
	// counts: the log file's or the Sink's losses in events (an emulator counter; Windows
	// counts buffers), as RealTimeEventsLost is real-time delivery's. A full SEQUENTIAL
	// file costs every event written after it filled here.
	LogEventsLost       uint64
	RealTimeBuffersLost uint64
	// RealTimeEventsLost is the events (EVENT_HEADER records) in the buffers
	// RealTimeBuffersLost counts: real-time delivery's losses in events, as EventsLost
	// counts the writers' (an emulator counter; Windows counts buffers). With the events a
	// consumer was sent, its own counts and EventsLost, it accounts for every event
	// written.
	RealTimeEventsLost uint64
	BuffersPerStream   []uint64 // buffers written per processor stream
	// BUFFERING sessions: what the ring recycled (emulator counters; Windows counts
	// neither, since the ring is meant to forget).
	EventsOverwritten  uint64
	BuffersOverwritten uint64
	// LoggerWakeups is how many times writers woke the logger goroutine to seal full
	// buffers or find free ones (an emulator counter: the kernel's logger thread is
	// signalled on its semaphore at every buffer switch).
	LoggerWakeups uint64
	// LoggerBusy is how long the logger goroutine worked rather than waited, and
	// OutputTime the part of that spent handing buffers on (real-time delivery, the sink,
	// the file): emulator counters, for telling whether the one logger a session has
	// (as Windows has one logger thread a session), or its output, limits the rate.
	LoggerBusy, OutputTime time.Duration
}

// Stats returns the session's counters.
func (l *Logger) Stats() Stats {
	var s Stats
	l.ReadStats(&s)
	return s
}

// CalledFromSink reports whether the caller is the session's Sink, on the logger
// goroutine: a flush, stop or check of the session from there would wait for that
// goroutine, which waits for the Sink, for ever. A synchronous session always reports
// false: its Sink runs on whoever does the logger's work, holding it, and must not call
// its own session at all (see Config.Synchronous).
//
// The Sink runs with the logger goroutine locked to its thread, so a caller on that
// thread while that call runs (the same call before and after the caller read its
// thread) is the logger goroutine: no other goroutine runs there meanwhile.
func (l *Logger) CalledFromSink() bool {
	c := l.sinkCall.Load()
	if c&1 == 0 {
		return false
	}
	return threadID() == l.sinkThread.Load() && l.sinkCall.Load() == c
}

// toSink hands buf to the Sink. A Sink of the user's runs locked to the logger's thread
// and marked, for CalledFromSink: about a quarter of a microsecond a buffer, where a
// goroutine id, read once a session, cost ten in short sessions. The emulator's own
// Sinks, which call nothing back, are called as they are.
func (l *Logger) toSink(buf []byte) error {
	switch l.sink.(type) {
	case Discard, *Counter, *MemorySink:
		return l.sink.WriteBuffer(buf)
	}
	if l.synchronous {
		return l.sink.WriteBuffer(buf)
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	l.sinkThread.Store(threadID())
	c := l.sinkCall.Add(1) // odd: the call runs
	defer l.sinkCall.Store(c + 1)
	return l.sink.WriteBuffer(buf)
}

// ReadStats sets *s to the session's counters, as Stats returns them, reusing the memory
// of s.BuffersPerStream: for a caller that reads them often. A nil s is left alone.
func (l *Logger) ReadStats(s *Stats) {
	if s == nil {
		return
	}
	perStream := s.BuffersPerStream
	if cap(perStream) < len(l.perStream) {
		perStream = make([]uint64, len(l.perStream))
	}
	*s = Stats{
		NumberOfBuffers: l.numberOfBuffers.Load(), FreeBuffers: l.freeBuffers.Load() + int64(l.spareCount()),
		PeakBuffers: l.peakBuffers.Load(), EventsLost: l.eventsLost.Load(), EventsDenied: l.eventsDenied.Load(),
		BuffersWritten: l.buffersWritten.Load(), LogBuffersLost: l.logBuffersLost.Load(), LogEventsLost: l.logEventsLost.Load(),
		RealTimeBuffersLost: l.rtBuffersLost.Load(), RealTimeEventsLost: l.rtEventsLost.Load(), BuffersPerStream: perStream[:len(l.perStream)],
		EventsOverwritten: l.eventsOverwritten.Load(), BuffersOverwritten: l.buffersOverwritten.Load(),
		LoggerWakeups: l.loggerWakeups.Load(),
		LoggerBusy:    time.Duration(l.loggerBusy.Load()), OutputTime: time.Duration(l.outputTime.Load()),
	}
	for i := range l.perStream {
		s.BuffersPerStream[i] = l.perStream[i].Load()
	}
}

// Properties returns the session's settings as adjusted at start, with current counters,
// as ControlTrace query fills EVENT_TRACE_PROPERTIES.
func (l *Logger) Properties() Properties {
	p := l.props
	s := l.Stats()
	p.MaximumBuffers = l.maxBuffers.Load()
	p.FlushTimer = l.flushTimer.Load()
	p.NumberOfBuffers = uint32(s.NumberOfBuffers)
	p.FreeBuffers = uint32(s.FreeBuffers)
	p.EventsLost = uint32(s.EventsLost)
	p.BuffersWritten = uint32(s.BuffersWritten)
	p.LogBuffersLost = uint32(s.LogBuffersLost)
	p.RealTimeBuffersLost = uint32(s.RealTimeBuffersLost)
	p.LoggerThreadID = l.threadID
	return p
}

// SetMaximumBuffers changes MaximumBuffers (ControlTrace update). It never goes below the
// buffers already allocated nor past the buffer-memory limit; it returns the value set.
func (l *Logger) SetMaximumBuffers(n uint32) uint32 {
	limit := uint32(MaxBufferMemory / uint64(l.bufSize))
	if l.buffering {
		return l.maxBuffers.Load() // BUFFERING ignores MaximumBuffers
	}
	// Under freeMu, so that the logger cannot allocate past the new bound meanwhile.
	l.freeMu.Lock()
	defer l.freeMu.Unlock()
	n = min(max(n, uint32(len(l.all)), l.minBuffers), limit)
	l.maxBuffers.Store(n)
	return n
}

// SetFlushTimer changes FlushTimer (ControlTrace update).
func (l *Logger) SetFlushTimer(t uint32) { l.flushTimer.Store(t) }

// Buffers returns a snapshot of every buffer the session owns (the GlobalList).
func (l *Logger) Buffers() []BufferView {
	l.freeMu.Lock()
	all := append([]*Buffer(nil), l.all...)
	l.freeMu.Unlock()
	out := make([]BufferView, len(all))
	for i, b := range all {
		out[i] = b.View()
	}
	return out
}

// CurrentBuffers returns, per processor stream, the id of its current buffer or -1.
func (l *Logger) CurrentBuffers() []int {
	out := make([]int, len(l.streams))
	for i := range l.streams {
		out[i] = -1
		if b := l.streams[i].cur.Load(); b != nil {
			out[i] = b.id
		}
	}
	return out
}

// SetHeld holds back (on) or releases the logger of a synchronous session, a test hook
// for the fuzz harness: while held, buffers that leave their streams wait on the flush
// queue and the free list is not topped up, as when the logger thread is not scheduled,
// so writers can run out of buffers. Releasing does the logger's pending work at once.
// ControlTrace flush and stop still do their work on the caller. No effect on a session
// with a logger goroutine.
func (l *Logger) SetHeld(on bool) {
	if !l.synchronous {
		return
	}
	l.held.Store(on)
	if !on {
		l.service()
	}
}

// SetSwitchHook arranges for fn to run once, on the next writer that switches one of the
// session's buffers, after it has taken a free buffer and before it installs it in its
// stream: a test hook for the fuzz harness, which runs a second write there, as another
// thread would that found the same buffer full at that moment. The second writer
// switches first, so the first one's compare-and-swap fails and it retires the buffer it
// took (retire), a path only such a race reaches. nil clears the hook.
func (l *Logger) SetSwitchHook(fn func()) {
	if fn == nil {
		l.switchHook.Store(nil)
		return
	}
	l.switchHook.Store(&fn)
}
