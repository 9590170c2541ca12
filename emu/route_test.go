package emu

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// EventWrite's events follow every control call at once, though EventWrite reuses the
// route it cached in the registration (plainRoute): each step changes where events go,
// writes right after, and the sessions' records say which got what. The kernel reads the
// time-stamp counter where the machine has one, so that the cached route is the one
// taken; elsewhere every event takes write's path, which must answer the same.
func TestCachedRouteFollowsControlCalls(t *testing.T) {
	k, err := New(Config{Version: winver.V2004, Processors: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	r, _ := k.EventRegister(provA, nil, nil)
	write := func(id uint16, level uint8) {
		t.Helper()
		if err := k.EventWrite(r, &EventDescriptor{ID: id, Level: level}, []byte("x")); err != nil {
			t.Fatalf("event %d: %v", id, err)
		}
	}
	cached := func(want *session.Logger) {
		t.Helper()
		if !k.tsc {
			return
		}
		var got *session.Logger
		if rt := r.route.Load(); rt != nil {
			got = rt.l
		} else if want != nil {
			t.Fatalf("no cached route, want one to session %p", want)
		}
		if got != want {
			t.Fatalf("cached route to session %p, want %p", got, want)
		}
	}
	enable := func(h TraceHandle, g guid.GUID, level uint8, p *EnableParameters) {
		t.Helper()
		if err := k.EnableTraceEx2(h, g, regentry.ControlEnable, level, 0, 0, p); err != nil {
			t.Fatal(err)
		}
	}

	ha, a := startMem(t, k, "a", 0)
	enable(ha, provA, 4, nil)
	write(1, 4) // a
	cached(k.byHandle(ha))
	enable(ha, provA, 2, nil) // the same session, a lower level
	write(2, 4)               // filtered out
	write(3, 2)               // a
	if err := k.EnableTraceEx2(ha, provA, regentry.ControlDisable, 0, 0, 0, nil); err != nil {
		t.Fatal(err)
	}
	write(4, 4) // nobody
	cached(nil)
	enable(ha, provA, 0, nil)
	write(5, 4) // a
	hb, b := startMem(t, k, "b", 0)
	enable(hb, provA, 0, nil)
	write(6, 4) // a and b: write's path
	cached(nil)
	write(60, 4) // again, from the route that says so
	if err := k.StopTrace(ha, "", nil); err != nil {
		t.Fatal(err)
	}
	if rt := r.route.Load(); rt != nil {
		t.Fatalf("the route to a stopped session's provider is still cached: %+v", rt)
	}
	write(7, 4) // b alone
	cached(k.byHandle(hb))
	grp := guid.FromName("route-group")
	hd, d := startMem(t, k, "d", 0)
	enable(hd, grp, 0, &EnableParameters{EnableProperty: guidtable.PropertyProviderGroup})
	write(8, 4) // b: the provider is not in the group yet
	cached(k.byHandle(hb))
	traits := func(tr ...regentry.Trait) {
		t.Helper()
		if err := k.EventSetInformation(r, EventProviderSetTraits, regentry.BuildTraits("A", tr...)); err != nil {
			t.Fatal(err)
		}
	}
	traits(regentry.GroupTrait(grp))
	write(9, 4) // b, and d through the group
	cached(nil)
	traits()
	write(10, 4) // b alone: the provider left the group
	cached(k.byHandle(hb))
	if err := k.EventUnregister(r); err != nil {
		t.Fatal(err)
	}
	if err := k.EventWrite(r, &EventDescriptor{ID: 11, Level: 4}, []byte("x")); !errors.Is(err, winerr.ErrInvalidHandle) {
		t.Fatalf("EventWrite on a closed registration: %v, want ERROR_INVALID_HANDLE", err)
	}
	if rt := r.route.Load(); rt != nil && rt.l != nil {
		t.Fatalf("a closed registration keeps a route to session %p", rt.l)
	}

	for _, h := range []TraceHandle{hb, hd} {
		if err := k.StopTrace(h, "", nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []struct {
		name string
		sink *session.MemorySink
		want string
	}{{"a", a, "[1 3 5 6 60]"}, {"b", b, "[6 60 7 8 9 10]"}, {"d", d, "[9]"}} {
		var ids []uint16
		for _, h := range records(t, s.sink) {
			ids = append(ids, h.Descriptor.ID)
		}
		if got := fmt.Sprint(ids); got != s.want {
			t.Errorf("session %s got events %s, want %s", s.name, got, s.want)
		}
	}
}

// routingKernel is a kernel of one processor that caches routes: its clock is the
// time-stamp counter (the test is skipped where it is not).
func routingKernel(t *testing.T) *Kernel {
	t.Helper()
	k, err := New(Config{Version: winver.V2004, Processors: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	if !k.tsc {
		t.Skip("routes are cached with the time-stamp counter clock only")
	}
	return k
}

// A control call drops the cached routes of the registrations it changed and no others:
// those are stale by the routing count alone, so that N enables or unregisters among N
// registrations cost time in proportion to N, not N squared. A stale route is never
// used: the next write takes the general path and caches a new one.
func TestControlCallsDropOnlyTheRoutesTheyChange(t *testing.T) {
	k := routingKernel(t)
	h, sink := startMem(t, k, "a", 0)
	regs := make([]*Registration, 4)
	for i := range regs {
		g := guid.FromName(fmt.Sprint("route-", i))
		regs[i], _ = k.EventRegister(g, nil, nil)
		if err := k.EnableTraceEx2(h, g, regentry.ControlEnable, 0, 0, 0, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range regs {
		if err := k.EventWrite(r, &EventDescriptor{ID: 1}, nil); err != nil || r.route.Load() == nil {
			t.Fatalf("write: %v; route %v", err, r.route.Load())
		}
	}
	// Disable the first provider, unregister the second.
	if err := k.EnableTraceEx2(h, regs[0].Provider(), regentry.ControlDisable, 0, 0, 0, nil); err != nil {
		t.Fatal(err)
	}
	if err := k.EventUnregister(regs[1]); err != nil {
		t.Fatal(err)
	}
	stale := regs[2].route.Load()
	switch {
	case regs[0].route.Load() != nil || regs[1].route.Load() != nil:
		t.Fatal("the disabled or unregistered provider keeps its route")
	case stale == nil || regs[3].route.Load() == nil:
		t.Fatal("an unchanged registration's route was dropped: the call walked every registration")
	case stale.routing == k.routing.Load():
		t.Fatal("the unchanged registration's route is current after two control calls")
	}
	if err := k.EventWrite(regs[2], &EventDescriptor{ID: 2}, nil); err != nil || regs[2].route.Load() == stale {
		t.Fatalf("write: %v; the stale route was kept", err)
	}
	// Stopping the session drops the routes to it.
	if err := k.StopTrace(h, "", nil); err != nil {
		t.Fatal(err)
	}
	for i, r := range regs {
		if rt := r.route.Load(); rt != nil && rt.l != nil {
			t.Errorf("registration %d keeps a route to the stopped session", i)
		}
	}
	if n := len(records(t, sink)); n != 5 {
		t.Errorf("%d events delivered, want 5", n)
	}
}

// A stop that runs while a writer is taking a route (after it read the routing count and
// the slot, before it cached the route) leaves no route to the stopped session cached:
// the stop dropped the registration's route before the writer stored its own, and the
// writer, seeing the count moved on, drops it. Without that, only the registration's next
// write or its unregister would let the stopped session's Logger go.
func TestRouteTakenDuringAStopIsNotKept(t *testing.T) {
	k := routingKernel(t)
	h, _ := startMem(t, k, "a", 0)
	r, _ := k.EventRegister(provA, nil, nil)
	if err := k.EnableTraceEx2(h, provA, regentry.ControlEnable, 0, 0, 0, nil); err != nil {
		t.Fatal(err)
	}
	stopped := k.byHandle(h)
	rerouteTaken = func() {
		rerouteTaken = nil
		if err := k.StopTrace(h, "", nil); err != nil {
			t.Error(err)
		}
	}
	t.Cleanup(func() { rerouteTaken = nil })
	if err := k.EventWrite(r, &EventDescriptor{ID: 1}, nil); err != nil {
		t.Fatal(err)
	}
	if rt := r.route.Load(); rt != nil && rt.l == stopped {
		t.Fatal("the route taken while the session stopped is cached: the stopped session stays reachable")
	}
}

// Writers reuse cached routes while another goroutine keeps changing where events go:
// enabling and disabling sessions at other levels, moving the provider in and out of a
// group, stopping a session. Under the race detector this checks that the routes are
// published safely; afterwards every error was a Windows error, and the invariant checker
// finds nothing wrong in the kernel.
func TestCachedRouteUnderControlChurn(t *testing.T) {
	k, err := New(Config{Version: winver.V2004, Processors: 2})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	grp := guid.FromName("churn-group")
	provB := guid.FromName("churn-B")
	regs := make([]*Registration, 3)
	for i, p := range []guid.GUID{provA, provA, provB} {
		if regs[i], err = k.EventRegister(p, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	const rounds = 400
	var hs []TraceHandle
	for i := 0; i < 3; i++ {
		h, err := k.StartTrace("churn"+itoa(i), &Properties{BufferSize: 4, MinimumBuffers: 4, MaximumBuffers: 16,
			LogFileMode: logmode.RealTime, Sink: &session.Counter{}})
		if err != nil {
			t.Fatal(err)
		}
		hs = append(hs, h)
	}
	// Each round starts a change and two bursts of writes together.
	change := func(i int) error {
		h := hs[i%2] // the third session is stopped half-way
		var err error
		switch i % 5 {
		case 0, 1:
			err = k.EnableTraceEx2(h, provA, regentry.ControlEnable, uint8(i%6), uint64(i%4), 0, nil)
		case 2:
			err = k.EnableTraceEx2(h, provA, regentry.ControlDisable, 0, 0, 0, nil)
		case 3:
			err = k.EnableTraceEx2(hs[2], grp, regentry.ControlEnable, 0, 0, 0, &EnableParameters{EnableProperty: guidtable.PropertyProviderGroup})
			if err == nil && i >= rounds/2 {
				err = k.StopTrace(hs[2], "", nil)
			}
			if errors.Is(err, winerr.ErrWMIInstanceNotFound) || errors.Is(err, winerr.ErrInvalidHandle) {
				err = nil // stopped already
			}
		case 4:
			tr := []regentry.Trait{}
			if i%10 == 4 {
				tr = append(tr, regentry.GroupTrait(grp))
			}
			err = k.EventSetInformation(regs[i%len(regs)], EventProviderSetTraits, regentry.BuildTraits("churn", tr...))
		}
		if err != nil {
			return fmt.Errorf("change %d: %w", i, err)
		}
		return nil
	}
	burst := func(i int) error {
		data := make([]byte, 40)
		for j := 0; j < 10; j++ {
			err := k.EventWrite(regs[(i+j)%len(regs)], &EventDescriptor{ID: uint16(j), Level: uint8(1 + j%5), Keyword: uint64(j % 3)}, data)
			if _, windows := winerr.Code(err); err != nil && !windows {
				return fmt.Errorf("round %d: EventWrite returned %v, not a Windows error", i, err)
			}
		}
		return nil
	}
	for i := 0; i < rounds; i++ {
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for g, f := range []func(int) error{change, burst, burst} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[g] = f(i)
			}()
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatal(err)
		}
	}
	if vs := NewChecker(k).Check(); len(vs) > 0 {
		t.Fatalf("invariants broken: %v", vs)
	}
}

// EventWrite, through the routes its registrations cache, delivers, loses and refuses
// exactly what write's general path does, over random programs of control calls and
// writes: the same program runs on two synchronous kernels of one processor, one writing
// with EventWrite and the other with EventWriteEx and a Tally (the general path), and
// every error and, at each stop, every session's events and EventsLost must agree.
func TestCachedRouteMatchesGeneralPath(t *testing.T) {
	grp := guid.FromName("differential-group")
	provs := []guid.GUID{provA, guid.FromName("differential-B")}
	type kernel struct {
		k     *Kernel
		regs  []*Registration
		gone  []*Registration // unregistered
		hs    [3]TraceHandle
		sinks [3]*session.Counter
		log   []string // one line a stop, and one an error
	}
	for seed := uint64(1); seed <= 8; seed++ {
		var ks [2]*kernel
		for i := range ks {
			k, err := New(Config{Version: winver.V2004, Processors: 1, Synchronous: true})
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close()
			ks[i] = &kernel{k: k}
		}
		rng := rand.New(rand.NewPCG(seed, 99))
		for step := 0; step < 600; step++ {
			op, s, p, level, kw := rng.IntN(20), rng.IntN(3), rng.IntN(2), uint8(rng.IntN(6)), uint64(rng.IntN(4))
			if (op == 1 || op == 7) && rng.IntN(4) != 0 {
				op = 19 // stops and unregistrations one time in four, so that events flow
			}
			reg, size := rng.IntN(5), rng.IntN(120)
			if rng.IntN(40) == 0 {
				size = 5000 + rng.IntN(70000) // too big for a 4 KB buffer, or for ETW
			}
			for i, kk := range ks {
				k := kk.k
				var err error
				switch op {
				case 0: // start
					if kk.hs[s] == 0 {
						kk.sinks[s] = &session.Counter{}
						kk.hs[s], err = k.StartTrace("d"+itoa(s), &Properties{BufferSize: 4, LogFileMode: logmode.RealTime, Sink: kk.sinks[s]})
					}
				case 1: // stop
					if kk.hs[s] != 0 {
						var q Properties
						err = k.StopTrace(kk.hs[s], "", &q)
						kk.log = append(kk.log, fmt.Sprintf("step %d: session %d stopped with %d events, %d lost", step, s, kk.sinks[s].EventsWritten(), q.EventsLost))
						kk.hs[s] = 0
					}
				case 2, 3:
					if kk.hs[s] != 0 {
						err = k.EnableTraceEx2(kk.hs[s], provs[p], regentry.ControlEnable, level, kw, 0, nil)
					}
				case 4:
					if kk.hs[s] != 0 {
						err = k.EnableTraceEx2(kk.hs[s], provs[p], regentry.ControlDisable, 0, 0, 0, nil)
					}
				case 5:
					if kk.hs[s] != 0 {
						err = k.EnableTraceEx2(kk.hs[s], grp, regentry.ControlEnable, level, kw, 0, &EnableParameters{EnableProperty: guidtable.PropertyProviderGroup})
					}
				case 6:
					if len(kk.regs) < 5 {
						var r *Registration
						if r, err = k.EventRegister(provs[p], nil, nil); err == nil {
							kk.regs = append(kk.regs, r)
						}
					}
				case 7:
					if reg < len(kk.regs) {
						err = k.EventUnregister(kk.regs[reg])
						kk.gone = append(kk.gone, kk.regs[reg])
						kk.regs = append(kk.regs[:reg], kk.regs[reg+1:]...)
					}
				case 8:
					if reg < len(kk.regs) {
						var tr []regentry.Trait
						if level%2 == 0 {
							tr = append(tr, regentry.GroupTrait(grp))
						}
						err = k.EventSetInformation(kk.regs[reg], EventProviderSetTraits, regentry.BuildTraits("d", tr...))
					}
				default: // write
					var r *Registration // nil while there is none: ERROR_INVALID_HANDLE
					if len(kk.regs) > 0 {
						r = kk.regs[reg%len(kk.regs)]
					}
					if len(kk.gone) > 0 && size%16 == 0 {
						r = kk.gone[reg%len(kk.gone)] // closed: ERROR_INVALID_HANDLE
					}
					d := &EventDescriptor{ID: uint16(step), Level: level, Keyword: kw}
					if i == 0 {
						err = k.EventWrite(r, d, make([]byte, size))
					} else {
						err = k.EventWriteEx(r, d, &WriteOptions{Processor: 0, Tally: &Tally{}}, make([]byte, size))
					}
				}
				if err != nil {
					kk.log = append(kk.log, fmt.Sprintf("step %d (op %d): %v", step, op, err))
				}
			}
		}
		for s := range ks[0].hs {
			for _, kk := range ks {
				if kk.hs[s] != 0 {
					var q Properties
					if err := kk.k.StopTrace(kk.hs[s], "", &q); err != nil {
						t.Fatal(err)
					}
					kk.log = append(kk.log, fmt.Sprintf("end: session %d stopped with %d events, %d lost", s, kk.sinks[s].EventsWritten(), q.EventsLost))
				}
			}
		}
		a, b := ks[0].log, ks[1].log
		for i := 0; i < len(a) || i < len(b); i++ {
			var la, lb string
			if i < len(a) {
				la = a[i]
			}
			if i < len(b) {
				lb = b[i]
			}
			if la != lb {
				t.Fatalf("seed %d: EventWrite's kernel says %q where the general path's says %q", seed, la, lb)
			}
		}
		delivered := 0
		for _, l := range a {
			var step, s, n, lost int
			if _, err := fmt.Sscanf(l, "step %d: session %d stopped with %d events, %d lost", &step, &s, &n, &lost); err == nil {
				delivered += n
			}
		}
		if delivered == 0 {
			t.Fatalf("seed %d: no session received an event:\n%s", seed, strings.Join(a, "\n"))
		}
		t.Logf("seed %d: %d events delivered to stopped sessions, %d lines compared", seed, delivered, len(a))
	}
}

// EventWrite's in-line path (writePlain with Logger.Write's pieces) writes the record
// Logger.Write writes for the same event: the same bytes but for the timestamp.
func TestPlainRecordMatchesWrite(t *testing.T) {
	k, err := New(Config{Version: winver.V2004, Processors: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	r, _ := k.EventRegister(provA, nil, nil)
	h, sink := startMem(t, k, "plain", 0)
	if err := k.EnableTraceEx2(h, provA, regentry.ControlEnable, 0, 0, 0, nil); err != nil {
		t.Fatal(err)
	}
	d := &EventDescriptor{ID: 0x1234, Version: 2, Channel: 11, Level: 4, Opcode: 7, Task: 0x99, Keyword: 0x8000_0000_0000_0001}
	for _, n := range []int{0, 1, 13, 64, 100} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i + n)
		}
		if err := k.EventWrite(r, d, data); err != nil {
			t.Fatal(err)
		}
		if err := k.EventWrite(r, d, data); err != nil { // the first cached the route
			t.Fatal(err)
		}
		if err := k.EventWriteEx(r, d, &WriteOptions{Processor: 0}, data); err != nil {
			t.Fatal(err)
		}
	}
	if k.tsc && r.route.Load().l == nil {
		t.Fatal("EventWrite took no cached route")
	}
	if err := k.StopTrace(h, "", nil); err != nil {
		t.Fatal(err)
	}
	var recs [][]byte
	if err := sink.Events(func(_ []byte, rec etl.Record) error {
		b := append([]byte(nil), rec.Bytes...)
		clear(b[abi.OffEventTimeStamp : abi.OffEventTimeStamp+8])
		recs = append(recs, b)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(recs) != 15 {
		t.Fatalf("%d records, want 15", len(recs))
	}
	for i := 0; i < len(recs); i += 3 {
		if !bytes.Equal(recs[i+1], recs[i+2]) || !bytes.Equal(recs[i], recs[i+2]) {
			t.Errorf("records of the %d-byte events differ:\nEventWrite   % x\nEventWriteEx % x", len(recs[i+2])-abi.EventHeaderSize, recs[i+1], recs[i+2])
		}
	}
}

// A registration is its kernel's. Another kernel's writes through it are refused with
// ERROR_INVALID_HANDLE and reach no session of either kernel, on the general path and
// on the cached-route path (the time-stamp counter's clock) alike, even after its own
// kernel cached the route; another kernel's EventEnabled says false and its poke refuses.
func TestForeignRegistration(t *testing.T) {
	for _, manual := range []bool{true, false} {
		cfg := Config{Processors: 2}
		if manual {
			cfg.Clock = clock.NewManualSource(1000, 1)
		}
		k, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		k2, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer k2.Close()
		prov := guid.FromName("Foreign")
		h, sink := startMem(t, k, "own", 0)
		h2, sink2 := startMem(t, k2, "other", 0)
		r, err := k.EventRegister(prov, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := k2.EventRegister(prov, nil, nil); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			k *Kernel
			h TraceHandle
		}{{k, h}, {k2, h2}} {
			if err := c.k.EnableTraceEx2(c.h, prov, regentry.ControlEnable, 5, 0, 0, nil); err != nil {
				t.Fatal(err)
			}
		}
		d, data := &EventDescriptor{ID: 1, Level: 4}, []byte("payload")
		if err := k.EventWrite(r, d, data); err != nil { // caches the route in r
			t.Fatal(err)
		}
		foreign := func(what string, err error) {
			t.Helper()
			if !errors.Is(err, winerr.ErrInvalidHandle) || !strings.Contains(err.Error(), "another kernel") {
				t.Errorf("manual clock %v: %s through another kernel's registration: %v", manual, what, err)
			}
		}
		for range 3 {
			foreign("EventWrite", k2.EventWrite(r, d, data))
		}
		foreign("EventWriteEx", k2.EventWriteEx(r, d, &WriteOptions{Processor: AnyProcessor}, data))
		foreign("EventWriteTransfer", k2.EventWriteTransfer(r, d, nil, nil, data))
		foreign("EventWriteDescriptors", k2.EventWriteDescriptors(r, d, nil, DataDescriptor{Data: data}))
		foreign("PokeEnableMask", k2.PokeEnableMask(r, false, 1))
		if k2.EventEnabled(r, d) || k2.EventProviderEnabled(r, 4, 0) || !k.EventEnabled(r, d) {
			t.Errorf("manual clock %v: EventEnabled: %v in the other kernel, %v in its own", manual, k2.EventEnabled(r, d), k.EventEnabled(r, d))
		}
		if err := k.EventWrite(r, d, data); err != nil {
			t.Fatal(err)
		}
		k.StopTrace(h, "", nil)
		k2.StopTrace(h2, "", nil)
		if own, other := len(records(t, sink)), len(records(t, sink2)); own != 2 || other != 0 {
			t.Errorf("manual clock %v: %d events in the own kernel's session (want 2), %d in the other's (want 0)", manual, own, other)
		}
	}
}

// A negative clock frequency is refused.
func TestNegativeClockFrequency(t *testing.T) {
	if _, err := New(Config{ClockFrequency: -1}); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("ClockFrequency -1: %v", err)
	}
}

// Open registrations hold distinct ETW_REG_ENTRY indexes, 1 to 65,535: once the count
// wraps, a new registration takes the next index no open one holds, and with all of them
// held EventRegister refuses with ERROR_NO_SYSTEM_RESOURCES (which also bounds the
// memory of a program that registers without end).
func TestRegistrationIndexes(t *testing.T) {
	k := newKernel(t, winver.Default)
	prov := guid.FromName("Many")
	regs := make([]*Registration, 0, 65535)
	for range 65535 {
		r, err := k.EventRegister(prov, nil, nil)
		if err != nil {
			t.Fatalf("registration %d: %v", len(regs)+1, err)
		}
		if int(r.Index()) != len(regs)+1 {
			t.Fatalf("registration %d has Index %d", len(regs)+1, r.Index())
		}
		regs = append(regs, r)
	}
	if _, err := k.EventRegister(prov, nil, nil); !errors.Is(err, winerr.ErrNoSystemResources) || !strings.Contains(err.Error(), "65535 registrations are open") {
		t.Fatalf("the 65,536th open registration: %v", err)
	}
	for _, idx := range []uint16{7, 40000, 3} {
		if err := k.EventUnregister(regs[idx-1]); err != nil {
			t.Fatal(err)
		}
	}
	// The count wrapped: the free indexes are taken in order from the last one given.
	for _, want := range []uint16{3, 7, 40000} {
		r, err := k.EventRegister(prov, nil, nil)
		if err != nil || r.Index() != want {
			t.Fatalf("after the wrap: Index %v, %v; want %d", r, err, want)
		}
	}
	if _, err := k.EventRegister(prov, nil, nil); !errors.Is(err, winerr.ErrNoSystemResources) {
		t.Fatalf("all indexes held again: %v", err)
	}
}

// hookSink is a MemorySink that runs fire once, inside the first WriteBuffer: on a
// synchronous kernel, in the middle of the write that filled a buffer.
type hookSink struct {
	session.MemorySink
	fire func()
}

func (s *hookSink) WriteBuffer(b []byte) error {
	if f := s.fire; f != nil {
		s.fire = nil
		f()
	}
	return s.MemorySink.WriteBuffer(b)
}

// A session written through one enable slot is not written again through another in
// the same event, when control calls beside the write move it between slots while the
// write walks them. Here they run inside the write itself (session a's buffer fills, and
// a synchronous kernel hands it to a's sink in the writer): a and b swap slots 0 and 1
// after the write delivered to a through slot 0, so slot 1, read next, names a again.
// That event reaches a once and misses b, which moved to a slot already passed: b was
// being disabled and enabled again while it was written, and the event is not b's.
func TestSessionMovedBetweenSlotsMidWrite(t *testing.T) {
	k, err := New(Config{Processors: 1, Clock: clock.NewManualSource(1000, 1), Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	prov := guid.FromName("Moved")
	sa, sb := &hookSink{}, &hookSink{}
	ha, err := k.StartTrace("a", &Properties{BufferSize: 4, LogFileMode: logmode.RealTime, Sink: sa})
	if err != nil {
		t.Fatal(err)
	}
	hb, err := k.StartTrace("b", &Properties{BufferSize: 4, LogFileMode: logmode.RealTime, Sink: sb})
	if err != nil {
		t.Fatal(err)
	}
	r, err := k.EventRegister(prov, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	enable := func(h TraceHandle, code regentry.ControlCode) {
		if err := k.EnableTraceEx2(h, prov, code, 5, 0, 0, nil); err != nil {
			t.Error(err)
		}
	}
	enable(ha, regentry.ControlEnable) // slot 0
	enable(hb, regentry.ControlEnable) // slot 1
	sa.fire = func() {
		enable(ha, regentry.ControlDisable)
		enable(hb, regentry.ControlDisable)
		enable(hb, regentry.ControlEnable) // slot 0
		enable(ha, regentry.ControlEnable) // slot 1
	}
	var tally Tally
	d := &EventDescriptor{ID: 1, Level: 4}
	var written int
	for sa.fire != nil && written < 1000 { // until a's first buffer fills
		if err := k.EventWriteEx(r, d, &WriteOptions{Processor: 0, Tally: &tally}, make([]byte, 200)); err != nil {
			t.Fatal(err)
		}
		written++
	}
	if sa.fire != nil {
		t.Fatal("session a's buffer never filled")
	}
	k.StopTrace(ha, "", nil)
	k.StopTrace(hb, "", nil)
	ida, idb := ha.LoggerID(), hb.LoggerID()
	gotA, gotB := len(records(t, &sa.MemorySink)), len(records(t, &sb.MemorySink))
	if gotA != written || tally.Delivered[ida] != uint64(written) || gotB != written-1 || tally.Delivered[idb] != uint64(written-1) {
		t.Errorf("%d events written: session a received %d (tally %d), b %d (tally %d); want %d and %d", written, gotA, tally.Delivered[ida], gotB, tally.Delivered[idb], written, written-1)
	}
}
