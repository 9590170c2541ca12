package fuzz

import (
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/winver"
)

type seed struct {
	name string
	data []byte
}

// seeds are programs written by hand, each exercising one part of the interplay; they
// are the fuzzer's starting corpus and run as plain tests.
func seeds() []seed {
	if Workers != 3 {
		panic("seed regression-group-left-enabled places its operations for three concurrent workers")
	}
	enc := func(name string, v winver.Version, nproc int, ops ...Op) seed {
		b, err := Encode(Program{Version: v, Processors: nproc, Ops: ops})
		if err != nil {
			panic(name + ": " + err.Error())
		}
		return seed{name, b}
	}
	// start starts a real-time session with the extra mode bits given; mode 3 is the
	// invalid SEQUENTIAL|CIRCULAR as it stands.
	start := func(s int, kb, min, max, mode uint32) Op {
		if mode != logmode.Sequential|logmode.Circular {
			mode |= logmode.RealTime
		}
		return Op{Kind: OpStart, Session: s, BufferKB: kb, MinBufs: min, MaxBufs: max, Mode: mode}
	}
	startAs := func(s int, mode uint32, prop uint8) Op {
		return Op{Kind: OpStart, Session: s, BufferKB: 4, Mode: mode, StartProp: prop}
	}
	reg := func(p int) Op { return Op{Kind: OpRegister, Provider: p} }
	enable := func(s, p int, level uint8, any, all uint64) Op {
		return Op{Kind: OpEnable, Session: s, Provider: p, Level: level, Any: any, All: all}
	}
	write := func(r int, level uint8, kw uint64, payload, cpu int) Op {
		return Op{Kind: OpWrite, Reg: r, Level: level, Any: kw, Payload: payload, Processor: cpu, ID: 1}
	}
	plain := func(o Op) Op { o.API = APIPlain; return o }
	q := func(s int) Op { return Op{Kind: OpQuery, Session: s} }
	interleave := func(s int) Op { return Op{Kind: OpHold, Session: s, Count: holdInterleave} }
	transfer := func(o Op) Op { o.API = APITransfer; return o }
	repeat := func(n int, o Op) []Op {
		out := make([]Op, n)
		for i := range out {
			out[i] = o
		}
		return out
	}
	var fill []Op
	for i := 0; i < 60; i++ {
		fill = append(fill, write(0, 4, 0, 100, i%3))
	}
	pmcOp := func(s int, flags uint8, n int) Op { return Op{Kind: OpPMC, Session: s, PMCFlags: flags, Count: n} }
	sys := func(s, hook, payload, cpu int) Op {
		return Op{Kind: OpSysWrite, Session: s, Count: hook, Payload: payload, Processor: cpu}
	}
	var pmcFill []Op
	for i := 0; i < 40; i++ {
		pmcFill = append(pmcFill, write(0, 4, 0, 100, i%2), sys(0, i%3, 16, i%2))
	}
	return []seed{
		// PMC: the events list before counters is refused; counters (TraceSetInformation),
		// too many for a second session, events (native), writes selected and not,
		// a second list refused, stop returns the counters for another session.
		enc("pmc-counters-events-writes", winver.V2004, 2,
			append(append([]Op{start(0, 4, 0, 0, 0), start(1, 4, 0, 0, 0), reg(0), enable(0, 0, 5, 0, 0),
				pmcOp(0, pmcEvents, 2), pmcOp(0, 0, 5), pmcOp(1, pmcNative, 4), pmcOp(1, pmcNative, 3),
				pmcOp(0, pmcEvents|pmcNative, 5), pmcOp(0, pmcEvents|pmcNative, 2)}, pmcFill...),
				pmcOp(0, pmcEvents, 1), pmcOp(0, 0, 1), sys(0, 1, 0xFFFF-0x50+1, 0), Op{Kind: OpStop, Session: 0},
				pmcOp(1, 0, 5), pmcOp(2, 0, 1))...),
		enc("pmc-versions", winver.V1607, 1,
			start(0, 4, 0, 0, 0), pmcOp(0, pmcNative, 5), pmcOp(0, 0, 4), pmcOp(0, pmcEvents, 4), sys(0, 0, 16, 0), sys(0, 4, 16, 0)),
		enc("start-register-enable-write", winver.V2004, 2,
			start(0, 4, 0, 0, 0), reg(0), enable(0, 0, 5, 0, 0), write(0, 4, 1, 16, 0),
			Op{Kind: OpQuery, Session: 0}, Op{Kind: OpStop, Session: 0}),
		enc("pre-enable-then-register", winver.V2004, 1,
			start(1, 8, 0, 0, 0), enable(1, 2, 3, 2, 0), reg(2), reg(2), write(1, 3, 2, 1, 0), write(0, 4, 2, 1, 0)),
		enc("fill-buffers-and-flush", winver.V6_1, 3,
			append(append([]Op{start(0, 4, 0, 0, 0), reg(0), enable(0, 0, 0, 0, 0)}, fill...),
				Op{Kind: OpFlush, Session: 0}, write(0, 1, 0, 0, 2), Op{Kind: OpStop, Session: 0})...),
		enc("too-big-and-more-data", winver.V2004, 1,
			start(0, 4, 0, 0, 0), start(2, 0, 0, 0, 0x08000000), reg(1), enable(0, 1, 0, 0, 0), enable(2, 1, 0, 0, 0),
			write(0, 1, 0, 9000, 0), write(0, 1, 0, 0xFFFF-0x50, 0), write(0, 1, 0, 0xFFFF-0x50+1, 0)),
		enc("dependent-sessions-after-failure", winver.V2004, 1,
			start(0, 4, 0, 0, 0), start(1, 0, 0, 0, 0), reg(0), enable(0, 0, 0, 0, 0), enable(1, 0, 0, 0, 0),
			write(0, 1, 0, 9000, 0), Op{Kind: OpQuery, Session: 1}),
		enc("groups", winver.V10_0, 2,
			start(0, 4, 0, 0, 0), reg(0), Op{Kind: OpTraits, Reg: 0, Group: true, Provider: 3},
			Op{Kind: OpEnable, Session: 0, Provider: 3, Group: true, Level: 5}, write(0, 5, 0, 16, 1),
			enable(0, 0, 5, 0, 0), write(0, 5, 0, 16, 1), Op{Kind: OpTraits, Reg: 0, Provider: 4, Group: true},
			Op{Kind: OpDisable, Session: 0, Provider: 3, Group: true}, Op{Kind: OpTraits, Reg: 0}),
		enc("groups-before-10", winver.V6_3, 1,
			start(0, 4, 0, 0, 0), reg(0), Op{Kind: OpEnable, Session: 0, Provider: 3, Group: true}, Op{Kind: OpTraits, Reg: 0, Group: true, Provider: 3}),
		enc("names-and-modes", winver.V6_0, 4,
			start(0, 4, 0, 0, 0), start(4, 4, 0, 0, 0), start(1, 4, 0, 0, 3), start(2, 0, 11, 3, 0x18000000),
			Op{Kind: OpUpdate, Session: 2, MaxBufs: 50}, Op{Kind: OpQuery, Session: 2}, Op{Kind: OpStop, Session: 4},
			Op{Kind: OpStop, Session: 0}, Op{Kind: OpFlush, Session: 0}),
		enc("capture-disable-unregister", winver.V2004, 2,
			start(0, 4, 0, 0, 0), start(1, 4, 0, 0, 0), reg(1), Op{Kind: OpCapture, Session: 0, Provider: 1},
			enable(0, 1, 2, 1, 1), enable(1, 1, 4, 2, 0), Op{Kind: OpCapture, Session: 1, Provider: 1},
			Op{Kind: OpDisable, Session: 0, Provider: 1}, Op{Kind: OpUnregister, Reg: 0}, Op{Kind: OpUnregister, Reg: 0},
			write(0, 1, 1, 1, 0), Op{Kind: OpStop, Session: 1}),
		enc("no-event-register-on-5.2", winver.V5_2, 1,
			start(0, 4, 0, 0, 0), reg(0), write(0, 1, 0, 1, 0), Op{Kind: OpUnregister}),
		enc("nine-sessions-one-provider", winver.V2004, 1, nineSessions()...),
		// Regression: joining an already enabled group through traits queued the enable
		// callback but returned without delivering it (found by TestModelCatchesInjectedFaults'
		// random programs).
		enc("regression-traits-join-enabled-group-calls-back", winver.V10_0, 1,
			start(0, 0, 0, 0, 0), Op{Kind: OpEnable, Session: 0, Provider: 1, Group: true, Level: 2, Any: 3},
			reg(2), Op{Kind: OpTraits, Reg: 0, Group: true, Provider: 1}),
		// Regression: EnableTraceEx2 on 5.2 failed with a GUID-type error instead of
		// ERROR_NOT_SUPPORTED (found by TestRandomPrograms).
		enc("regression-enable-before-6.0-not-supported", winver.V5_2, 2,
			start(1, 4, 0, 0, 0), enable(1, 2, 3, 0, ^uint64(0))),
		// Regression (model): a buffer switch with no spare buffer grows the session by
		// one before the full buffer is written (found by TestRandomPrograms).
		// Modes through each version's table: refused, adjusted and ignored flags; a
		// NONSTOPPABLE AutoLogger that refuses to stop; a SECURE session that denies the
		// provider; a system logger; private loggers (refused before 1703 without
		// PRIVATE_IN_PROC).
		enc("modes-6.1", winver.V6_1, 2,
			startAs(0, 0, 0), startAs(0, logmode.Circular, startLogFile), startAs(0, logmode.Buffering|logmode.RealTime, 0),
			startAs(1, logmode.RealTime|logmode.NonStoppable, startAutoLogger), Op{Kind: OpStop, Session: 1},
			startAs(2, logmode.RealTime|logmode.Secure, 0), reg(0), enable(2, 0, 0, 0, 0), enable(0, 0, 0, 0, 0),
			write(0, 4, 0, 16, 0), startAs(3, logmode.PrivateLogger, startLogFile),
			startAs(3, logmode.PrivateLogger|logmode.PrivateInProc|logmode.PagedMemory, startLogFile), enable(3, 0, 0, 0, 0),
			write(0, 4, 0, 16, 1), Op{Kind: OpQuery, Session: 0}, Op{Kind: OpStop, Session: 3}),
		enc("modes-2004", winver.V2004, 2,
			startAs(0, logmode.Circular, startLogFile), startAs(0, logmode.Circular, startLogFile|startMaxSize),
			startAs(1, logmode.RealTime|logmode.SystemLogger, 0), startAs(2, logmode.Buffering|logmode.Compressed, 0),
			startAs(3, logmode.PrivateLogger, startLogFile), startAs(4, logmode.PrivateLogger, startLogFile),
			reg(1), enable(3, 1, 0, 0, 0), enable(1, 1, 0, 0, 0), write(0, 4, 0, 100, 0), Op{Kind: OpStop, Session: 3}),
		// A logger held back: full buffers wait, the writers run out of free buffers and
		// lose events, then the logger runs and the shortage grows the session.
		enc("held-logger-runs-out", winver.V1809, 1,
			append(append([]Op{start(0, 4, 2, 10, 0), reg(0), enable(0, 0, 0, 0, 0), {Kind: OpHold, Session: 0, Count: 1}},
				repeat(6, write(0, 4, 0, 3944, 0))...),
				Op{Kind: OpHold, Session: 0}, write(0, 4, 0, 3944, 0), Op{Kind: OpQuery, Session: 0}, Op{Kind: OpStop, Session: 0})...),
		// EventWrite caches the session a registration's events go to; enabling,
		// disabling and stopping must each make it look again.
		enc("eventwrite-route", winver.V2004, 2,
			start(0, 4, 0, 0, 0), start(1, 4, 0, 0, 0), reg(1), enable(0, 1, 5, 0, 0),
			plain(write(0, 4, 1, 16, 0)), plain(write(0, 4, 1, 16, 0)), enable(0, 1, 2, 0, 0), plain(write(0, 4, 1, 16, 0)),
			enable(1, 1, 3, 0, 0), plain(write(0, 3, 1, 16, 0)), Op{Kind: OpDisable, Session: 0, Provider: 1},
			plain(write(0, 3, 1, 16, 0)), transfer(write(0, 2, 1, 100, 0)), Op{Kind: OpStop, Session: 1}, plain(write(0, 1, 1, 16, 0))),
		// A 16 KB SEQUENTIAL file: its header buffer and three more, then it is full.
		enc("file-full", winver.V2004, 1,
			append(append([]Op{startAs(0, logmode.Sequential|logmode.KBytesForSize, startLogFile|startMaxSize), reg(0), enable(0, 0, 0, 0, 0)},
				repeat(5, write(0, 4, 0, 3944, 0))...), Op{Kind: OpQuery, Session: 0}, Op{Kind: OpStop, Session: 0})...),
		// A write in the middle of another writer's buffer switch (the switch hook), as
		// a second thread would: it switches first, the first writer's install fails and
		// it retires the buffer it took; on a stream flushed empty; with EventWrite on a
		// pinned processor; and with the logger held, so that the second writer finds
		// the free list empty and loses its event.
		enc("interleaved-switch", winver.V2004, 2,
			append(append(append([]Op{start(0, 4, 2, 10, 0), start(1, 4, 2, 10, 0), reg(0), enable(0, 0, 0, 0, 0), enable(1, 0, 0, 0, 0),
				interleave(0)}, repeat(3, write(0, 4, 0, 3944, 0))...),
				interleave(1), Op{Kind: OpFlush, Session: 1}, write(0, 4, 0, 100, 1), interleave(0), plain(write(0, 4, 0, 3944, 0)),
				Op{Kind: OpStop, Session: 1}, start(2, 4, 2, 10, 0), enable(2, 0, 0, 0, 0), Op{Kind: OpHold, Session: 2, Count: 1},
				write(0, 4, 0, 3944, 0), interleave(2)),
				append(repeat(2, write(0, 4, 0, 3944, 0)), Op{Kind: OpHold, Session: 2}, Op{Kind: OpQuery, Session: 2}, Op{Kind: OpStop, Session: 2})...)...),
		// A TraceLogging provider of package etw: its own filter (level, keywords) before
		// the kernel's, and records carrying its traits and the event's schema; refused
		// traits before Windows 10. One processor: the harness writes through a provider
		// only where it can pin the processor down, which needs no pin there, so the seed
		// writes on machines without RDPID or RDTSCP too (arm64, 386).
		enc("tracelogging-provider", winver.V2004, 1,
			start(0, 4, 2, 10, 0), Op{Kind: OpRegister, Provider: 1, TL: true}, enable(0, 1, 3, 0x2, 0),
			write(0, 3, 0x2, 100, 0), write(0, 4, 0x2, 100, 0), write(0, 3, 0x1, 16, 0), write(0, 2, 0, 100, 0),
			write(0, 1, 0x2, 0xFFFF-0x50, 0), Op{Kind: OpDisable, Session: 0, Provider: 1}, write(0, 3, 0x2, 100, 0),
			enable(0, 1, 0, 0, 0), write(0, 5, 0x8000000000000000, 100, 0), Op{Kind: OpQuery, Session: 0}, Op{Kind: OpStop, Session: 0}),
		enc("tracelogging-before-windows-10", winver.V6_3, 1, start(0, 4, 2, 10, 0), enable(0, 1, 0, 0, 0),
			Op{Kind: OpRegister, Provider: 1, TL: true}, write(0, 3, 0x2, 100, 0)),
		// Regression (harness): a registration that leaves an enabled group hears no
		// callback (EventSetInformation changes membership, not enablement), so its last
		// callback is the group's enable, not its own entry's state. Laid out for
		// RunConcurrent's Workers, three (checked below): worker 1 runs ops 1, 4, 7 and 10
		// in order (the others query), so the run is the same whatever the interleaving
		// (FuzzConcurrent found it with the enable on another worker).
		enc("regression-group-left-enabled", winver.V1809, 1,
			q(0), reg(2), q(1), q(2), Op{Kind: OpTraits, Reg: 0, Group: true, Provider: 0}, q(3), q(0),
			Op{Kind: OpEnable, Session: 1, Provider: 0, Group: true, Level: 255, Any: ^uint64(0)}, q(1), q(2),
			Op{Kind: OpTraits, Reg: 0}),
		// A write reaching one session through its provider's slot and its group's counts
		// once: the session is a private logger, whose id (64) is past the first 64.
		enc("regression-provider-and-group-one-session", winver.V1909, 2,
			Op{Kind: OpStart, Session: 1, BufferKB: 4, MinBufs: 9, MaxBufs: 16, Mode: logmode.PrivateLogger, StartProp: startLogFile},
			reg(0), enable(1, 0, 255, 0, 0), Op{Kind: OpEnable, Session: 1, Provider: 0, Group: true, Level: 255},
			Op{Kind: OpTraits, Reg: 0, Group: true, Provider: 0}, write(0, 255, 0, 100, 0)),
		// Filters (EnableTraceEx2's EVENT_ID and PID filters): each choice on its own
		// and two at once, through EventWrite's cached route, EventWriteEx and
		// EventWriteTransfer, on events of every id; an event the provider's enablement
		// filters out reaching the session through its group's; and filters before 8.1.
		enc("filters", winver.V2004, 1, filterOps()...),
		// EXECUTABLE_NAME filters: the run's own executable, another, the run's in
		// capitals beside another with an EVENT_ID filter; through EventWrite's cached
		// route (one session), then beside a session without filters.
		enc("filters-executable", winver.V2004, 1, executableFilterOps()...),
		// Enable properties that add extended items: a different set in each of two
		// sessions, then none in the second (its records must not take the first's),
		// and items through a group's enablement when the provider's filters drop the
		// event.
		enc("enable-properties", winver.V2004, 1, propertyOps()...),
		// Stacks: STACK_TRACE alone in s0, then with SID and an EVENT_ID filter in s1,
		// each event's item 32 return addresses (the harness writes from deeper), over
		// a buffer switch.
		enc("enable-stack", winver.V2004, 1, stackOps()...),
		enc("filters-before-8.1", winver.V6_2, 1,
			start(0, 4, 2, 10, 0), reg(0), Op{Kind: OpEnable, Session: 0, Provider: 0, Level: 5, Filter: 1}, write(0, 4, 0, 16, 0)),
		enc("regression-growth-before-write", winver.V1607, 3,
			start(1, 4, 2, 10, 0x10000000), reg(2), enable(1, 2, 4, 0, 0), write(0, 4, 0, 0, 0),
			write(0, 2, 2, 4096-0x48-0x50, 1), Op{Kind: OpQuery, Session: 1}),
	}
}

