package session

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/winerr"
)

// Where sealed buffers go (WmipFlushBuffer): to the real-time consumers of a REAL_TIME
// session, to its log file, and to the emulator's Sink, an in-process observer that sees
// every buffer. BUFFERING sessions send nothing anywhere until a snapshot.

// DefaultRealTimeBacklog is how many buffers a REAL_TIME session keeps for consumers
// while none is attached, standing in for the real-time backing file.
//
// Windows keeps a consumer-less real-time session's full buffers in a backing
// ("playback") file; once it is full, EventWrite fails with STATUS_LOG_FILE_FULL and
// "events are not logged to the session until a real-time consumer consumes the events
// from the playback file" (Microsoft Learn, "EventWrite function"), while a writer that
// finds no free buffer gets ERROR_NOT_ENOUGH_MEMORY (same page). The emulator keeps the
// two apart the same way (switchBuffer) but holds the backing file's buffers in memory:
// what a session and its writers observe (the codes, EventsLost, RealTimeBuffersLost,
// the backlog a late consumer receives) does not depend on where they wait.
// [UNCERTAIN] The file's bound: WMI_LOGGER_CONTEXT has a RealtimeMaximumFileSize, in
// bytes, whose value no public source gives; 64 buffers, whatever their size, is the
// emulator's choice.
const DefaultRealTimeBacklog = 64

// MaxRealTimeBacklogBytes bounds in bytes what a REAL_TIME session keeps while no
// consumer is attached: a session of large buffers keeps fewer of them than its backlog
// count (one at least), so that 64 buffers of 16 MB cannot hold a gigabyte beside the
// session's own buffers. Sessions of 1 MB buffers and less keep the whole count.
const MaxRealTimeBacklogBytes = 64 << 20

// DefaultConsumerBacklog is how many delivered buffers a consumer may have unprocessed
// before further buffers are dropped for it.
const DefaultConsumerBacklog = 16

// realtime is a REAL_TIME session's delivery state.
type realtime struct {
	mu        sync.Mutex
	consumers []*consumer // protected by mu
	backlog   [][]byte    // buffers held while no consumer is attached; protected by mu
	limit     int         // bound on backlog; immutable
	closed    bool        // the session stopped; protected by mu
}

// consumer is one attached real-time consumer (OpenTrace/ProcessTrace).
type consumer struct {
	ch   chan []byte   // bounded; sent to by the logger goroutine under realtime.mu, closed under realtime.mu at stop or Detach
	lost atomic.Uint64 // buffers dropped for this consumer alone; added to by the logger goroutine, atomic
	// lostEvents counts the EVENT_HEADER records in the buffers lost counts. Added to by
	// the logger goroutine, atomic.
	lostEvents atomic.Uint64
}

// deliver hands a sealed buffer to the consumers (WmipFlushBuffer's real-time step). A
// consumer whose backlog is full loses the buffer: its Attachment.BuffersLost counts it, and
// RealTimeBuffersLost counts it once however many consumers lost it (and
// RealTimeEventsLost its events). With no consumer
// attached and no Sink the buffer joins the session's backlog; once that is full, buffers
// are lost and writers are refused with ERROR_LOG_FILE_FULL until a consumer attaches
// (Microsoft Learn, "EventWrite": a real-time session without consumers buffers to a backing
// file, then refuses new events).
//
// [UNCERTAIN] Two things no public source settles: that a buffer the full backing file
// cannot take is counted in RealTimeBuffersLost (the emulator's reading: the counter counts
// the buffers real-time delivery lost), and that writers are refused only once they need a
// new buffer, so that events reserved in a buffer already in hand are lost with it here,
// counted in RealTimeBuffersLost but not in EventsLost.
func (l *Logger) deliver(buf []byte) {
	rt := l.rt
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if len(rt.consumers) == 0 {
		if l.sink != nil {
			return // the Sink is the consumer
		}
		if len(rt.backlog) < rt.limit {
			rt.backlog = append(rt.backlog, append([]byte(nil), buf...))
			return
		}
		l.rtBuffersLost.Add(1)
		l.rtEventsLost.Add(etl.EventsIn(buf))
		l.rtFull.Store(true)
		return
	}
	cp := append([]byte(nil), buf...)
	lost := false
	events := uint64(0) // the buffer's events, counted at its first loss
	for _, c := range rt.consumers {
		select {
		case c.ch <- cp:
		default:
			if !lost {
				events = etl.EventsIn(cp)
			}
			c.lost.Add(1)
			c.lostEvents.Add(events)
			lost = true
		}
	}
	if lost {
		l.rtBuffersLost.Add(1)
		l.rtEventsLost.Add(events)
	}
}

