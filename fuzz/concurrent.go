package fuzz

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// Workers is how many goroutines RunConcurrent splits a program across.
const Workers = 3

// RunConcurrent decodes data and runs the program's operations split across Workers
// goroutines on a kernel whose sessions have real logger goroutines: operation i goes to
// worker i mod Workers. Of sessions s0 to s3, those the program's operations name
// (sessionsNamed) are started first, session s with the settings of the program's s-th
// start operation; starts during the run are skipped, so a logger id always means one
// session. Each worker registers its own providers.
//
// Nothing can be predicted about the interleaving, so the checks are the ones that hold
// for every interleaving: every error is a Windows error; every event that no control
// call overlapped went to exactly the sessions whose enable slots (the provider's and
// its group's, read before the write) pass its level, keyword and id by the harness's
// own reading of the level and keyword test and of the slot's filters (as the emulator
// parsed them: a wrong parse is FuzzInterplay's to find); afterwards the invariant
// checker finds nothing; and for every session, the events its sink received and its
// EventsLost equal what writers were told was delivered and lost. A run that does not finish within Deadline fails with the
// operation each worker is stuck in. The coverage counts the events delivered and lost.
func RunConcurrent(data []byte) (Coverage, error) {
	var cov Coverage
	p, release := decodePooled(data)
	err := runConcurrent(p, &cov)
	if err == nil {
		release()
	}
	return cov, err
}

func runConcurrent(p Program, cov *Coverage) error {
	k, err := emu.New(emu.Config{Version: p.Version, Processors: p.Processors, ProcessID: processID, Executable: executable,
		FileSystem: &etl.MemFS{}, Clock: clock.NewManualSource(1000, 1), PMCSource: pmc.Synthetic{}, PMCCounters: pmcCounters})
	if err != nil {
		return err
	}
	stuck := false
	defer func() {
		if !stuck { // Close would wait for a stuck worker's logger, and the run would not report
			k.Close()
		}
	}()

	// Sessions first, from the program's start operations (defaults where it has none).
	handles := map[int]emu.TraceHandle{}
	sinks := map[emu.TraceHandle]*checkSink{}
	var starts []Op
	for _, o := range p.Ops {
		if o.Kind == OpStart && startable(p.Version, o) {
			starts = append(starts, o)
		}
	}
	var loggers [4]*emu.Session // to read what a BUFFERING ring overwrote, after stop
	var ids []uint16            // their logger ids: no other logger runs while the workers do
	named := sessionsNamed(p)
	for s := 0; s < 4; s++ {
		if !named[s] {
			continue
		}
		o := Op{BufferKB: 4, Mode: logmode.RealTime}
		if s < len(starts) {
			o = starts[s]
		}
		o.Session = s // its settings, under this session's name and log file
		sink := &checkSink{}
		h, err := k.StartTrace(sessionNames[s], o.properties(sink))
		if err != nil {
			return fmt.Errorf("starting %s: %w", sessionNames[s], err)
		}
		handles[s], sinks[h] = h, sink
		loggers[s] = k.Session(h)
		ids = append(ids, h.LoggerID())
	}

	stopped := &finals{m: map[emu.TraceHandle]emu.Properties{}}
	tl := talliesPool.Get().(*workerTallies) // all zeros
	tallies, events := &tl.sum, &tl.event
	errs := make([]error, Workers)
	run := &flight{}
	regs := make([][]*mine, Workers)
	// A goroutine for each worker that has an operation (a program shorter than Workers
	// leaves some without); the last to finish closes joined. (A goroutine per worker and
	// one more waiting for them were a fifth of a short program's time, most of it in
	// waking processors for goroutines with nothing to do.)
	n := min(Workers, len(p.Ops))
	joined := make(chan struct{})
	var left atomic.Int32
	left.Store(int32(n))
	if n == 0 {
		close(joined)
	}
	for w := range n {
		go func() {
			errs[w] = worker(k, handles, ids, p.Ops, w, &tallies[w], &events[w], stopped, run, &run.at[w], &regs[w])
			if left.Add(-1) == 0 {
				close(joined)
			}
		}()
	}
	select {
	case <-joined:
		defer tl.put()
	case <-time.After(Deadline):
		// The workers are left where they are stuck, with their tallies and the kernel:
		// the process is failing anyway.
		stuck = true
		return fmt.Errorf("the workers did not finish within %v; stuck in:%s\nprogram:\n%v", Deadline, run.stuck(), p)
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w\nprogram:\n%v", err, p)
	}

	if cov.Callbacks, err = lastCallbacks(k, regs); err != nil {
		return fmt.Errorf("%w\nprogram:\n%v", err, p)
	}

	// What the sinks found wrong, then the live kernel, then every session's books.
	for s, h := range handles {
		if err := sinks[h].err(); err != nil {
			return fmt.Errorf("session %s: %w\nprogram:\n%v", sessionNames[s], err, p)
		}
	}
	c := emu.NewChecker(k)
	for _, h := range handles {
		if l := k.Session(h); l != nil {
			for w := range tallies {
				c.Accepted(l, tallies[w].Delivered[h.LoggerID()])
			}
		}
	}
	if vs := c.Check(); len(vs) > 0 {
		var b strings.Builder
		for _, v := range vs {
			fmt.Fprintf(&b, "\n  %v", v)
		}
		return fmt.Errorf("invariants broken after the workers joined:%s\nprogram:\n%v", b.String(), p)
	}
	for s, h := range handles {
		var q emu.Properties
		if err := k.StopTrace(h, "", &q); errors.Is(err, winerr.ErrWMIInstanceNotFound) {
			q = stopped.m[h] // a worker stopped it
		} else if err != nil {
			return fmt.Errorf("final stop of %s: %w", sessionNames[s], err)
		}
		var delivered, lost uint64
		for w := range tallies {
			delivered += tallies[w].Delivered[h.LoggerID()]
			lost += tallies[w].Lost[h.LoggerID()]
		}
		cov.Delivered += delivered
		cov.Lost += lost
		sink := sinks[h]
		if uint64(q.EventsLost) != lost {
			return fmt.Errorf("session %s: EventsLost %d, writers were told %d were lost\nprogram:\n%v", sessionNames[s], q.EventsLost, lost, p)
		}
		over := loggers[s].Stats().EventsOverwritten
		if err := sink.err(); err != nil {
			return fmt.Errorf("session %s: %w\nprogram:\n%v", sessionNames[s], err, p)
		}
		if sink.EventsWritten()+over != delivered {
			return fmt.Errorf("session %s: the sink received %d events and the ring overwrote %d, writers were told %d were delivered\nprogram:\n%v",
				sessionNames[s], sink.EventsWritten(), over, delivered, p)
		}
	}
	return nil
}

