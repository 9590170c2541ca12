package fuzz

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/etw"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
)

// Run decodes data and runs the program on a synchronous emulated kernel (no logger
// goroutines; EventWriteEx on explicit processors, EventWrite and EventWriteTransfer on
// the processor the goroutine is pinned to) and on the reference model. After every
// operation it compares the two: error codes, counters, and each record the sessions'
// sinks received; after the control calls, every mask, callback and GUID entry; and
// after any step that changed more than a buffer's fill, every sixteenth step and the
// last, the invariant checker. It returns the first difference or violation, naming the
// step, with the program's listing. The sessions' clock is the machine's: nothing
// compared depends on a time stamp, and EventWrite's cached route is used only with it.
func Run(data []byte) error {
	p, release := decodePooled(data)
	_, err := RunProgram(p)
	if err == nil {
		release()
	}
	return err
}

// Coverage counts what a run exercised, so tests can tell a meaningful corpus from one
// where every operation failed early.
type Coverage struct {
	Succeeded [numKinds]int // operations that succeeded, by kind
	Failed    [numKinds]int // operations that returned an error (as the model predicted)
	Delivered uint64        // events that reached a session
	Lost      uint64        // events counted lost
	Denied    uint64        // events a SECURE_MODE session refused
	Callbacks int           // enable callbacks delivered
	Refused   int           // session starts the version's mode table refused
	Counted   uint64        // events delivered with PMC counters
	Stacks    uint64        // records FuzzInterplay's sinks received with a STACK_TRACE item
	// Interleaved counts the writes run inside another writer's buffer switch (OpHold
	// holdInterleave), and Retired those after which that writer retired the buffer it
	// had taken.
	Interleaved, Retired int
	// TraceLogging counts the writes through a TraceLogging provider of package etw.
	TraceLogging int
}

// Add adds c2 to c.
func (c *Coverage) Add(c2 Coverage) {
	for i := range c.Succeeded {
		c.Succeeded[i] += c2.Succeeded[i]
		c.Failed[i] += c2.Failed[i]
	}
	c.Delivered += c2.Delivered
	c.Lost += c2.Lost
	c.Denied += c2.Denied
	c.Callbacks += c2.Callbacks
	c.Refused += c2.Refused
	c.Counted += c2.Counted
	c.Stacks += c2.Stacks
	c.Interleaved += c2.Interleaved
	c.Retired += c2.Retired
	c.TraceLogging += c2.TraceLogging
}

// RunProgram is Run for a decoded program; it also reports what the run exercised.
func RunProgram(p Program) (Coverage, error) {
	cov, _, err := runProgram(p)
	return cov, err
}

// Scenario runs p and returns it as a scenario (package scenario) that replays it with
// every answer the emulator gave: a failing operation becomes "expect CODE ...".
func Scenario(p Program) (string, error) {
	_, results, err := runProgram(p)
	return p.Scenario(results), err
}

func runProgram(p Program) (Coverage, []error, error) {
	var cov Coverage
	k, err := emu.New(emu.Config{Version: p.Version, Processors: p.Processors, ProcessID: processID, Executable: executable,
		FileSystem: &etl.MemFS{}, Synchronous: true, PMCSource: pmc.Synthetic{}, PMCCounters: pmcCounters})
	if err != nil {
		return cov, nil, err
	}
	defer k.Close()
	h := &harness{k: k, m: newModel(p.Version, p.Processors), handles: map[string]emu.TraceHandle{},
		sinks: map[emu.TraceHandle]*recSink{}, check: emu.NewChecker(k), cov: &cov, pin: newPinner()}
	defer h.release()
	defer h.pin.done()
	for i, op := range p.Ops {
		lost := h.cov.Lost + h.cov.Denied
		err := h.step(op)
		if op.Kind == OpWrite {
			// EventWrite and EventWriteTransfer write on the processor the goroutine
			// is on: the program records it, so that its listing and scenario say
			// where the event went.
			p.Ops[i].Processor = h.proc
		}
		if err == nil {
			// The invariant checker walks the whole kernel, which costs more than the
			// rest of a step: it runs after a step that changed something other than a
			// buffer's fill (a failed step must change nothing, and what it did change
			// is there for the next check to see), after a write that lost events, every
			// sixteenth step, and after the last.
			last := h.results[len(h.results)-1]
			full := i%16 == 15 || i == len(p.Ops)-1 || h.cov.Lost+h.cov.Denied != lost ||
				last == nil && op.Kind != OpWrite && op.Kind != OpSysWrite && op.Kind != OpQuery
			// Masks, callbacks and GUID entries change only by the control calls that
			// enable, register or stop; after the others they are compared with the
			// full checks.
			enabling := op.Kind == OpStart || op.Kind == OpStop || op.Kind == OpRegister || op.Kind == OpUnregister ||
				op.Kind == OpEnable || op.Kind == OpDisable || op.Kind == OpCapture || op.Kind == OpTraits
			err = h.compare(full, full || enabling)
		}
		if err != nil {
			first, _, _ := strings.Cut(err.Error(), "\n")
			return cov, h.results, fmt.Errorf("step %d (%v): %w\nprogram:\n%v\nas a scenario (etwemu run FILE replays it up to the step that failed):\n%s"+
				"# The harness failed at the last line above, step %d: %s\n"+
				"# The replay gives the emulator's answers; the failure is where they differ from the model's.\n",
				i, op, err, p, p.Scenario(h.results), i, first)
		}
	}
	for _, c := range h.calls {
		cov.Callbacks += len(c)
	}
	// Stop what still runs: every accepted event must then be in a sealed buffer.
	for _, name := range sessionNames {
		if h.m.session(name) != nil {
			if err := h.step(Op{Kind: OpStop, Session: indexOf(name)}); err != nil {
				return cov, h.results, fmt.Errorf("final stop of %s: %w\nprogram:\n%v", name, err, p)
			}
		}
	}
	for _, s := range h.sinks { // every session's, stopped: their last buffers are in
		cov.Stacks += s.stacks
	}
	return cov, h.results[:len(p.Ops)], nil
}

