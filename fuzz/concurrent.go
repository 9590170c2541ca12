package fuzz

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
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
// worker i mod Workers. Sessions s0 to s3 are started first, with the settings of the
// program's first start operations; starts during the run are skipped, so a logger id
// always means one session. Each worker registers its own providers.
//
// Nothing can be predicted about the interleaving, so the checks are the ones that hold
// for every interleaving: every error is a Windows error; afterwards the invariant
// checker finds nothing; and for every session, the events its sink received and its
// EventsLost equal what writers were told was delivered and lost. The coverage counts
// the events delivered and lost.
func RunConcurrent(data []byte) (Coverage, error) {
	var cov Coverage
	err := runConcurrent(Decode(data), &cov)
	return cov, err
}

func runConcurrent(p Program, cov *Coverage) error {
	k, err := emu.New(emu.Config{Version: p.Version, Processors: p.Processors, ProcessID: 4242, FileSystem: &etl.MemFS{},
		Clock: clock.NewManualSource(1000, 1), PMCSource: pmc.Synthetic{}, PMCCounters: pmcCounters})
	if err != nil {
		return err
	}
	defer k.Close()

	// Sessions first, from the program's start operations (defaults where it has none).
	handles := map[int]emu.TraceHandle{}
	sinks := map[emu.TraceHandle]*session.Counter{}
	var starts []Op
	for _, o := range p.Ops {
		if o.Kind == OpStart && startable(p.Version, o) {
			starts = append(starts, o)
		}
	}
	var loggers [4]*emu.Session // to read what a BUFFERING ring overwrote, after stop
	for s := 0; s < 4; s++ {
		o := Op{BufferKB: 4, Mode: logmode.RealTime}
		if s < len(starts) {
			o = starts[s]
		}
		sink := &session.Counter{}
		h, err := k.StartTrace(sessionNames[s], o.properties(sink))
		if err != nil {
			return fmt.Errorf("starting %s: %w", sessionNames[s], err)
		}
		handles[s], sinks[h] = h, sink
		loggers[s] = k.Session(h)
	}

	stopped := &finals{m: map[emu.TraceHandle]emu.Properties{}}
	var wg sync.WaitGroup
	tallies := make([]emu.Tally, Workers)
	errs := make([]error, Workers)
	for w := 0; w < Workers; w++ {
		var mine []Op
		for i := w; i < len(p.Ops); i += Workers {
			mine = append(mine, p.Ops[i])
		}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			errs[w] = worker(k, handles, mine, &tallies[w], stopped)
		}(w)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("%w\nprogram:\n%v", err, p)
	}

	// The live kernel, then every session's books.
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
		if sink.EventsWritten()+over != delivered || sink.Err() != nil {
			return fmt.Errorf("session %s: the sink received %d events (%v) and the ring overwrote %d, writers were told %d were delivered\nprogram:\n%v",
				sessionNames[s], sink.EventsWritten(), sink.Err(), over, delivered, p)
		}
	}
	return nil
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

// worker runs its share of a program. Every error must carry a Windows code.
func worker(k *emu.Kernel, handles map[int]emu.TraceHandle, ops []Op, tally *emu.Tally, stopped *finals) error {
	var regs []*emu.Registration
	reg := func(i int) *emu.Registration {
		if len(regs) == 0 {
			return nil
		}
		return regs[i%len(regs)]
	}
	cb := func(guid.GUID, regentry.ControlCode, uint8, uint64, uint64, []byte, any) {}
	for _, o := range ops {
		h := handles[o.Session%4]
		var err error
		switch o.Kind {
		case OpStart:
			continue
		case OpStop:
			var q emu.Properties
			if err = k.StopTrace(h, "", &q); err == nil {
				stopped.put(h, q)
			}
		case OpFlush:
			err = k.FlushTrace(h, "", nil)
		case OpQuery:
			err = k.QueryTrace(h, "", nil)
		case OpUpdate:
			err = k.ControlTrace(h, "", &emu.Properties{MaximumBuffers: o.MaxBufs}, emu.ControlUpdate)
		case OpRegister:
			var r *emu.Registration
			if r, err = k.EventRegister(providers[o.Provider], cb, nil); err == nil {
				regs = append(regs, r)
			}
		case OpUnregister:
			err = k.EventUnregister(reg(o.Reg))
		case OpEnable, OpDisable, OpCapture:
			err = k.EnableTraceEx2(h, providers[o.Provider], o.enableCode(), o.Level, o.Any, o.All, o.enableParams())
		case OpWrite:
			d := &emu.EventDescriptor{ID: 1, Level: o.Level, Keyword: o.Any} // 1: a hook id OpPMC selects
			for i := 0; i < 8; i++ {                                         // a burst, so writers meet on buffers
				err = k.EventWriteEx(reg(o.Reg), d, &emu.WriteOptions{Processor: o.Processor, Tally: tally}, make([]byte, o.Payload))
				if err != nil {
					break
				}
			}
		case OpTraits:
			err = k.EventSetInformation(reg(o.Reg), emu.EventProviderSetTraits, o.traitsBlob())
		case OpPMC:
			err = o.setPMC(k, h)
		case OpSysWrite:
			err = k.WriteSystemEvent(h, uint16(pmcHooks[o.Count]), &emu.WriteOptions{Processor: o.Processor, Tally: tally}, make([]byte, o.Payload))
		}
		if _, ok := winerr.Code(err); !ok {
			return fmt.Errorf("%v returned an error without a Windows code: %v", o, err)
		}
	}
	return nil
}
