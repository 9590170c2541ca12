package fuzz

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/internal/callstack"
	"github.com/etwemu/etwemu/session"
)

// deepen runs a write, fn, stackDepth frames down once the run has asked for stacks, so
// that every STACK_TRACE item holds stackFrames return addresses (itemProps).
func (h *harness) deepen(fn func()) {
	if h.stacks {
		callstack.Deep(stackDepth, fn)
	} else {
		fn()
	}
}

// processID is the emulated process every fuzz run registers its providers in, and
// executable the file it runs (emu.Config.Executable), which EXECUTABLE_NAME filters name.
const (
	processID  = 4242
	executable = "FuzzApp.exe" // capitals, as Windows programs have them: filters match in any case
)

// payload returns n bytes to write as an event's payload: zeros, the last eight of them
// (when there are eight) the write's serial number h.serial, so that the record in the
// sink tells which write made it. The bytes are valid until the next call.
func (h *harness) payload(n int) []byte {
	if cap(h.pay) < n {
		if h.pay == nil {
			h.pay = payloadPool.Get().([]byte)
		}
		if cap(h.pay) < n {
			h.pay = make([]byte, n)
		}
	}
	if h.payN >= 8 {
		clear(h.pay[h.payN-8 : h.payN]) // the previous serial
	}
	p := h.pay[:n]
	if h.payN = n; n >= 8 {
		binary.LittleEndian.PutUint64(p[n-8:], h.serial)
	}
	return p
}

// payloadPool keeps the payload buffers of finished runs: most runs write a large payload
// somewhere, and a fresh 64 KB each run was a tenth of what a run allocated.
var payloadPool = sync.Pool{New: func() any { return make([]byte, 0, 0x10000) }}

// release returns the run's payload buffer to the pool.
func (h *harness) release() {
	if h.pay != nil {
		h.payload(0) // zeros again
		payloadPool.Put(h.pay[:0])
		h.pay = nil
	}
}

// activity is the activity id of the serial-th write: distinct for every write.
func activity(serial uint64) guid.GUID {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:], serial)
	b[15] = 0xA5
	return guid.FromBytes(b[:])
}