func indexOf(name string) int {
	for i, n := range sessionNames {
		if n == name {
			return i
		}
	}
	return 0
}

type harness struct {
	k       *emu.Kernel
	m       *model
	handles map[string]emu.TraceHandle // last handle per lower-cased session name
	sinks   map[emu.TraceHandle]*recSink
	regs    []*emu.Registration // parallel to m.regs
	tl      []*etw.Provider     // parallel to regs: the TraceLogging provider, or nil
	calls   [][]mCall           // callbacks each registration received, parallel to m.regs
	check   *emu.Checker
	cov     *Coverage
	pin     *pinner             // EventWrite's processor
	writes  int                 // OpWrite operations so far
	proc    int                 // the processor the last OpWrite wrote on
	serial  uint64              // events written so far: the last eight bytes of each payload (payload)
	pay     []byte              // the payloads' bytes (payload)
	payN    int                 // the length of the last payload
	stacks  bool                // an enable asked for stacks: writes go stackDepth frames down (deepen)
	tally   emu.Tally           // the last write's (OpWrite, OpSysWrite, TraceLogging), reused: 1.7 KB, on the heap each write it was a fifth of the write's time
	desc    emu.EventDescriptor // the last OpWrite's descriptor and EventWriteEx options, reused, as tally
	opts    emu.WriteOptions
	rest    emu.Tally     // compareTally's
	st      session.Stats // a session's counters, read after each write (ReadStats)
	// before and after are the sessions' counters around the last write (stats).
	before, after [session.LoggerIDs]counts
	// results is the emulator's answer to each operation step has run, in order, for
	// printing the program as a scenario.
	results []error
}

// bogusHandle names no session: logger id 63 with an instance never handed out.
const bogusHandle = emu.TraceHandle(0xFFFF<<16 | 63)

func (h *harness) handle(i int) emu.TraceHandle {
	if th, ok := h.handles[sessionKeys[i]]; ok {
		return th
	}
	return bogusHandle
}

// sameErr compares an emulator error with the model's by Windows code.
func (h *harness) sameErr(o Op, got, want error) error {
	if got == nil {
		h.cov.Succeeded[o.Kind]++
	} else {
		h.cov.Failed[o.Kind]++
	}
	return sameErr(o.Kind.String(), got, want)
}

func sameErr(what string, got, want error) error {
	gc, _ := winerr.Code(got)
	wc, _ := winerr.Code(want)
	if gc != wc {
		return fmt.Errorf("%s: emulator returned %v, model expects %v", what, describe(got), describe(want))
	}
	return nil
}

func describe(err error) string {
	if err == nil {
		return "success"
	}
	return err.Error()
}

func (h *harness) reg(i int) (*emu.Registration, *mReg) {
	if len(h.regs) == 0 {
		return nil, nil
	}
	i %= len(h.regs)
	return h.regs[i], h.m.regs[i]
}