// Waiters returns how many writers of an EVENT_TRACE_BLOCKING_MODE session are waiting
// for the logger to free a buffer.
func (l *Logger) Waiters() int { return int(l.waiters.Load()) }

// RealTimeBacklog returns the most buffers the session keeps while no real-time consumer
// is attached (Config.RealTimeBacklog, bounded by MaxRealTimeBacklogBytes), or 0 for a
// session that is not REAL_TIME or whose Sink takes its buffers.
func (l *Logger) RealTimeBacklog() int {
	if l.rt == nil || l.sink != nil {
		return 0
	}
	return l.rt.limit
}

// Consumers returns how many real-time consumers are attached.
func (l *Logger) Consumers() int {
	if l.rt == nil {
		return 0
	}
	l.rt.mu.Lock()
	defer l.rt.mu.Unlock()
	return len(l.rt.consumers)
}

// closeRealtime ends delivery at stop: consumers finish what they hold, then return.
// The buffers held for a consumer that never attached are lost with the session, and
// counted in RealTimeBuffersLost (their events in RealTimeEventsLost): no consumer can
// open a stopped session.
func (l *Logger) closeRealtime() {
	if l.rt == nil {
		return
	}
	l.rt.mu.Lock()
	defer l.rt.mu.Unlock()
	l.rt.closed = true
	l.rtBuffersLost.Add(uint64(len(l.rt.backlog)))
	for _, buf := range l.rt.backlog {
		l.rtEventsLost.Add(etl.EventsIn(buf))
	}
	l.rt.backlog = nil
	for _, c := range l.rt.consumers {
		close(c.ch)
	}
	l.rt.consumers = nil
}

// openFile creates the session's log file writer.
func (l *Logger) openFile(cfg *Config) error {
	p := &cfg.Props
	info := l.headerInfo()
	info.MaxFileSize = p.MaximumFileSize
	w, err := etl.Create(etl.Options{
		Path: p.LogFileName, BufferSize: l.bufSize, Info: info, FS: cfg.FileSystem,
		Compress: l.mode&logmode.Compressed != 0, Counters: l.fileCounters,
	})
	if err != nil {
		return err
	}
	l.file = w
	// The header buffer of a new file; with EVENT_TRACE_FILE_MODE_APPEND, every buffer the
	// file already holds, so that BuffersWritten and the finalized header agree.
	// [UNCERTAIN] that Windows' ControlTrace query counts an appended file's old buffers:
	// no public source shows it, and the header's count must hold them all.
	l.buffersWritten.Add(uint64(w.Written()))
	return nil
}

// headerInfo is what a log file's header buffer says of the session.
func (l *Logger) headerInfo() etl.HeaderInfo {
	return etl.HeaderInfo{
		Version: l.version, LoggerName: l.name, LoggerID: l.bufferID, Processors: uint32(l.nproc),
		ClockType: uint32(l.clock.Type()), PerfFreq: l.clock.Frequency(), StartTime: l.startTime,
		StartPerf: l.startPerf, CPUSpeedMHz: cpuSpeedMHz(l.clock), ThreadID: uint32(l.threadID),
		ProcessID: l.pid, LogFileMode: l.mode, BootTime: bootTime(l),
	}
}

// writeOut sends a sealed buffer everywhere it goes and counts the outcome: the log
// file's result when there is one, else the Sink's (an error costs the buffer,
// LogBuffersLost), else written.
func (l *Logger) writeOut(buf []byte, stream int) {
	start := time.Now()
	defer func() { l.outputTime.Add(int64(time.Since(start))) }()
	if l.rt != nil {
		l.deliver(buf)
	}
	var sinkErr error
	if l.sink != nil {
		sinkErr = l.toSink(buf)
	}
	written, lost := 1, 0
	if l.file != nil {
		r := l.file.WriteBuffer(buf)
		written, lost = r.Written, r.Lost
		l.logEventsLost.Add(r.EventsLost)
		l.noteFileErr(r.Err)
	} else if sinkErr != nil {
		written, lost = 0, 1
		l.logEventsLost.Add(etl.EventsIn(buf))
	}
	l.buffersWritten.Add(uint64(written))
	l.logBuffersLost.Add(uint64(lost))
	if written > 0 || l.file == nil && lost == 0 {
		l.perStream[stream%len(l.perStream)].Add(1)
	}
}

