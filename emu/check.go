package emu

import (
	"fmt"
	"sort"
	"strings"

	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
)

// Violation is one broken rule the Checker found: the rule's name and what was seen.
type Violation struct {
	Rule   string
	Detail string
}

func (v Violation) String() string { return v.Rule + ": " + v.Detail }

// Checker walks a live kernel and reports every broken invariant: the rules of
// guidtable.Table.Check and session.Logger.Check, and these of the kernel's own:
//
//   - logger-table: a running logger sits at its own id, below the version's table size
//     (a private logger: in the ids after the kernel's table), under its own name, with a
//     handle no other running logger has.
//   - system-logger: a running kernel logger with EVENT_TRACE_SYSTEM_LOGGER_MODE holds
//     exactly the system-logger slot it records, no other session holds one, and each used
//     slot holds such a session.
//   - slot-target: every used enable slot names a running (or stopping) logger and
//     routes to that logger.
//   - reg-link: an open registration is on exactly one trace list, its GUID entry's, and
//     on a group list exactly when it has a group entry; a closed one is on none.
//   - reg-mask: an open registration's EnableMask and GroupEnableMask equal the used-slot
//     bits of its GUID and group entries; a closed one routes nowhere.
//   - counter-monotone: a session's EventsLost, BuffersWritten, LogBuffersLost,
//     RealTimeBuffersLost, RealTimeEventsLost, peak buffers and per-processor buffer
//     counts never decrease from one Check to the next.
//   - conservation: for a session whose sink is a session.EventCounter and whose accepted
//     events the caller reported with Accepted, events accepted == events the sink
//     received + events still in the session's unsealed buffers.
//
// Check must be called while no event write is in progress; control calls may run.
// A Checker keeps what it saw, so use one per kernel for a whole run.
type Checker struct {
	k        *Kernel
	last     map[*session.Logger]*seen
	accepted map[*session.Logger]uint64
}

// NewChecker returns a checker for k.
func NewChecker(k *Kernel) *Checker {
	return &Checker{k: k, last: map[*session.Logger]*seen{}, accepted: map[*session.Logger]uint64{}}
}

// seen is what a Checker read of a session's counters: at the last Check and at this one.
// The two swap at each Check, so that reading the counters allocates nothing once the
// session is known.
type seen struct{ prev, now session.Stats }

// Accepted adds n to the events writers were told session l accepted (the Delivered
// counts of their Tallies).
func (c *Checker) Accepted(s *Session, n uint64) {
	if s != nil {
		c.accepted[s.l] += n
	}
}

// Check walks the kernel once and returns every violation found, sorted by rule.
func (c *Checker) Check() []Violation {
	var out []Violation
	report := func(rule, detail string) { out = append(out, Violation{rule, detail}) }
	k := c.k

	k.mu.Lock()
	// By logger id; running is the ids in use, in order. Arrays and a short list, not
	// maps: a fuzz run checks after most steps.
	var loggers [session.LoggerIDs]*session.Logger
	var running []uint16
	limit := maxLoggers.At(k.version)
	for i := range k.loggers {
		l := k.loggers[i].Load()
		if l == nil {
			continue
		}
		loggers[i] = l
		running = append(running, uint16(i))
		private := l.Kind() == logmode.Private
		if int(l.ID()) != i || (!private && i >= limit) || (private && i < session.MaxLoggers) {
			report("logger-table", fmt.Sprintf("%v %q has id %d in slot %d (kernel table size %d)", l.Kind(), l.Name(), l.ID(), i, limit))
		}
		si, holds := l.SystemLoggerIndex()
		if wants := !private && l.Mode()&logmode.SystemLogger != 0; wants != holds || holds && (si >= MaxSystemLoggers || k.sysLoggers[si] != l) {
			report("system-logger", fmt.Sprintf("%v %q (mode %v) holds system-logger slot %d: %v", l.Kind(), l.Name(), logmode.Mode(l.Mode()), si, holds))
		}
		if id, ok := k.names[lowerName(l.Name())]; !ok || id != uint16(i) {
			report("logger-table", fmt.Sprintf("logger %q in slot %d is registered under id %d (found %v)", l.Name(), i, id, ok))
		}
		for _, j := range running[:len(running)-1] {
			if handleOf(loggers[j]) == handleOf(l) {
				report("logger-table", fmt.Sprintf("loggers %d and %d share handle %#x", j, i, uint64(handleOf(l))))
			}
		}
	}
	for i, l := range k.sysLoggers {
		if l == nil {
			continue
		}
		if si, ok := l.SystemLoggerIndex(); !ok || si != i || int(l.ID()) >= len(loggers) || loggers[l.ID()] != l {
			report("system-logger", fmt.Sprintf("system-logger slot %d holds %q, which is not a running system logger of that slot", i, l.Name()))
		}
	}
	for name, id := range k.names {
		if int(id) >= len(loggers) || loggers[id] == nil {
			report("logger-table", fmt.Sprintf("name %q maps to id %d, where no logger runs", name, id))
		}
	}
	var stopping [session.LoggerIDs]bool
	for id := range k.stopping {
		if int(id) < len(stopping) {
			stopping[id] = true
		}
	}

	onTrace := map[*regentry.Entry][]*guidtable.Entry{}
	onGroup := map[*regentry.Entry][]*guidtable.Entry{}
	k.guids.Check(report, func(e *guidtable.Entry, list []guidtable.Registration) {
		for i := 0; i < guidtable.Slots; i++ {
			s := e.Slot(i)
			if s == nil {
				continue
			}
			var l *session.Logger
			if int(s.LoggerID) < len(loggers) {
				l = loggers[s.LoggerID]
			}
			if (l == nil && (int(s.LoggerID) >= len(stopping) || !stopping[s.LoggerID])) || (l != nil && s.Target != l) {
				report("slot-target", fmt.Sprintf("%v entry %s slot %d names logger %d, which is not running there", e.Type(), e.GUID(), i, s.LoggerID))
			}
		}
		for _, x := range list {
			r, ok := x.(*regentry.Entry)
			if !ok {
				continue
			}
			if e.Type() == guidtable.GroupGuid {
				onGroup[r] = append(onGroup[r], e)
			} else {
				onTrace[r] = append(onTrace[r], e)
			}
		}
	})
	for r := range k.regs {
		c.checkRegistration(r, onTrace[r], onGroup[r], report)
	}
	for r, es := range onTrace {
		if _, open := k.regs[r]; !open {
			report("reg-link", fmt.Sprintf("registration %d is closed but still on %d trace lists", r.Index(), len(es)))
		}
	}
	for r, es := range onGroup {
		if _, open := k.regs[r]; !open {
			report("reg-link", fmt.Sprintf("registration %d is closed but still on %d group lists", r.Index(), len(es)))
		}
	}
	k.mu.Unlock()

	for _, id := range running {
		l := loggers[id]
		if l.CalledFromSink() {
			continue // the buffer being handed on is in no list until the Sink returns
		}
		pending, sealed := l.Check(report)
		c.checkCounters(l, report)
		if want, told := c.accepted[l]; told && sealed >= 0 {
			over := c.last[l].now.EventsOverwritten // read by checkCounters just now
			if got := uint64(sealed) + uint64(pending) + over; got != want {
				report("conservation", fmt.Sprintf("session %q: writers were told %d events were accepted; the sink has %d, unsealed buffers %d, the ring overwrote %d",
					l.Name(), want, sealed, pending, over))
			}
		}
	}
	if len(out) > 1 {
		sort.SliceStable(out, func(i, j int) bool { return out[i].Rule < out[j].Rule })
	}
	return out
}