// step does one operation on both sides and compares the direct results.
func (h *harness) step(o Op) error {
	k, m := h.k, h.m
	name := sessionNames[o.Session]
	th := h.handle(o.Session)
	ms := m.session(name)
	if ms != nil && uint64(th) != ms.handle {
		return fmt.Errorf("model session %s has handle %#x, harness holds %#x", name, ms.handle, uint64(th))
	}
	switch o.Kind {
	case OpStart:
		sink := &recSink{}
		p := o.properties(sink)
		got, err := k.StartTrace(name, p)
		h.results = append(h.results, err)
		want, werr := m.start(name, o)
		if errors.Is(werr, winerr.ErrInvalidParameter) {
			h.cov.Refused++
		}
		if e := h.sameErr(o, err, werr); e != nil || err != nil {
			return e
		}
		if uint64(got) != want.handle {
			return fmt.Errorf("StartTrace handle %#x, model expects %#x", uint64(got), want.handle)
		}
		h.handles[sessionKeys[o.Session]] = got
		h.sinks[got] = sink
		return compareProps(p, want)

	case OpStop:
		var p emu.Properties
		err := k.StopTrace(th, "", &p)
		h.results = append(h.results, err)
		var werr error
		switch {
		case ms == nil:
			werr = winerr.ErrWMIInstanceNotFound
		case ms.mode&logmode.NonStoppable != 0:
			werr = winerr.ErrAccessDenied
		default:
			m.stop(ms)
		}
		if e := h.sameErr(o, err, werr); e != nil || err != nil {
			return e
		}
		if err := compareProps(&p, ms); err != nil {
			return err
		}
		if got := h.sinks[th].EventsWritten(); got+ms.overwritten != ms.delivered {
			return fmt.Errorf("stopped session %s: sink holds %d events and the ring overwrote %d (model), writers were told %d were accepted", name, got, ms.overwritten, ms.delivered)
		}
		if err := h.sinks[th].compare(ms.want, true); err != nil {
			return fmt.Errorf("stopped session %s: %w", name, err)
		}
		return h.sinks[th].Err()

	case OpFlush, OpQuery, OpUpdate:
		var p emu.Properties
		code := map[Kind]emu.ControlCode{OpFlush: emu.ControlFlush, OpQuery: emu.ControlQuery, OpUpdate: emu.ControlUpdate}[o.Kind]
		p.MaximumBuffers = o.MaxBufs
		err := k.ControlTrace(th, "", &p, code)
		h.results = append(h.results, err)
		var werr error
		switch {
		case ms == nil:
			werr = winerr.ErrWMIInstanceNotFound
		case o.Kind == OpFlush:
			ms.flush()
		case o.Kind == OpUpdate && o.MaxBufs != 0 && !ms.buffering:
			ms.max = max(o.MaxBufs, uint32(ms.total), ms.min) // never below what is allocated
		}
		if e := h.sameErr(o, err, werr); e != nil || err != nil {
			return e
		}
		return compareProps(&p, ms)

	case OpRegister:
		if o.TL {
			return h.registerTL(o)
		}
		idx := len(h.regs)
		cb := func(_ guid.GUID, code regentry.ControlCode, level uint8, any, all uint64, _ []byte, _ any) {
			h.calls[idx] = append(h.calls[idx], mCall{uint32(code), level, any, all})
		}
		h.calls = append(h.calls, nil) // the callback may run before EventRegister returns
		r, err := k.EventRegister(providers[o.Provider], cb, nil)
		h.results = append(h.results, err)
		if err != nil {
			h.calls = h.calls[:idx]
		}
		var werr error
		if !m.facts.eventRegister {
			werr = winerr.ErrNotSupported
		}
		if e := h.sameErr(o, err, werr); e != nil || err != nil {
			return e
		}
		h.regs, h.tl = append(h.regs, r), append(h.tl, nil)
		m.register(providers[o.Provider])
		return nil

	case OpUnregister:
		r, mr := h.reg(o.Reg)
		err := k.EventUnregister(r)
		h.results = append(h.results, err)
		var werr error
		switch {
		case mr == nil:
		case mr.closed:
			werr = winerr.ErrInvalidHandle
		default:
			m.unregister(mr)
		}
		return h.sameErr(o, err, werr)

	case OpEnable, OpDisable, OpCapture:
		h.stacks = h.stacks || o.Kind == OpEnable && o.Props&guidtable.PropertyStackTrace != 0
		err := k.EnableTraceEx2(th, providers[o.Provider], o.enableCode(), o.Level, o.Any, o.All, o.enableParams())
		h.results = append(h.results, err)
		var werr error
		switch {
		case !m.facts.eventRegister: // no ETW_GUID_ENTRY enablement before 6.0
			werr = winerr.ErrNotSupported
		case o.Group && !m.facts.groups, o.Kind == OpEnable && o.Props&^m.facts.properties != 0:
			werr = winerr.ErrInvalidParameter
		case ms == nil:
			werr = winerr.ErrWMIInstanceNotFound
		case o.Kind == OpEnable && o.Filter != 0 && !m.facts.filters:
			werr = winerr.ErrNotSupported
		default:
			var filter *filterChoice
			if o.Kind == OpEnable && o.Filter != 0 {
				filter = &filterChoices[o.Filter]
			}
			var props uint32
			if o.Kind == OpEnable {
				props = o.Props
			}
			werr = m.enable(ms, providers[o.Provider], o.Group, uint32(o.enableCode()), o.Level, o.Any, o.All, filter, props)
		}
		return h.sameErr(o, err, werr)

	case OpWrite:
		return h.write(o)

	case OpHold:
		var err error
		if s := k.Session(th); s != nil && ms != nil {
			switch {
			case o.Count == holdInterleave:
				// Armed until a write switches one of its buffers; the harness sets the
				// hook for each write (write). A BUFFERING ring is left out.
				ms.armed = !ms.buffering
			default:
				s.SetHeld(o.Count == 1)
				ms.held = o.Count == 1
				if !ms.held && !ms.buffering {
					ms.service()
				}
			}
		} else {
			err = winerr.ErrWMIInstanceNotFound
		}
		h.results = append(h.results, err)
		return h.sameErr(o, err, err)

	case OpPMC:
		err := o.setPMC(k, th)
		h.results = append(h.results, err)
		if e := h.sameErr(o, err, m.pmc(ms, o)); e != nil || err != nil {
			return e
		}
		return nil

	case OpSysWrite:
		tally := &h.tally
		*tally = emu.Tally{}
		h.serial++
		tid := uint32(100 + o.Processor)
		err := k.WriteSystemEvent(th, uint16(pmcHooks[o.Count]), &emu.WriteOptions{Processor: o.Processor, ThreadID: tid, Tally: tally}, h.payload(o.Payload))
		h.results = append(h.results, err)
		want, werr := m.sysWrite(ms, pmcHooks[o.Count], o.Payload, o.Processor,
			rec{system: true, hook: uint16(pmcHooks[o.Count]), pid: processID, tid: tid, tail: h.serial})
		if e := h.sameErr(o, err, werr); e != nil || ms == nil {
			return e
		}
		if tally.Delivered[ms.id] != want.delivered || tally.Lost[ms.id] != want.lost {
			return fmt.Errorf("kernel event: emulator delivered %d lost %d, model expects %d and %d", tally.Delivered[ms.id], tally.Lost[ms.id], want.delivered, want.lost)
		}
		h.cov.Delivered += want.delivered
		h.cov.Lost += want.lost
		if ms.pmcExtra(pmcHooks[o.Count], true) > 0 {
			h.cov.Counted += want.delivered
		}
		if want.delivered != 0 {
			h.check.Accepted(k.Session(th), want.delivered)
		}
		return nil

	case OpTraits:
		r, mr := h.reg(o.Reg)
		err := k.EventSetInformation(r, emu.EventProviderSetTraits, o.traitsBlob())
		h.results = append(h.results, err)
		var werr error
		switch {
		case mr == nil || mr.closed:
			werr = winerr.ErrInvalidHandle
		case !m.facts.groups:
			werr = winerr.ErrNotSupported
		default:
			m.traits(mr, providers[o.Provider], o.Group)
		}
		return h.sameErr(o, err, werr)
	}
	return fmt.Errorf("unknown operation %v", o.Kind)
}