// filterOps is the filters seed: sessions s0 and s1, registration r0 of fuzz-a in group
// fuzz-group-1, and writes of ids 2, 3 and 1 with each API after each enable. One
// processor: EventWrite needs no pin there, so the seed writes through it on machines
// without RDPID or RDTSCP too.
func filterOps() []Op {
	start := func(s int) Op {
		return Op{Kind: OpStart, Session: s, BufferKB: 4, MinBufs: 2, MaxBufs: 10, Mode: logmode.RealTime}
	}
	enable := func(s, filter int) Op { return Op{Kind: OpEnable, Session: s, Provider: 0, Level: 5, Filter: filter} }
	writes := func() (ops []Op) {
		for _, id := range []uint16{2, 3, 1} { // EventWrite caches its route on id 2, then uses it
			for api := range numAPIs {
				ops = append(ops, Op{Kind: OpWrite, Level: 4, Payload: 16, ID: id, API: api})
			}
		}
		return ops
	}
	ops := []Op{start(0), start(1), {Kind: OpRegister}, {Kind: OpTraits, Group: true, Provider: 3}}
	// s0 alone drops id 1 (EventWrite's route holds one session), then takes it through
	// the group's enablement, which has no filter.
	ops = append(append(ops, enable(0, 2)), writes()...)
	ops = append(append(ops, Op{Kind: OpEnable, Session: 0, Provider: 3, Group: true, Level: 5}), writes()...)
	for f := 3; f < firstExeChoice; f++ {
		ops = append(append(ops, enable(1, f)), writes()...)
	}
	return append(ops, Op{Kind: OpDisable, Session: 0, Provider: 0}, Op{Kind: OpWrite, Level: 4, Payload: 16, ID: 1, API: APIPlain},
		Op{Kind: OpStop, Session: 1}, Op{Kind: OpStop, Session: 0})
}