// passes says what enable slots that pass (or not) an event do with it.
func passes(pass bool) string {
	if pass {
		return "pass"
	}
	return "filter out"
}

// zeroPayloads holds the workers' payload buffers, each as long as the longest payload
// and all zeros between runs: a worker writes a serial into the last 8 bytes of a
// payload and clears them after the write. Allocated and cleared for each run, they
// were a twelfth of an execution's time.
var zeroPayloads = sync.Pool{New: func() any {
	b := make([]byte, slices.Max(payloads))
	return &b
}}

// workerTallies are a concurrent run's tallies: each worker's sum, and the one each
// worker passes to a write and takes its counts out of again. At 1.7 KB each (an array
// per logger id), allocating them for every run was a fifth of the bytes an execution
// allocated; a run takes them from talliesPool and returns them zeroed.
type workerTallies struct {
	sum, event [Workers]emu.Tally
}

var talliesPool = sync.Pool{New: func() any { return new(workerTallies) }}

// put zeroes the tallies and returns them to talliesPool. (A worker that failed may have
// left counts in its event tally.)
func (t *workerTallies) put() {
	*t = workerTallies{}
	talliesPool.Put(t)
}

// sessionsNamed reports which of the four sessions the program's operations name: the
// control calls, the enables, the PMC configurations and the system writes. A session no
// operation names is asked nothing and enabled for nothing, so it would receive nothing;
// RunConcurrent does not start it. (A program that names one session no longer has an
// idle session beside it to show an event delivered where no slot sends it; programs
// that name two or more do.) Most programs the fuzzing engine tries name one or two
// sessions, and the starts, the logger goroutines and the stops of the other sessions
// were most of an execution's time.
func sessionsNamed(p Program) (named [4]bool) {
	for _, o := range p.Ops {
		switch o.Kind {
		case OpStop, OpFlush, OpQuery, OpUpdate, OpEnable, OpDisable, OpCapture, OpPMC, OpSysWrite:
			named[o.Session%4] = true
		}
	}
	return named
}

