package emu

import (
	"errors"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// StartTrace refuses what the version's mode table refuses, with the rule in the
// message, and query returns the effective mode and adjusted properties.
func TestStartTraceAppliesModeTable(t *testing.T) {
	k := newKernel(t, winver.V6_2)
	_, err := k.StartTrace("bad", &Properties{LogFileMode: logmode.Sequential | logmode.Circular, LogFileName: "a.etl", MaximumFileSize: 10})
	if !errors.Is(err, winerr.ErrInvalidParameter) || !strings.Contains(err.Error(), "EVENT_TRACE_FILE_MODE_SEQUENTIAL is invalid with EVENT_TRACE_FILE_MODE_CIRCULAR (5.0 and later)") {
		t.Fatalf("SEQUENTIAL|CIRCULAR: %v", err)
	}
	if _, err := k.StartTrace("nowhere", &Properties{}); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("no destination: %v", err)
	}
	p := &Properties{LogFileMode: logmode.Buffering | logmode.RealTime | logmode.KDFilter | logmode.PagedMemory | logmode.IndependentSession, FlushTimer: 4, FlushThreshold: 9}
	h, err := k.StartTrace("ring", p)
	if err != nil {
		t.Fatal(err)
	}
	want := uint32(logmode.Buffering) // 6.2: REAL_TIME, KD_FILTER overridden; PAGED overridden by KD_FILTER; INDEPENDENT unknown
	if p.LogFileMode != want || p.FlushTimer != 0 || p.FlushThreshold != 9 {
		t.Errorf("StartTrace wrote back mode %v timer %d threshold %d", logmode.Mode(p.LogFileMode), p.FlushTimer, p.FlushThreshold)
	}
	var q Properties
	if err := k.QueryTrace(h, "", &q); err != nil || q.LogFileMode != want || q.FlushTimer != 0 || q.GUID.IsZero() {
		t.Errorf("query: %v mode %v timer %d guid %v", err, logmode.Mode(q.LogFileMode), q.FlushTimer, q.GUID)
	}
}