// compareProps compares what StartTrace or ControlTrace returned with the model session.
func compareProps(p *emu.Properties, s *mSession) error {
	type field struct {
		name      string
		got, want uint64
	}
	for _, f := range []field{
		{"BufferSize (KB)", uint64(p.BufferSize), uint64(s.bufSize / 1024)},
		{"MinimumBuffers", uint64(p.MinimumBuffers), uint64(s.min)},
		{"MaximumBuffers", uint64(p.MaximumBuffers), uint64(s.max)},
		{"NumberOfBuffers", uint64(p.NumberOfBuffers), uint64(s.total)},
		{"FreeBuffers", uint64(p.FreeBuffers), uint64(s.free)},
		{"LogFileMode", uint64(p.LogFileMode), uint64(s.mode)},
		{"EventsLost", uint64(p.EventsLost), s.lost},
		{"BuffersWritten", uint64(p.BuffersWritten), s.written},
	} {
		if f.got != f.want {
			return fmt.Errorf("session %s %s = %d, model expects %d", s.name, f.name, f.got, f.want)
		}
	}
	return nil
}

// compare checks what the sinks received since the last compare; with entries, every
// registration's masks and callbacks and every GUID entry's slots and references; with
// full, the checker's invariants besides.
func (h *harness) compare(full, entries bool) error {
	for _, ms := range h.m.sessions {
		if err := h.sinks[emu.TraceHandle(ms.handle)].compare(ms.want, false); err != nil {
			return fmt.Errorf("session %s: %w", ms.name, err)
		}
	}
	if !entries {
		return nil
	}
	for i, r := range h.regs {
		mr := h.m.regs[i]
		var wantMask, wantGroup uint8
		if !mr.closed {
			wantMask = mr.provider.mask()
			if mr.group != nil {
				wantGroup = mr.group.mask()
			}
		}
		if r.EnableMask() != wantMask || r.GroupEnableMask() != wantGroup {
			return fmt.Errorf("registration r%d: EnableMask %08b GroupEnableMask %08b, model expects %08b and %08b",
				i, r.EnableMask(), r.GroupEnableMask(), wantMask, wantGroup)
		}
		if got, want := h.calls[i], mr.calls; !slices.Equal(got, want) {
			return fmt.Errorf("registration r%d callbacks:\n  emulator %v\n  model    %v", i, got, want)
		}
	}
	for _, g := range providers {
		for _, group := range []bool{false, true} {
			typ := guidtable.TraceGuid
			if group {
				typ = guidtable.GroupGuid
			}
			e, found := h.k.LookupGuidEntry(g, group)
			if err := compareEntry(e, found, h.m.entry(g, group, false)); err != nil {
				return fmt.Errorf("%v entry %s: %w", typ, g, err)
			}
		}
	}
	if !full {
		return nil
	}
	if vs := h.check.Check(); len(vs) > 0 {
		var b strings.Builder
		for _, v := range vs {
			fmt.Fprintf(&b, "\n  %v", v)
		}
		return errors.New("invariants broken:" + b.String())
	}
	return nil
}