// startable reports whether the start o is one the sessions of a concurrent run can use:
// accepted by the version, a kernel logger (the four sessions need four kernel loggers:
// a version allows one private logger), and stoppable, so that the books can be closed.
func startable(v winver.Version, o Op) bool {
	d := o.decide(v, "")
	_, _, fileOK := o.logFile(d.Effective, o.BufferKB)
	return d.Accepted && fileOK && !d.Private && d.Effective&logmode.NonStoppable == 0
}

// finals holds the properties a successful stop returned, by handle: the final counters
// of a session a worker stopped, which is gone by the time the books are checked.
type finals struct {
	mu sync.Mutex
	m  map[emu.TraceHandle]emu.Properties
}

func (f *finals) put(h emu.TraceHandle, p emu.Properties) {
	f.mu.Lock()
	f.m[h] = p
	f.mu.Unlock()
}

// Deadline is how long RunConcurrent waits for its workers, whose programs take
// milliseconds, before it reports them stuck.
const Deadline = 20 * time.Second

// flight is what a concurrent run's workers are doing, for the report of a run that
// does not finish, and the control calls in progress, for the routing check.
type flight struct {
	at [Workers]atomic.Pointer[Op] // each worker's operation in progress; stored by the worker
	// epoch counts the starts and ends of the control calls that may change where events
	// go, and inFlight how many are in progress: a write that saw none in flight and the
	// same epoch before and after overlapped none. (One counter whose parity said "in
	// progress" failed when two workers' control calls overlapped: two starts made it
	// even again.) Atomic; a control call adds to inFlight, then to epoch, as it starts,
	// and to epoch, then takes from inFlight, as it ends.
	epoch    atomic.Uint64
	inFlight atomic.Int64
	// serial numbers the events the workers write (the last eight bytes of a payload
	// that has them), so that the sinks see each at most once. Atomic.
	serial atomic.Uint64
}

// threadBase is the thread id a concurrent run's events carry, plus the processor they
// are written on.
const threadBase = 1000

func (f *flight) stuck() string {
	var b strings.Builder
	for w := range f.at {
		if o := f.at[w].Load(); o != nil {
			fmt.Fprintf(&b, "\n  worker %d: %v", w, o)
		} else {
			fmt.Fprintf(&b, "\n  worker %d: done", w)
		}
	}
	return b.String()
}

// mine is a registration a worker made, and what it knows of it: the provider, the
// group its traits joined, whether its traits ever left a group, and whether it is
// closed. r, provider, group, left and closed are written by its worker only; calls by
// the callback, under mu.
type mine struct {
	r        *emu.Registration
	provider guid.GUID
	group    *guid.GUID
	left     bool // a traits call took it out of a group: no callback says so
	closed   bool

	mu    sync.Mutex
	calls []mCall // the enable callbacks received, in order; protected by mu
}

// callback is the registration's enable callback: it notes each call, which may come on
// any worker's goroutine (the one delivering the queued callbacks).
func (m *mine) callback(_ guid.GUID, code regentry.ControlCode, level uint8, any, all uint64, _ []byte, _ any) {
	m.mu.Lock()
	m.calls = append(m.calls, mCall{uint32(code), level, any, all})
	m.mu.Unlock()
}

// lastCallbacks checks, once the workers joined and every queued callback was delivered,
// that each open registration outside a group last heard what its GUID entry's slots now
// say (the model's aggregate, mEntry.aggregate, of the kernel's slots): an enable with
// the highest level, the OR of the any-keywords and the AND of the all-keywords, or a
// disable (or nothing at all) when no slot is enabled. Callbacks are delivered in the
// order the changes were made, so whatever the interleaving, the last one is the state.
// Capture-state requests change nothing and are skipped. A registration that left a group
// is skipped too: EventSetInformation changes membership, not enablement, so it hears
// nothing as it leaves, and its last callback may be the group's.
//
// It returns how many registrations it checked that heard a callback.
func lastCallbacks(k *emu.Kernel, regs [][]*mine) (int, error) {
	heard := 0
	for w, rs := range regs {
		for i, m := range rs {
			if m.closed || m.group != nil || m.left {
				continue
			}
			var e mEntry
			if ge, ok := k.LookupGuidEntry(m.provider, false); ok {
				for j := range e.slots {
					if s, used := ge.Slot(j); used && s.IsEnabled {
						e.slots[j] = &mSlot{logger: s.LoggerID, level: s.Level, any: s.MatchAnyKeyword, all: s.MatchAllKeyword}
					}
				}
			}
			want := e.aggregate()
			m.mu.Lock()
			last := lastState(m.calls)
			m.mu.Unlock()
			switch {
			case last == nil && want.code == 0:
			case last == nil:
				return heard, fmt.Errorf("worker %d's registration %d of %v heard no callback, but its entry's slots enable it (%+v)", w, i, m.provider, want)
			case last.code == 0 && want.code == 0:
			case *last != want:
				return heard, fmt.Errorf("worker %d's registration %d of %v last heard %+v, but its entry's slots say %+v", w, i, m.provider, *last, want)
			}
			if last != nil {
				heard++
			}
		}
	}
	return heard, nil
}