// write does an OpWrite on both sides, with the call o.API names, and compares what each
// session did with the event.
func (h *harness) write(o Op) error {
	k, m := h.k, h.m
	if len(h.tl) > 0 && h.tl[o.Reg%len(h.tl)] != nil {
		return h.writeTL(o)
	}
	r, mr := h.reg(o.Reg)
	d := &h.desc
	*d = emu.EventDescriptor{ID: o.ID, Level: o.Level, Keyword: o.Any}
	h.writes++
	h.serial++
	serial := h.serial // the writes run inside this one's buffer switches take the next ones
	data := h.payload(o.Payload)
	ev := rec{hook: o.ID, level: o.Level, keyword: o.Any, pid: processID, tail: serial}
	if mr != nil {
		ev.provider = mr.provider.g
	}
	tally := &h.tally
	*tally = emu.Tally{}
	useTally := false
	h.stats(&h.before)
	proc, extra := o.Processor, 0
	var err error
	api := o.API
	// call writes the event through EventWrite or EventWriteTransfer, on the processor
	// the goroutine runs on.
	call := func() {
		if api == APIPlain {
			h.deepen(func() { err = k.EventWrite(r, d, data) })
			return
		}
		act := activity(serial)
		var related *guid.GUID
		if serial%2 == 1 {
			rel := activity(^serial)
			related = &rel
		}
		h.deepen(func() { err = k.EventWriteTransfer(r, d, &act, related, data) })
	}
	// Interleaves: each armed session's switch hook writes the event again, on the same
	// processor, in the middle of the switch (switches; nil when no session is armed, so
	// that a write without one allocates none of their state).
	var sw *switches
	for _, ms := range m.sessions {
		if ms.armed {
			if sw == nil {
				sw = &switches{h: h, r: r, mr: mr, o: o, ev: ev, api: api, proc: proc}
			}
			sw.arm(ms)
		}
	}
	if api != APIEx && h.m.nproc > 1 {
		var ok bool
		if proc, ok = h.pin.on(k.CurrentProcessor, call); !ok {
			api = APIEx // the processor cannot be known: write as EventWriteEx on the one named
			proc = o.Processor
		}
	} else if api != APIEx {
		proc = 0
		call()
	}
	switch api {
	case APIEx:
		// Every other EventWriteEx goes without a Tally, which takes the emulator's
		// one-session path where it applies; its outcome per session is then read from
		// the sessions' counters, as for EventWrite.
		ev.tid = uint32(200 + proc)
		opts := &h.opts
		*opts = emu.WriteOptions{Processor: proc, ThreadID: ev.tid}
		if useTally = h.writes%2 == 1; useTally {
			opts.Tally = tally
		}
		if sw != nil {
			sw.api, sw.proc = api, proc
		}
		h.deepen(func() { err = k.EventWriteEx(r, d, opts, data) })
	case APITransfer:
		ev.activity = activity(serial)
		if serial%2 == 1 {
			extra = session.RelatedItemSize
		}
	}
	h.results = append(h.results, err)
	h.proc = proc
	// The model's writes in the middle of a switch: the emulator's, in the order they ran.
	if sw != nil {
		sw.model()
	}
	retired := 0
	for _, ms := range m.sessions {
		retired -= ms.retired
	}
	want, werr := m.write(mr, o.Level, o.Any, o.Payload, extra, proc, ev)
	for _, ms := range m.sessions {
		ms.onSwitch = nil
		retired += ms.retired
	}
	h.cov.Retired += retired
	if e := h.sameErr(o, err, werr); e != nil {
		return e
	}
	var fired []*firing
	if sw != nil {
		fired = sw.fired
	}
	if !useTally {
		h.tallyOf(tally, want, fired)
	}
	if err := h.compareTally(apiNames[api], proc, o.ID, tally, want); err != nil {
		return err
	}
	// The writes in the middle of switches, once the write itself agrees: a write that
	// went where the model says it does not shows as that, not as a switch.
	if sw != nil {
		if err := h.compareFired(sw.fired, sw.modelFired, sw.nestedWant, sw.nestedErr); err != nil {
			return err
		}
	}
	return h.compareOverwritten()
}

// switches is one write's interleaving: what the switch hooks of its armed sessions
// share, on the emulator's side (fired) and the model's.
type switches struct {
	h   *harness
	r   *emu.Registration
	mr  *mReg
	o   Op
	ev  rec // the interrupted write's record
	api API // the call the write makes when a hook fires, and on which processor
	// (EventWriteEx's; the others' hooks read the processor they run on)
	proc int

	fired      []*firing // the emulator's writes in switches, in the order they ran
	modelFired []*mSession
	nestedWant []outcomes
	nestedErr  []error
}

// arm sets session ms's switch hook: the next switch of one of its buffers writes the
// event again, with EventWriteEx on the same processor.
func (sw *switches) arm(ms *mSession) {
	h, k := sw.h, sw.h.k
	k.Session(emu.TraceHandle(ms.handle)).SetSwitchHook(func() {
		p := sw.proc
		if sw.api != APIEx {
			p = 0
			if h.m.nproc > 1 {
				p = k.CurrentProcessor()
			}
		}
		// Listed before it runs, as the model lists it: a hook that fires inside
		// this write (another armed session's switch) comes after it.
		f := &firing{session: ms}
		sw.fired = append(sw.fired, f)
		h.nestedWrite(f, sw.r, &h.desc, sw.o.Payload, p, sw.ev) // appends to fired
	})
}

