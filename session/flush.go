package session

import (
	"math"
	"math/bits"
	"runtime"
	"time"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/winver"
)

type requestKind uint8

const (
	reqFlush requestKind = iota + 1
	reqStop
	reqRun // run a function with the logger's work paused (Check)
)

type request struct {
	kind  requestKind
	run   func() // for reqRun
	reply chan struct{}
}

// housekeeping is how often the logger goroutine wakes with nothing to do, to top up the
// free list (the 5.2 logger thread's one-second semaphore timeout).
const housekeeping = time.Second

// run is the logger goroutine (WmipLogger / EtwpLogger). The timed flush is measured on
// the session's clock, so that a manual clock decides it in tests; the wall-clock ticker
// only wakes the goroutine to look.
func (l *Logger) run() {
	defer close(l.done)
	tick := time.NewTicker(l.tickPeriod())
	defer tick.Stop()
	lastFlush := l.startPerf // the session clock at start, read before this goroutine began
	for {
		select {
		case <-l.wake:
			start := time.Now()
			if l.blocking && l.waiters.Load() > 0 {
				l.flushAll() // a waiting writer needs a buffer, even one still current
			} else {
				l.drain(false)
			}
			l.grow()
			l.loggerBusy.Add(int64(time.Since(start)))
			continue
		case r := <-l.reqs:
			start := time.Now()
			switch r.kind {
			case reqStop:
				l.finish()
				l.loggerBusy.Add(int64(time.Since(start)))
				close(r.reply)
				return
			case reqRun:
				r.run()
				close(r.reply)
				continue
			}
			l.flushAll()
			l.flushFile()
			lastFlush = l.clock.Now()
			l.loggerBusy.Add(int64(time.Since(start)))
			close(r.reply)
		case <-tick.C:
			if now := l.clock.Now(); l.flushDue(now - lastFlush) {
				start := time.Now()
				l.flushAll()
				l.flushFile()
				lastFlush = now
				l.loggerBusy.Add(int64(time.Since(start)))
			}
			tick.Reset(l.tickPeriod())
		}
		l.grow()
	}
}

// defaultFlush is the flush period of a real-time session whose FlushTimer is 0, by
// Windows version. EVENT_TRACE_PROPERTIES (Microsoft Learn), FlushTimer: "For the case of
// a realtime logger, a value of zero (the default value) means that the flush time will
// be set to 1 second. A realtime logger is when LogFileMode is set to
// EVENT_TRACE_REAL_TIME_MODE." For every other session a FlushTimer of 0 means "ETW
// flushes buffers as soon as they become full": no timed flush. A BUFFERING session never
// flushes, whatever its other flags.
// [UNCERTAIN] the page names no version: the rule is taken to hold since Windows 2000,
// the oldest version its requirements list.
var defaultFlush = winver.Steps[time.Duration]{{Since: winver.V5_0, Value: time.Second}}

// flushInterval is how often the timer flushes the session's buffers, or 0 for never:
// FlushTimer in seconds (in ms with EVENT_TRACE_USE_MS_FLUSH_TIMER, recognised from
// 6.1), or, when FlushTimer is 0, defaultFlush for a real-time session.
func (l *Logger) flushInterval() time.Duration {
	t := time.Duration(l.flushTimer.Load())
	if t == 0 {
		if l.mode&logmode.RealTime != 0 && !l.buffering {
			return defaultFlush.At(l.version)
		}
		return 0
	}
	if l.mode&logmode.MSFlushTimer != 0 {
		return t * time.Millisecond
	}
	return t * time.Second
}

// FlushInterval reports how often the timer flushes the session's buffers (0: only when
// full, on Flush and at stop): FlushTimer, or Windows' one second for a real-time session
// whose FlushTimer is 0. A synchronous session reports it but runs no timer.
func (l *Logger) FlushInterval() time.Duration { return l.flushInterval() }

// flushDue reports whether elapsed ticks of the session clock reach the flush interval.
func (l *Logger) flushDue(elapsed int64) bool {
	t := l.flushInterval()
	return t > 0 && elapsed >= ticksIn(t, l.clock.Frequency())
}

// ticksIn converts d to ticks of a clock of frequency freq, saturating at MaxInt64.
func ticksIn(d time.Duration, freq int64) int64 {
	if d <= 0 || freq <= 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(d), uint64(freq))
	if hi >= uint64(time.Second) {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, uint64(time.Second))
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return int64(q)
}

// tickPeriod is how often the goroutine wakes: a quarter of the flush interval, so that a
// timed flush comes at most a quarter of it late, and at least every housekeeping period.
func (l *Logger) tickPeriod() time.Duration {
	if t := l.flushInterval() / 4; t > 0 && t < housekeeping {
		return max(t, time.Millisecond)
	}
	return housekeeping
}