// checkSink is a concurrent run's sink: it counts the records of each buffer, as
// session.Counter does, and checks every record against what the workers write: the process id, a provider of the run,
// one of the event ids, levels and keywords the ops choose, a thread id the writes
// give, a payload of one of the sizes the ops choose, zeros before its serial, and no
// serial twice; a system record, one of the PMC hooks. It does not hold a record to the
// stream of its buffer: a writer that loaded its stream's buffer, was preempted while
// the buffer was flushed and opened again for another stream, and then reserved, writes
// into that stream's buffer ([UNCERTAIN] Windows, which takes a reference on the buffer
// before reserving, may re-check the slot; the emulator does not).
//
// It counts the records as it checks them, rather than embedding session.Counter, whose
// walk of each buffer was a second one; a wrong record is noted and the walk goes on, so
// that the count is the buffer's whatever its records hold and the run reports the
// record, not a count the invariant checker finds short.
type checkSink struct {
	events atomic.Uint64 // the records of the buffers received; added to by the logger goroutine

	mu      sync.Mutex
	serials []uint64 // a bit for each serial received (they run from 1, dense); protected by mu
	bad     error    // the first wrong record or malformed buffer; protected by mu
}

// EventsWritten returns the records in the buffers received (session.EventCounter).
func (s *checkSink) EventsWritten() uint64 { return s.events.Load() }

// WriteBuffer implements session.Sink.
func (s *checkSink) WriteBuffer(buf []byte) error {
	h, _ := abi.DecodeBufferHeader(buf)
	stream := h.ProcessorIndex()
	s.mu.Lock()
	defer s.mu.Unlock()
	n := uint64(0)
	defer func() { s.events.Add(n) }()
	var wrong error // the buffer's first wrong record
	err := etl.SealedRecords(buf, func(r etl.Record) error {
		n++
		if err := s.check(r); err != nil && wrong == nil {
			wrong = fmt.Errorf("record %d: %w", n-1, err)
		}
		return nil // only a framing error stops the walk
	})
	if err == nil {
		err = wrong
	}
	if err != nil && s.bad == nil {
		s.bad = fmt.Errorf("buffer %d of stream %d: %w", h.SequenceNumber, stream, err)
	}
	return nil
}

// check checks one record (see checkSink). The caller holds s.mu.
func (s *checkSink) check(r etl.Record) error {
	switch r.Kind {
	case etl.KindEventHeader:
		e := r.Event
		switch {
		case e.ProcessID != processID:
			return fmt.Errorf("a record of process %d", e.ProcessID)
		case !slices.Contains(providers, e.ProviderID):
			return fmt.Errorf("a record of provider %v, which no worker registers", e.ProviderID)
		case !slices.Contains(eventIDs, e.Descriptor.ID) || !slices.Contains(levels, e.Descriptor.Level) || !slices.Contains(keywords, e.Descriptor.Keyword):
			return fmt.Errorf("a record with id %d level %d keyword %#x, which no write names", e.Descriptor.ID, e.Descriptor.Level, e.Descriptor.Keyword)
		case e.ThreadID < threadBase || int(e.ThreadID-threadBase) >= 8:
			return fmt.Errorf("a record of thread %d, which no write names", e.ThreadID)
		}
	case etl.KindSystem:
		if !slices.Contains(pmcHooks, uint32(r.HookID)) {
			return fmt.Errorf("a system record of hook %#x", r.HookID)
		}
	default:
		return fmt.Errorf("a %v record", r.Kind)
	}
	p := r.Payload
	if !slices.Contains(payloads, len(p)) {
		return fmt.Errorf("a %v record with %d payload bytes, a size no write names", r.Kind, len(p))
	}
	tail := len(p)
	if r.Kind == etl.KindEventHeader && len(p) >= 8 {
		tail -= 8
		serial := binary.LittleEndian.Uint64(p[tail:])
		if serial > MaxOps*8 { // a burst of eight events a write
			return fmt.Errorf("event serial %d, more than the workers write", serial)
		}
		word, bit := int(serial/64), uint64(1)<<(serial%64)
		if word >= len(s.serials) {
			s.serials = append(s.serials, make([]uint64, word+1-len(s.serials))...)
		}
		if s.serials[word]&bit != 0 {
			return fmt.Errorf("event %d received twice", serial)
		}
		s.serials[word] |= bit
	}
	if !bytes.Equal(p[:tail], tlPad[:tail]) { // tlPad is zeros, longer than any payload; one compare, not a call a byte
		return fmt.Errorf("a %v record whose payload is not the zeros written", r.Kind)
	}
	return nil
}