// executableFilterOps is the filters-executable seed: sessions s0 and s1, registration r0
// of fuzz-a, and writes of ids 2, 3 and 1 with each API after each enable of s1 with an
// EXECUTABLE_NAME filter set; first with s1 alone, then with s0 enabled without filters.
func executableFilterOps() []Op {
	start := func(s int) Op {
		return Op{Kind: OpStart, Session: s, BufferKB: 4, MinBufs: 2, MaxBufs: 10, Mode: logmode.RealTime}
	}
	enable := func(s, filter int) Op { return Op{Kind: OpEnable, Session: s, Provider: 0, Level: 5, Filter: filter} }
	writes := func() (ops []Op) {
		for _, id := range []uint16{2, 3, 1} {
			for api := range numAPIs {
				ops = append(ops, Op{Kind: OpWrite, Level: 4, Payload: 16, ID: id, API: api})
			}
		}
		return ops
	}
	ops := []Op{start(0), start(1), {Kind: OpRegister}}
	for round := range 2 {
		if round == 1 {
			ops = append(ops, enable(0, 0))
		}
		for f := firstExeChoice; f < len(filterChoices); f++ {
			ops = append(append(ops, enable(1, f)), writes()...)
		}
	}
	return append(ops, Op{Kind: OpStop, Session: 1}, Op{Kind: OpStop, Session: 0})
}