// Flush swaps out every stream's current buffer and writes everything queued, marking
// the last buffer of the batch with ETW_BUFFER_FLAG_FLUSH_MARKER. It returns when the
// buffers have reached the sink (ControlTrace flush is synchronous here).
//
// A BUFFERING session keeps its buffers in memory: Flush does nothing (SaveBuffers writes
// them to a file).
func (l *Logger) Flush() {
	if l.synchronous {
		l.syncMu.Lock()
		defer l.syncMu.Unlock()
		if l.collecting.Load() {
			l.flushAll()
			l.flushFile()
			l.grow()
		}
		return
	}
	r := request{kind: reqFlush, reply: make(chan struct{})}
	select {
	case l.reqs <- r:
		<-r.reply
	case <-l.done:
	}
}

// Stop stops collection and returns once every accepted event is in a buffer the sink
// received and every buffer is back on the free list. It reports false if the session
// was already stopping.
func (l *Logger) Stop() bool {
	if !l.collecting.CompareAndSwap(true, false) {
		<-l.done
		return false
	}
	if l.blocking {
		l.freeMu.Lock()
		l.freed.Broadcast() // waiting writers see collection off and give up
		l.freeMu.Unlock()
	}
	// Writers that entered the slow path before collection stopped may still count a
	// loss or install a buffer; wait for them, so the counters Stop leaves are final.
	// Writers entering later see collection off and count nothing.
	for spin := 0; l.slow.Load() != 0; spin++ {
		backoff(spin)
	}
	if l.synchronous {
		l.syncMu.Lock()
		l.finish()
		l.releaseData()
		l.syncMu.Unlock()
		close(l.done)
		return true
	}
	r := request{kind: reqStop, reply: make(chan struct{})}
	l.reqs <- r
	<-r.reply
	<-l.done
	l.releaseData()
	return true
}

// finish is the stop sequence: flush everything, again and again, until all buffers are
// free, then finalize the log file and end real-time delivery. A writer that was switching
// when collection stopped may still install one buffer, which the next round collects.
func (l *Logger) finish() {
	defer l.closeRealtime()
	defer l.closeFile()
	for {
		if l.buffering {
			l.dropRing()
		} else {
			l.flushAll()
		}
		l.freeMu.Lock()
		idle := len(l.free)+l.spareCount() == len(l.all) && len(l.flushQ) == 0
		l.freeMu.Unlock()
		if idle {
			return
		}
		time.Sleep(50 * time.Microsecond)
	}
}

// flushAll swaps every stream's buffer out and drains the queue with a flush marker. A
// BUFFERING session's buffers stay where they are: they leave the ring only through
// SaveBuffers and stop.
func (l *Logger) flushAll() {
	if l.buffering {
		return
	}
	l.swapStreams()
	l.drain(true)
}

// flushFile writes what the log file's compression area holds, after a flush that
// ControlTrace or the flush timer asked for: a flush puts what was written in the file,
// and a compressed session would otherwise keep up to a compressed buffer's worth of
// trace buffers in memory until the area fills.
// [UNCERTAIN] No public source shows whether Windows' logger writes its compression area
// out on EVENT_TRACE_CONTROL_FLUSH or on the flush timer. A 6.2 logger counts each flush
// of the area as one buffer, so these flushes add to its BuffersWritten.
func (l *Logger) flushFile() {
	if l.file == nil {
		return
	}
	l.countFile(l.file.Flush())
}

// swapStreams takes every stream's current buffer out and queues it, in stream order.
func (l *Logger) swapStreams() {
	for i := range l.streams {
		if b := l.streams[i].cur.Swap(nil); b != nil {
			b.state.Store(uint32(abi.BufferStateFlush))
			l.freeMu.Lock()
			l.flushQ = append(l.flushQ, b)
			l.freeMu.Unlock()
		}
	}
}