func (s *checkSink) err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bad
}

// routes reads the enable slots of r's provider and group entries and says which
// logger ids an event of the level, keyword and id should reach, by the model's reading
// of the level and keyword test (mSlot.passes) and the harness's own test of the slot's
// filters (admits). The filters are the emulator's parse of the enable's descriptors:
// a wrong parse passes here, and FuzzInterplay, whose model reads the choices, finds it.
func routes(k *emu.Kernel, r *mine, level uint8, kw uint64, id uint16) (want [session.LoggerIDs]bool) {
	look := func(g guid.GUID, group bool) {
		e, ok := k.LookupGuidEntry(g, group)
		if !ok {
			return
		}
		for i := 0; i < guidtable.Slots; i++ {
			if s, used := e.Slot(i); used && (&mSlot{level: s.Level, any: s.MatchAnyKeyword, all: s.MatchAllKeyword}).passes(level, kw) &&
				admits(s.Filter, processID, id) {
				want[s.LoggerID] = true
			}
		}
	}
	look(r.provider, false)
	if r.group != nil {
		look(*r.group, true)
	}
	return want
}

// admits reads the filters an enable slot holds (the emulator's parse of the enable's
// descriptors, nil for none) and says whether an event of id written by process pid
// passes them: its process among the PID filter's, the run's executable among the
// EXECUTABLE_NAME filter's names, in any case, and its id among an EVENT_ID filter's
// kept ids, or not among its dropped ones.
func admits(f *guidtable.Filter, pid uint32, id uint16) bool {
	switch {
	case f == nil:
		return true
	case f.PIDs != nil && !slices.Contains(f.PIDs, pid):
		return false
	case f.Executables != nil && !slices.ContainsFunc(f.Executables, func(n string) bool { return strings.EqualFold(n, executable) }):
		return false
	case len(f.EventIDs) > 0:
		return slices.Contains(f.EventIDs, id) == f.EventIDsIn
	}
	return true
}