// noteFileErr keeps the first log-file error for FileErr.
func (l *Logger) noteFileErr(err error) {
	if err != nil {
		l.fileErr.CompareAndSwap(nil, &err)
	}
}

// FileErr returns the first error the log file met (a fault, a full SEQUENTIAL file), or
// nil. The session goes on; the buffers it cost are in LogBuffersLost.
func (l *Logger) FileErr() error {
	if p := l.fileErr.Load(); p != nil {
		return *p
	}
	return nil
}

// LogFileName returns the name of the file being written (NEWFILE moves it on), or ""
// for none.
func (l *Logger) LogFileName() string {
	if l.file == nil {
		return ""
	}
	var name string
	l.paused(func() { name = l.file.Name() })
	return name
}

// closeFile writes what compression holds and finalizes the header with the session's
// final counters (WmipFinalizeHeader). Called after the last buffer was written.
func (l *Logger) closeFile() {
	if l.file == nil {
		return
	}
	l.countFile(l.file.Finish())
	l.noteFileErr(l.file.Close(l.fileCounters()))
}

// countFile counts what a call of the log file did beside writing trace buffers one by
// one (a flush of the compression area, a roll-over, the last flush): the buffers it
// wrote and lost, and its error. On the logger goroutine.
func (l *Logger) countFile(r etl.Result) {
	l.buffersWritten.Add(uint64(r.Written))
	l.logBuffersLost.Add(uint64(r.Lost))
	l.logEventsLost.Add(r.EventsLost)
	l.noteFileErr(r.Err)
}

// fileCounters are the counters a log file's header is finalized with: the session's
// losses so far and the time. Read on the logger goroutine.
func (l *Logger) fileCounters() etl.Counters {
	return etl.Counters{
		EventsLost: uint32(l.eventsLost.Load()), BuffersLost: uint32(l.logBuffersLost.Load()),
		EndTime: nowFileTime(),
	}
}

// NextFile moves a NEWFILE session to its next file (EVENT_TRACE_CONTROL_INCREMENT_FILE),
// on the logger goroutine.
func (l *Logger) NextFile() error {
	if l.file == nil {
		return winerr.New(winerr.ErrInvalidParameter, "session %q has no log file", l.name)
	}
	var r etl.Result
	l.paused(func() {
		r = l.file.NextFile()
		l.countFile(r)
	})
	return r.Err
}

// CompressionRatio returns the data bytes compressed and the bytes stored for them, for a
// session with EVENT_TRACE_COMPRESSED_MODE and a log file.
func (l *Logger) CompressionRatio() (in, out int64) {
	if l.file == nil {
		return 0, 0
	}
	var a, b int64
	l.paused(func() { a, b = l.file.Ratio() })
	return a, b
}

// countRecords returns the records in a buffer's data up to end; malformed data counts
// what walks cleanly.
func countRecords(data []byte, end int) uint64 {
	n, _ := etl.CountRecords(data, end)
	return uint64(n)
}

// cpuSpeedMHz is the CpuSpeedInMHz a file header carries: the cycle counter's rate for
// a CPU-cycle clock (readers scale its timestamps by it), else the time-stamp counter's.
func cpuSpeedMHz(c *clock.Clock) uint32 {
	f := c.Frequency()
	if c.Type() != clock.CPUCycles {
		f = clock.TSCFrequency()
	}
	return uint32(max(f/1_000_000, 1))
}

// bootTime is the FILETIME at which the session clock read zero, the emulated boot
// (QPC counts from boot on Windows).
func bootTime(l *Logger) int64 {
	if f := l.clock.Frequency(); f > 0 && l.clock.Type() != clock.System {
		return l.startTime - int64(float64(l.startPerf)*1e7/float64(f))
	}
	return l.startTime
}

func nowFileTime() int64 { return clock.FileTime(time.Now()) }