// drain seals and writes every queued buffer in queue order. With marker, the last one
// carries ETW_BUFFER_FLAG_FLUSH_MARKER and is written even when empty: WRK's
// WmipPrepareHeader skips an empty buffer (STATUS_NO_DATA_DETECTED) unless it carries
// the marker, and Windows' own 5.2 consumer (tracesup.c, EtwpGetLastBufferWithMarker)
// searches a file backwards for the last buffer with the marker and reads no further in
// read-behind mode, so the marker must reach the file whatever the buffer holds.
// [UNCERTAIN] for 6.2 and later: no public source shows the modern logger's rule. The
// fifteen real files realfiles.sh reads (builds 9200 to 26100) hold no empty buffer:
// each ends with a marked buffer that holds records, which both rules allow.
func (l *Logger) drain(marker bool) {
	if l.buffering {
		return // the flush list is the ring
	}
	l.freeMu.Lock()
	// The queue and the last batch, drained to the end, trade arrays: writers append to
	// flushQ, and a nil one would make them allocate for the first buffers of every
	// batch (runtime.growslice in a profile of BenchmarkWrite).
	q := l.flushQ
	l.flushQ, l.drainQ, l.drained = l.drainQ[:0], q, 0
	l.freeMu.Unlock()
	for i, b := range q {
		l.grow() // WRK adjusts the free list before each buffer it flushes
		end := l.waitClose(b)
		var flag uint16
		if marker && i == len(q)-1 {
			flag = abi.BufferFlagFlushMarker
		}
		if end > abi.BufferHeaderSize || flag != 0 {
			l.write(b, end, flag)
		}
		l.pushFree(b)
	}
}

// waitClose closes b and waits until every record reserved in it is complete (invariant 2).
func (l *Logger) waitClose(b *Buffer) uint32 {
	for spin := 0; ; spin++ {
		if end, ok := b.tryClose(l.bufSize); ok {
			return end
		}
		backoff(spin)
	}
}

// write seals b and hands it to the sink, counting BuffersWritten or LogBuffersLost.
func (l *Logger) write(b *Buffer, end uint32, flag uint16) {
	l.seal(b, end, flag)
	l.writeOut(b.data, int(b.stream.Load()))
}

// procIndexSince is the first version whose buffers carry ETW_BUFFER_FLAG_PROC_INDEX and
// the clock type and frequency at offset 0x20.
const procIndexSince = winver.V6_2

// seal fills the header of a closed buffer and its unused tail with 0xFF
// (WmipPrepareHeader).
//
// CurrentOffset is left as Windows leaves it, which every data buffer of the fifteen real
// files at hand shows (builds 9200 to 26100, from etl-parser's and PerfView's test data
// and six Windows 11 system logs; tools/outside/realfiles.sh lists them): a buffer switched out
// because a reservation did not fit keeps the offset that reservation, and any refused
// after it, carried past the end (SavedOffset plus their sizes); a buffer closed to be
// flushed had BufferSize added to it, so that no reservation fits again (SavedOffset plus
// BufferSize). The emulator closes with bit 31 instead (see the package comment) and
// adds BufferSize here.
func (l *Logger) seal(b *Buffer, end uint32, flag uint16) {
	abi.FillUnused(b.data[end:])
	cur := uint32(b.word.Load()) &^ closedOff
	if b.saved.Load() == 0 {
		cur += l.bufSize
	}
	h := abi.BufferHeader{
		BufferSize: l.bufSize, SavedOffset: end, CurrentOffset: cur,
		TimeStamp: l.clock.Now(), SequenceNumber: l.seq,
		ProcessorNumber: uint8(b.stream.Load()), Alignment: abi.TraceAlignment,
		LoggerID: l.bufferID, State: abi.BufferStateFlush, Offset: end,
		BufferFlag: flag, BufferType: abi.BufferTypeGeneric,
		StartTime: l.startTime, StartPerfClock: l.startPerf,
	}
	if l.version >= procIndexSince {
		h.BufferFlag |= abi.BufferFlagProcIndex
		h.ClockFrequency = abi.ClockFrequency(uint32(l.clock.Type()), l.clock.Frequency())
		// ProcessorIndex is the USHORT made of ProcessorNumber and Alignment.
		h.Alignment = uint8(b.stream.Load() >> 8)
	}
	l.seq++
	h.Encode(b.data)
	b.sealed = true
}

// grow tops up the free list: buffers are allocated only here and at start, never by a
// writer (invariant 4). It keeps MinimumBuffers free (WmipAdjustFreeBuffers), and each
// time writers ran short it adds one more per stream, so repeated shortages grow the
// session toward MaximumBuffers. Free buffers in the streams' spare slots count as free;
// they are counted (one load per stream) only when the free list alone is short, since
// drain calls grow for every buffer it writes.
func (l *Logger) grow() {
	l.freeMu.Lock()
	n := int(l.minBuffers) - len(l.free)
	if n > 0 {
		n -= l.spareCount()
	}
	if l.shortage.Swap(false) {
		n = max(n, 0) + len(l.streams)
	}
	l.freeMu.Unlock()
	if n > 0 && l.collecting.Load() {
		l.allocate(n)
	}
}

// backoff waits a little before the spin-th retry of a wait on writers: it yields the
// processor at first, then sleeps, so a writer descheduled mid-write gets to finish.
func backoff(spin int) {
	if spin < 64 {
		runtime.Gosched()
	} else {
		time.Sleep(10 * time.Microsecond)
	}
}