// stackOps is the enable-stack seed: sessions s0 and s1, registration r0 of fuzz-a, and
// twelve writes (ids 1 and 2 with each API, twice) after each enable: s0 with
// STACK_TRACE, then s1 with STACK_TRACE and SID keeping id 1. Each of s0's records is
// 0x50 + 16 + 8 + 264 bytes, so ten fill a 4 KB buffer and the twelve switch it.
func stackOps() []Op {
	start := func(s int) Op {
		return Op{Kind: OpStart, Session: s, BufferKB: 4, MinBufs: 2, MaxBufs: 10, Mode: logmode.RealTime}
	}
	writes := func() (ops []Op) {
		for range 2 {
			for _, id := range []uint16{1, 2} {
				for api := range numAPIs {
					ops = append(ops, Op{Kind: OpWrite, Level: 4, Payload: 16, ID: id, API: api})
				}
			}
		}
		return ops
	}
	stack := uint32(guidtable.PropertyStackTrace)
	ops := []Op{start(0), start(1), {Kind: OpRegister}, {Kind: OpEnable, Session: 0, Provider: 0, Level: 5, Props: stack}}
	ops = append(ops, writes()...)
	ops = append(ops, Op{Kind: OpEnable, Session: 1, Provider: 0, Level: 5, Filter: 1, Props: stack | guidtable.PropertySID})
	ops = append(ops, writes()...)
	return append(ops, Op{Kind: OpStop, Session: 1}, Op{Kind: OpStop, Session: 0})
}