// checkRegistration checks one open registration's links and masks.
func (c *Checker) checkRegistration(r *regentry.Entry, trace, group []*guidtable.Entry, report func(rule, detail string)) {
	ge, gg := r.GuidEntry(), r.GroupEntry()
	if len(trace) != 1 || trace[0] != ge {
		report("reg-link", fmt.Sprintf("registration %d is on %d trace lists, want exactly its GUID entry's", r.Index(), len(trace)))
	}
	if (gg == nil && len(group) != 0) || (gg != nil && (len(group) != 1 || group[0] != gg)) {
		report("reg-link", fmt.Sprintf("registration %d is on %d group lists with group entry %v", r.Index(), len(group), gg != nil))
	}
	if r.Closed() {
		report("reg-mask", fmt.Sprintf("registration %d is open in the kernel but marked closed", r.Index()))
		return
	}
	if ge != nil && r.EnableMask() != ge.Mask() {
		report("reg-mask", fmt.Sprintf("registration %d of %s has EnableMask %08b, its GUID entry's used slots are %08b",
			r.Index(), ge.GUID(), r.EnableMask(), ge.Mask()))
	}
	var want uint8
	if gg != nil {
		want = gg.Mask()
	}
	if r.GroupEnableMask() != want {
		report("reg-mask", fmt.Sprintf("registration %d has GroupEnableMask %08b, its group entry's used slots are %08b",
			r.Index(), r.GroupEnableMask(), want))
	}
}

// checkCounters compares l's counters with the last Check's.
func (c *Checker) checkCounters(l *session.Logger, report func(rule, detail string)) {
	st, ok := c.last[l]
	if !ok {
		st = new(seen)
		c.last[l] = st
	}
	st.prev, st.now = st.now, st.prev
	l.ReadStats(&st.now)
	if !ok {
		return
	}
	prev, now := &st.prev, &st.now
	var fell []string
	less := func(name string, a, b uint64) {
		if b < a {
			fell = append(fell, fmt.Sprintf("%s %d -> %d", name, a, b))
		}
	}
	less("EventsLost", prev.EventsLost, now.EventsLost)
	less("BuffersWritten", prev.BuffersWritten, now.BuffersWritten)
	less("LogBuffersLost", prev.LogBuffersLost, now.LogBuffersLost)
	less("RealTimeBuffersLost", prev.RealTimeBuffersLost, now.RealTimeBuffersLost)
	less("RealTimeEventsLost", prev.RealTimeEventsLost, now.RealTimeEventsLost)
	less("PeakBuffers", uint64(prev.PeakBuffers), uint64(now.PeakBuffers))
	for i := range min(len(prev.BuffersPerStream), len(now.BuffersPerStream)) {
		if a, b := prev.BuffersPerStream[i], now.BuffersPerStream[i]; b < a { // named only when it fell: this runs on every check
			less(fmt.Sprintf("buffers written on processor %d", i), a, b)
		}
	}
	if len(fell) > 0 {
		report("counter-monotone", fmt.Sprintf("session %q: %s", l.Name(), strings.Join(fell, ", ")))
	}
}

// Forget drops what the checker remembers of sessions no longer running, so a long run
// does not keep every stopped session alive.
func (c *Checker) Forget() {
	running := map[*session.Logger]bool{}
	for _, l := range c.k.running() {
		running[l] = true
	}
	for l := range c.last {
		if !running[l] {
			delete(c.last, l)
			delete(c.accepted, l)
		}
	}
}