// worker runs its share of a program, operations w, w+Workers, w+2*Workers and so on of
// ops, adding what its writes delivered and lost to tally; t is the tally it passes to
// each write, zero between bursts. Every error must carry a Windows code. ids are the
// logger ids of the four sessions, the only loggers an event can reach, whose tallies it
// adds up and checks against the enable slots; the rest of a burst's tally must be zero,
// one comparison of the whole after the burst (a loop over all session.LoggerIDs on every
// event was a tenth of an instrumented input).
func worker(k *emu.Kernel, handles map[int]emu.TraceHandle, ids []uint16, ops []Op, w int, tally, t *emu.Tally, stopped *finals, f *flight, at *atomic.Pointer[Op], out *[]*mine) (err error) {
	defer at.Store(nil)
	var regs []*mine
	defer func() { *out = regs }()
	// The payloads: zeros, but for a write's serial while it is written.
	zeros := zeroPayloads.Get().(*[]byte)
	defer func() {
		if err == nil { // a failed run may have left a serial in it
			zeroPayloads.Put(zeros)
		}
	}()
	payload := func(n int) []byte { return (*zeros)[:n] }
	pick := func(i int) *mine {
		if len(regs) == 0 {
			return nil
		}
		return regs[i%len(regs)]
	}
	reg := func(i int) *emu.Registration {
		if m := pick(i); m != nil {
			return m.r
		}
		return nil
	}
	control := func(call func() error) error {
		f.inFlight.Add(1)
		f.epoch.Add(1)
		defer f.inFlight.Add(-1)
		defer f.epoch.Add(1)
		return call()
	}
	for i := w; i < len(ops); i += Workers { // operation i goes to worker i mod Workers
		o := &ops[i] // in place: a copy would escape to at, one allocation an operation
		h := handles[o.Session%4]
		at.Store(o)
		err = nil // this operation's answer
		switch o.Kind {
		case OpStart:
			continue
		case OpStop:
			var q emu.Properties
			if err = control(func() error { return k.StopTrace(h, "", &q) }); err == nil {
				stopped.put(h, q)
			}
		case OpFlush:
			err = k.FlushTrace(h, "", nil)
		case OpQuery:
			err = k.QueryTrace(h, "", nil)
		case OpUpdate:
			err = k.ControlTrace(h, "", &emu.Properties{MaximumBuffers: o.MaxBufs}, emu.ControlUpdate)
		case OpRegister:
			m := &mine{provider: providers[o.Provider]}
			if m.r, err = k.EventRegister(providers[o.Provider], m.callback, nil); err == nil {
				regs = append(regs, m)
			}
		case OpUnregister:
			if err = control(func() error { return k.EventUnregister(reg(o.Reg)) }); err == nil && pick(o.Reg) != nil {
				pick(o.Reg).closed = true
			}
		case OpEnable, OpDisable, OpCapture:
			err = control(func() error {
				return k.EnableTraceEx2(h, providers[o.Provider], o.enableCode(), o.Level, o.Any, o.All, o.enableParams())
			})
		case OpWrite:
			d := &emu.EventDescriptor{ID: o.ID, Level: o.Level, Keyword: o.Any} // 1 and 3 are hook ids OpPMC selects
			m := pick(o.Reg)
			data := payload(o.Payload)
			// The sessions the slots route the burst's events to, and the epoch they were
			// read in: no control call started since while the epoch is the same, so they
			// are read again only when it moved (reading them for every event was a
			// tenth of an instrumented run).
			var want [session.LoggerIDs]bool
			read, readAt := false, uint64(0)
			for i := 0; i < 8; i++ { // a burst, so writers meet on buffers
				// t holds nothing of the four sessions here: each event's counts for them are
				// taken out of it below.
				e1 := f.epoch.Load()
				quiet := f.inFlight.Load() == 0 // read after the epoch: see flight
				if m != nil && !m.closed && quiet && (!read || readAt != e1) {
					want, read, readAt = routes(k, m, o.Level, o.Any, o.ID), true, e1
				}
				if len(data) >= 8 {
					binary.LittleEndian.PutUint64(data[len(data)-8:], f.serial.Add(1))
				}
				err = k.EventWriteEx(reg(o.Reg), d, &emu.WriteOptions{Processor: o.Processor, ThreadID: threadBase + uint32(o.Processor), Tally: t}, data)
				for _, id := range ids {
					tally.Delivered[id] += t.Delivered[id]
					tally.Lost[id] += t.Lost[id]
					tally.Denied[id] += t.Denied[id]
					got := t.Delivered[id]+t.Lost[id]+t.Denied[id] != 0
					if m != nil && !m.closed && quiet && f.epoch.Load() == e1 && got != want[id] {
						return fmt.Errorf("%v (event %d of the burst, provider %v): logger %d delivered %d lost %d denied %d, but its enable slots %s the event",
							o, i, m.provider, id, t.Delivered[id], t.Lost[id], t.Denied[id], passes(want[id]))
					}
					t.Delivered[id], t.Lost[id], t.Denied[id] = 0, 0, 0
				}
				if err != nil {
					break
				}
			}
			// What is left went to a logger id of no session: compared once a burst, for
			// the whole tally is over a kilobyte.
			if *t != zeroTally {
				return fmt.Errorf("%v: the tally counts an event of the burst for a logger that is none of the four sessions' %v: %+v", o, ids, t)
			}
			if len(data) >= 8 {
				clear(data[len(data)-8:]) // zeros again for the next write
			}
		case OpTraits:
			if err = control(func() error { return k.EventSetInformation(reg(o.Reg), emu.EventProviderSetTraits, o.traitsBlob()) }); err == nil {
				if m := pick(o.Reg); m != nil {
					var g *guid.GUID
					if o.Group {
						g = &providers[o.Provider]
					}
					m.left = m.left || m.group != nil && (g == nil || *g != *m.group)
					m.group = g
				}
			}
		case OpPMC:
			err = o.setPMC(k, h)
		case OpSysWrite:
			err = k.WriteSystemEvent(h, uint16(pmcHooks[o.Count]), &emu.WriteOptions{Processor: o.Processor, Tally: tally}, payload(o.Payload))
		}
		if _, ok := winerr.Code(err); !ok {
			return fmt.Errorf("%v returned an error without a Windows code: %v", o, err)
		}
	}
	return nil
}