// propertyOps is the enable-properties seed: sessions s0 and s1, registration r0 of
// fuzz-a in group fuzz-group-1, writes of ids 1 and 2 with each API after each enable.
func propertyOps() []Op {
	start := func(s int) Op {
		return Op{Kind: OpStart, Session: s, BufferKB: 4, MinBufs: 2, MaxBufs: 10, Mode: logmode.RealTime}
	}
	enable := func(s int, props uint32) Op {
		return Op{Kind: OpEnable, Session: s, Provider: 0, Level: 5, Props: props}
	}
	writes := func() (ops []Op) {
		for _, id := range []uint16{2, 1} {
			for api := range numAPIs {
				ops = append(ops, Op{Kind: OpWrite, Level: 4, Payload: 100, ID: id, API: api})
			}
		}
		return ops
	}
	sid, tsid, key, startKey := itemProps[0].prop, itemProps[1].prop, itemProps[2].prop, itemProps[3].prop
	ops := []Op{start(0), start(1), {Kind: OpRegister}, {Kind: OpTraits, Group: true, Provider: 3}}
	ops = append(append(ops, enable(0, sid|key)), writes()...)
	ops = append(append(ops, enable(1, tsid|startKey)), writes()...)
	ops = append(append(ops, enable(1, 0)), writes()...)
	// s1's provider enablement drops id 1, which reaches it through the group's, with
	// every item.
	dropOne := Op{Kind: OpEnable, Session: 1, Provider: 0, Level: 5, Filter: 2, Props: sid}
	ops = append(append(ops, dropOne, Op{Kind: OpEnable, Session: 1, Provider: 3, Group: true, Level: 5, Props: sid | tsid | key | startKey}), writes()...)
	return append(ops, Op{Kind: OpStop, Session: 1}, Op{Kind: OpStop, Session: 0})
}

// nineSessions enables one provider from more sessions than a GUID entry has slots:
// nine sessions, the ninth refused, then a write that every one of the eight takes.
func nineSessions() []Op {
	var ops []Op
	for s := 0; s < 9; s++ {
		ops = append(ops, Op{Kind: OpStart, Session: s, BufferKB: 4, Mode: logmode.RealTime},
			Op{Kind: OpEnable, Session: s, Provider: 0, Level: uint8(s%5 + 1)})
	}
	return append(ops, Op{Kind: OpRegister}, Op{Kind: OpWrite, Level: 1, Payload: 16, ID: 1})
}