// model disarms the emulator's hooks and sets the model's: each armed session's next
// switch in the model writes the event the emulator's hook wrote there, if it did.
func (sw *switches) model() {
	h, m := sw.h, sw.h.m
	for _, ms := range m.sessions {
		if !ms.armed {
			continue
		}
		h.k.Session(emu.TraceHandle(ms.handle)).SetSwitchHook(nil)
		ms.onSwitch = func() {
			// Listed before it runs, as the emulator's: a write nested in this one
			// comes after it.
			i := len(sw.modelFired)
			sw.modelFired = append(sw.modelFired, ms)
			sw.nestedWant, sw.nestedErr = append(sw.nestedWant, nil), append(sw.nestedErr, nil)
			if i < len(sw.fired) && sw.fired[i].session == ms {
				w, e := m.write(sw.mr, sw.o.Level, sw.o.Any, sw.o.Payload, 0, sw.fired[i].proc, sw.fired[i].ev) // appends to them
				sw.nestedWant[i], sw.nestedErr[i] = w, e
			}
		}
	}
}

// tallyOf writes to tally what a write did, read from the sessions' counters: their
// losses and denials since h.before (less those of the writes fired inside it), and the
// deliveries the model predicts (want), which the Checker's conservation rule and the
// sinks' records hold the emulator to. tally holds zeros on entry.
func (h *harness) tallyOf(tally *emu.Tally, want outcomes, fired []*firing) {
	before, after := &h.before, &h.after
	h.stats(after)
	for _, ms := range h.m.sessions {
		id := ms.id
		tally.Lost[id] = after[id].lost - before[id].lost
		tally.Denied[id] = after[id].denied - before[id].denied
		for _, f := range fired { // the counters hold the interleaved writes' too
			tally.Lost[id] -= f.tally.Lost[id]
			tally.Denied[id] -= f.tally.Denied[id]
		}
		tally.Delivered[id] = want.of(id).delivered
	}
}

// compareTally holds what a write did in each session to the model's prediction, counts
// it in the coverage (with the event's id, for the sessions whose PMC configuration
// selects it) and tells the Checker the events each session accepted.
func (h *harness) compareTally(api string, proc int, event uint16, tally *emu.Tally, want outcomes) error {
	k, m := h.k, h.m
	rest := &h.rest
	*rest = *tally // the tally less the sessions the model predicts: nothing may be left
	for _, w := range want {
		id := w.id
		if tally.Delivered[id] != w.delivered || tally.Lost[id] != w.lost || tally.Denied[id] != w.denied {
			return tallyMismatch(api, proc, id, tally, w.outcome)
		}
		h.cov.Denied += w.denied
		h.cov.Delivered += w.delivered
		h.cov.Lost += w.lost
		if ms := m.byID[id]; ms != nil && ms.pmcExtra(uint32(event), false) > 0 {
			h.cov.Counted += w.delivered
		}
		if w.delivered != 0 {
			h.check.Accepted(k.Session(emu.TraceHandle(m.byID[id].handle)), w.delivered)
		}
		rest.Delivered[id], rest.Lost[id], rest.Denied[id] = 0, 0, 0
	}
	if *rest != zeroTally { // one comparison of the whole, not a loop over every logger id
		for id := range rest.Delivered {
			if rest.Delivered[id]|rest.Lost[id]|rest.Denied[id] != 0 {
				return tallyMismatch(api, proc, uint16(id), tally, outcome{})
			}
		}
	}
	return nil
}

// zeroTally is what a write's tally holds once the counts of the sessions it may reach
// are taken out; nothing writes it. Both harnesses compare with it rather than with a
// literal, which the compiler would build in the caller's frame: 1.7 KB that a
// concurrent worker goroutine's stack would grow for.
var zeroTally emu.Tally

// tallyMismatch is compareTally's report of a write whose outcome in logger id's session
// is not the model's.
func tallyMismatch(api string, proc int, id uint16, tally *emu.Tally, w outcome) error {
	return fmt.Errorf("%s on processor %d, logger %d: emulator delivered %d lost %d denied %d, model expects %d, %d and %d",
		api, proc, id, tally.Delivered[id], tally.Lost[id], tally.Denied[id], w.delivered, w.lost, w.denied)
}