// sameFilter reports whether the filters a slot holds, as the emulator parsed them, are
// the choice the model gave the enable (nil: none): its process ids in order, and its
// event ids, sorted, kept or dropped.
func sameFilter(f *guidtable.Filter, c *filterChoice) bool {
	if f == nil || c == nil {
		return f == nil && c == nil
	}
	var pids []uint32
	for _, p := range c.pid {
		pids = append(pids, p.id(false))
	}
	ids := c.keep
	if ids == nil {
		ids = c.drop
	}
	var exes []string // the kernel keeps the names in lower case
	for _, e := range c.exe {
		exes = append(exes, strings.ToLower(e.name(false)))
	}
	return slices.Equal(f.PIDs, pids) && slices.Equal(f.EventIDs, slices.Sorted(slices.Values(ids))) &&
		f.EventIDsIn == (c.keep != nil) && slices.Equal(f.Executables, exes)
}

func compareEntry(e emu.GuidEntry, found bool, me *mEntry) error {
	switch {
	case !found && me == nil:
		return nil
	case !found:
		return fmt.Errorf("missing; the model has it with %d references", me.refs())
	case me == nil:
		return fmt.Errorf("present with %d references; the model has none", e.RefCount())
	}
	if e.RefCount() != int64(me.refs()) {
		return fmt.Errorf("RefCount %d, model expects %d", e.RefCount(), me.refs())
	}
	for i := 0; i < guidtable.Slots; i++ {
		s, used := e.Slot(i)
		ms := me.slots[i]
		switch {
		case !used && ms == nil:
		case !used || ms == nil:
			return fmt.Errorf("slot %d used %v, model expects %v", i, used, ms != nil)
		case s.LoggerID != ms.logger || s.Level != ms.level || s.MatchAnyKeyword != ms.any || s.MatchAllKeyword != ms.all:
			return fmt.Errorf("slot %d = logger %d level %d any %#x all %#x, model expects %+v",
				i, s.LoggerID, s.Level, s.MatchAnyKeyword, s.MatchAllKeyword, *ms)
		case s.EnableProperty&itemPropBits != ms.props:
			return fmt.Errorf("slot %d has EnableProperty %#x, model expects the item properties %#x", i, s.EnableProperty, ms.props)
		case !sameFilter(s.Filter, ms.filter):
			return fmt.Errorf("slot %d has filters %+v, model expects %+v", i, s.Filter, ms.filter)
		}
	}
	return nil
}