func TestNonStoppableSession(t *testing.T) {
	k := newKernel(t, winver.V2004)
	if _, err := k.StartTrace("ns", &Properties{LogFileMode: logmode.RealTime | logmode.NonStoppable}); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("without the AutoLogger flag: %v", err)
	}
	h, err := k.StartTrace("ns", &Properties{LogFileMode: logmode.RealTime | logmode.NonStoppable, AutoLogger: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.StopTrace(h, "", nil); !errors.Is(err, winerr.ErrAccessDenied) || !strings.Contains(err.Error(), "NONSTOPPABLE") {
		t.Fatalf("stop: %v", err)
	}
	if k.Session(h) == nil {
		t.Fatal("the refused stop stopped the session")
	}
	k.Close() // shutdown stops it all the same
	if k.Session(h) != nil {
		t.Fatal("Close left the non-stoppable session running")
	}
}

func TestSystemLoggerSlots(t *testing.T) {
	k := newKernel(t, winver.V2004)
	// Private loggers take none of the kernel's eight slots, whatever their mode says.
	for i := range session.MaxPrivateLoggers {
		h, err := k.StartTrace("private"+itoa(i), &Properties{LogFileMode: logmode.PrivateLogger | logmode.SystemLogger | logmode.Buffering})
		if err != nil {
			t.Fatal(err)
		}
		if idx, ok := k.Session(h).SystemLoggerIndex(); ok {
			t.Fatalf("private logger %d took system-logger slot %d", i, idx)
		}
	}
	var hs []TraceHandle
	for i := 0; i < MaxSystemLoggers; i++ {
		h, err := k.StartTrace("sys"+itoa(i), &Properties{LogFileMode: logmode.RealTime | logmode.SystemLogger})
		if err != nil {
			t.Fatal(err)
		}
		if idx, ok := k.Session(h).SystemLoggerIndex(); !ok || idx != i {
			t.Errorf("system logger %d has slot %d (%v)", i, idx, ok)
		}
		hs = append(hs, h)
	}
	if _, err := k.StartTrace("ninth", &Properties{LogFileMode: logmode.RealTime | logmode.SystemLogger}); !errors.Is(err, winerr.ErrNoSystemResources) {
		t.Fatalf("ninth system logger: %v", err)
	}
	if _, err := k.StartTrace("ordinary", &Properties{LogFileMode: logmode.RealTime}); err != nil {
		t.Fatalf("an ordinary session after 8 system loggers: %v", err)
	}
	if err := k.StopTrace(hs[3], "", nil); err != nil {
		t.Fatal(err)
	}
	h, err := k.StartTrace("again", &Properties{LogFileMode: logmode.RealTime | logmode.SystemLogger})
	if err != nil {
		t.Fatal(err)
	}
	if idx, _ := k.Session(h).SystemLoggerIndex(); idx != 3 {
		t.Errorf("reused slot %d, want 3", idx)
	}
	if vs := NewChecker(k).Check(); len(vs) > 0 {
		t.Fatal(vs)
	}
	// 6.1 does not know the flag: the session is an ordinary one.
	k61 := newKernel(t, winver.V6_1)
	h, _ = k61.StartTrace("sys", &Properties{LogFileMode: logmode.RealTime | logmode.SystemLogger})
	if _, ok := k61.Session(h).SystemLoggerIndex(); ok {
		t.Error("6.1 made a system logger")
	}
}

func TestSecureModeDeniesUngrantedProviders(t *testing.T) {
	k := newKernel(t, winver.V2004)
	sessGUID := guid.FromName("secure-session")
	hs, secureSink := startSecure(t, k, sessGUID)
	ho, openSink := startMem(t, k, "open", 0)
	provA, provB := guid.FromName("prov-a"), guid.FromName("prov-b")
	ra, _ := k.EventRegister(provA, nil, nil)
	rb, _ := k.EventRegister(provB, nil, nil)
	for _, h := range []TraceHandle{hs, ho} {
		for _, g := range []guid.GUID{provA, provB} {
			if err := k.EnableTraceEx2(h, g, regentry.ControlEnable, 5, 0, 0, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	k.GrantLogEvent(sessGUID, provA)
	d := &EventDescriptor{Level: 4}
	var ta, tb Tally
	if err := k.EventWriteEx(ra, d, &WriteOptions{Processor: 0, Tally: &ta}, []byte("granted")); err != nil {
		t.Fatalf("granted provider: %v", err)
	}
	err := k.EventWriteEx(rb, d, &WriteOptions{Processor: 0, Tally: &tb}, []byte("denied"))
	if !errors.Is(err, winerr.ErrAccessDenied) {
		t.Fatalf("ungranted provider: %v", err)
	}
	ids, ido := hs.LoggerID(), ho.LoggerID()
	if ta.Delivered[ids] != 1 || tb.Denied[ids] != 1 || tb.Delivered[ids] != 0 || tb.Delivered[ido] != 1 || tb.Lost[ido] != 0 {
		t.Errorf("tallies: granted %+v/%+v, denied %d delivered-open %d", ta.Delivered[ids], tb.Delivered[ids], tb.Denied[ids], tb.Delivered[ido])
	}
	if s := k.Session(hs).Stats(); s.EventsDenied != 1 || s.EventsLost != 0 {
		t.Errorf("secure session: denied %d lost %d", s.EventsDenied, s.EventsLost)
	}
	k.RevokeLogEvent(sessGUID, provA)
	if err := k.EventWrite(ra, d, []byte("revoked")); !errors.Is(err, winerr.ErrAccessDenied) {
		t.Errorf("after revoke: %v", err)
	}
	k.StopTrace(hs, "", nil)
	k.StopTrace(ho, "", nil)
	if secureSink.EventsWritten() != 1 || openSink.EventsWritten() != 3 {
		t.Errorf("secure sink %d events (want 1), open sink %d (want 3)", secureSink.EventsWritten(), openSink.EventsWritten())
	}
}

func startSecure(t *testing.T, k *Kernel, g guid.GUID) (TraceHandle, *session.MemorySink) {
	sink := &session.MemorySink{}
	h, err := k.StartTrace("secure", &Properties{BufferSize: 4, LogFileMode: logmode.RealTime | logmode.Secure, GUID: g, Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	return h, sink
}

func TestPrivateLoggers(t *testing.T) {
	prov := guid.FromName("private-provider")
	// Before 1703 the provider must be registered, unless PRIVATE_IN_PROC; one per process,
	// three with PRIVATE_IN_PROC.
	k := newKernel(t, winver.V1607)
	// They write files: a private logger cannot deliver in real time ([MS-PLA]), and
	// refuses REAL_TIME before it looks at the provider.
	priv := func(name string, mode uint32) (TraceHandle, error) {
		return k.StartTrace(name, &Properties{BufferSize: 5, LogFileMode: logmode.PrivateLogger | mode, LogFileName: name + ".etl", GUID: prov})
	}
	if _, err := k.StartTrace("rt", &Properties{LogFileMode: logmode.PrivateLogger | logmode.RealTime, GUID: prov}); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("private REAL_TIME: %v", err)
	}
	if _, err := priv("p1", 0); !errors.Is(err, winerr.ErrWMIGuidNotFound) {
		t.Fatalf("unregistered provider: %v", err)
	}
	r, _ := k.EventRegister(prov, nil, nil)
	h, err := priv("p1", logmode.PagedMemory)
	if err != nil {
		t.Fatal(err)
	}
	l := k.Session(h)
	if l.Kind() != logmode.Private || l.ID() < session.MaxLoggers || l.Mode()&logmode.PagedMemory != 0 {
		t.Errorf("private logger: kind %v id %d mode %v", l.Kind(), l.ID(), logmode.Mode(l.Mode()))
	}
	// 5 KB buffers are committed as two pages each: MinimumBuffers at start, the rest of
	// MaximumBuffers only reserved.
	q := l.Properties()
	reserved, committed := l.Memory()
	if committed != uint64(q.NumberOfBuffers)*8192 || reserved != uint64(q.MaximumBuffers)*8192 || reserved <= committed {
		t.Errorf("memory: reserved %d committed %d for %d of %d buffers", reserved, committed, q.NumberOfBuffers, q.MaximumBuffers)
	}
	if _, err := priv("p2", 0); !errors.Is(err, winerr.ErrNoSystemResources) {
		t.Fatalf("second private logger before 1703: %v", err)
	}
	// PRIVATE_IN_PROC allows three, whatever GUID names them.
	for i, g := range []guid.GUID{prov, guid.FromName("never-registered")} {
		if _, err := k.StartTrace("inproc"+itoa(i), &Properties{BufferSize: 5, LogFileMode: logmode.PrivateLogger | logmode.PrivateInProc | logmode.Buffering, GUID: g}); err != nil {
			t.Fatalf("in-process private logger %d of 3 before 1703: %v", i+2, err)
		}
	}
	if _, err := priv("p4", logmode.PrivateInProc); !errors.Is(err, winerr.ErrNoSystemResources) {
		t.Fatalf("fourth private logger before 1703: %v", err)
	}
	if _, err := priv("p3", logmode.NewFile); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("private NEWFILE: %v", err)
	}
	// A private logger does not count against the 64: fill the kernel's table.
	n := 0
	for ; n < 70; n++ {
		if _, err := k.StartTrace("k"+itoa(n), &Properties{LogFileMode: logmode.RealTime}); err != nil {
			break
		}
	}
	if n != 62 {
		t.Errorf("%d kernel sessions started beside a private logger, want 62", n)
	}
	// Events reach it like any session.
	if err := k.EnableTraceEx2(h, prov, regentry.ControlEnable, 5, 0, 0, nil); err != nil {
		t.Fatal(err)
	}
	var ta Tally
	if err := k.EventWriteEx(r, &EventDescriptor{Level: 1}, &WriteOptions{Processor: 1, Tally: &ta}, []byte("x")); err != nil || ta.Delivered[h.LoggerID()] != 1 {
		t.Fatalf("write to the private logger: %v, delivered %d", err, ta.Delivered[h.LoggerID()])
	}
	if vs := NewChecker(k).Check(); len(vs) > 0 {
		t.Fatal(vs)
	}

	// From 1703: no registration needed, eight per process.
	k2 := newKernel(t, winver.V1703)
	for i := 0; i < session.MaxPrivateLoggers; i++ {
		if _, err := k2.StartTrace("p"+itoa(i), &Properties{LogFileMode: logmode.PrivateLogger | logmode.Buffering, GUID: prov}); err != nil {
			t.Fatalf("private logger %d on 1703: %v", i, err)
		}
	}
	if _, err := k2.StartTrace("p9", &Properties{LogFileMode: logmode.PrivateLogger | logmode.Buffering, GUID: prov}); !errors.Is(err, winerr.ErrNoSystemResources) {
		t.Fatalf("ninth private logger: %v", err)
	}
}