// compareOverwritten holds every session's count of events its ring overwrote to the
// model's.
func (h *harness) compareOverwritten() error {
	for _, ms := range h.m.sessions {
		h.k.Session(emu.TraceHandle(ms.handle)).ReadStats(&h.st)
		if got := h.st.EventsOverwritten; got != ms.overwritten {
			return fmt.Errorf("session %s: the ring overwrote %d events, model expects %d", ms.name, got, ms.overwritten)
		}
	}
	return nil
}

// counts is what stats reads of one session.
type counts struct{ lost, denied uint64 }

// stats writes to out the loss and denial counters of every session the model knows, by
// logger id. out is one of the harness's own arrays, not a result: 1.1 KB returned by
// value in each write's frame, with the tally beside it, grew every run's goroutine
// stack from inside the write.
func (h *harness) stats(out *[session.LoggerIDs]counts) {
	*out = [session.LoggerIDs]counts{}
	for _, ms := range h.m.sessions {
		if l := h.k.Session(emu.TraceHandle(ms.handle)); l != nil {
			st := &h.st
			l.ReadStats(st)
			out[ms.id] = counts{st.EventsLost, st.EventsDenied}
		}
	}
}

// firing is one write the emulator ran inside another writer's buffer switch (an armed
// session's switch hook): its session, its record and processor, and what it did.
type firing struct {
	session *mSession
	proc    int
	ev      rec
	tally   emu.Tally
	err     error
}

// nestedWrite writes, from the switch hook of f's session, the event the interrupted
// write is writing, on processor p with EventWriteEx, a serial of its own and its own
// payload memory (the interrupted write has not copied its payload yet), and records in f
// what it wrote and what it did.
func (h *harness) nestedWrite(f *firing, r *emu.Registration, d *emu.EventDescriptor, n, p int, outer rec) {
	h.serial++
	data := make([]byte, n)
	if n >= 8 {
		binary.LittleEndian.PutUint64(data[n-8:], h.serial)
	}
	ev := rec{hook: d.ID, level: outer.level, keyword: outer.keyword, pid: processID, tail: h.serial, tid: uint32(200 + p), provider: outer.provider}
	f.proc, f.ev = p, ev
	f.err = h.k.EventWriteEx(r, d, &emu.WriteOptions{Processor: p, ThreadID: ev.tid, Tally: &f.tally}, data)
}

// compareFired holds the writes the emulator ran inside buffer switches to those the
// model ran: the same sessions in the same order, the same error and, for each session,
// the same deliveries, losses and denials. Each fired session is disarmed.
func (h *harness) compareFired(fired []*firing, model []*mSession, want []outcomes, werr []error) error {
	if len(fired) != len(model) {
		names := func(n int, at func(int) *mSession) (out []string) {
			for i := range n {
				out = append(out, at(i).name)
			}
			return out
		}
		return fmt.Errorf("interleaved writes: the emulator's switch hooks ran in sessions %v, the model's in %v",
			names(len(fired), func(i int) *mSession { return fired[i].session }), names(len(model), func(i int) *mSession { return model[i] }))
	}
	for i, f := range fired {
		if f.session != model[i] {
			return fmt.Errorf("interleaved write %d: the emulator's ran in session %s, the model's in %s", i, f.session.name, model[i].name)
		}
		f.session.armed = false
		h.cov.Interleaved++
		if err := sameErr("interleaved write", f.err, werr[i]); err != nil {
			return err
		}
		if err := h.compareTally(fmt.Sprintf("interleaved write %d in session %s's switch", i, f.session.name), f.proc, f.ev.hook, &f.tally, want[i]); err != nil {
			return err
		}
	}
	return nil
}
