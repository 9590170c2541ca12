package consumer_test

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/consumer"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etw"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/winerr"
)

// TestFlushDefaultDelivers: on a kernel whose clock moves only when told, an event in a
// real-time session with FlushTimer 0 reaches the consumer once one second of the session
// clock has passed, with no flush and no full buffer: Windows' one-second default for a
// real-time logger. Without the default it would wait for the session's stop. The wait
// is on the event, bounded far beyond the logger's quarter-second look.
func TestFlushDefaultDelivers(t *testing.T) {
	manual := clock.NewManualSource(1000, 0)
	k, err := emu.New(emu.Config{Processors: 1, Clock: manual}) // 10 MHz
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	p := newProvider(t, k, "Etwemu.Test.FlushDefault")
	s := liveSession(t, k, "FlushDefault", "Etwemu.Test.FlushDefault:5")
	c := consumer.NewConsumerOn(context.Background(), k).FromSessions(s)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := p.WriteEvent("One", nil, nil); err != nil {
		t.Fatal(err)
	}
	manual.Advance(10_000_000)
	select {
	case e := <-c.Events:
		if e.Name != "One" {
			t.Fatalf("event %q", e.Name)
		}
	case <-time.After(time.Minute):
		t.Fatal("no event a minute after one second of the session clock passed")
	}
	if q, err := s.QueryTrace(); err != nil || q.FlushTimer != 0 {
		t.Fatalf("QueryTrace: FlushTimer %v, %v; want 0 as given", q, err)
	}
}

// TestDefaultKernel: golang-etw's constructors take no kernel and meet the etw package's
// providers on the default kernel.
func TestDefaultKernel(t *testing.T) {
	k, _ := syncKernel(t)
	etw.SetKernel(k)
	defer etw.SetKernel(nil)
	p, err := etw.NewProvider("Etwemu.Test.Default", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	s := consumer.NewRealTimeSession("Default")
	if err := s.EnableProvider(consumer.MustParseProvider("Etwemu.Test.Default")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []*consumer.Consumer{consumer.NewConsumer(context.Background()), consumer.NewRealTimeConsumer(context.Background())} {
		c.FromSessions(s)
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		if err := p.WriteEvent("Hello", nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Flush(); err != nil {
			t.Fatal(err)
		}
		if e := <-c.Events; e.Name != "Hello" {
			t.Fatalf("event %q", e.Name)
		}
		c.Close()
	}
	s.Stop()
	if err := s.Flush(); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("Flush of a stopped session: %v", err)
	}
}

// TestForkHelpers: 0xrawsec's IsKnownProvider, MustParseGUIDFromString and
// SessionSlice, and tekert's MustParseGUID. A provider is known once it is registered in
// the default kernel, by name or by GUID.
func TestForkHelpers(t *testing.T) {
	k, _ := syncKernel(t)
	etw.SetKernel(k)
	defer etw.SetKernel(nil)
	if consumer.IsKnownProvider("Etwemu.Test.Known") {
		t.Error("a provider no one registered is known")
	}
	p, err := etw.NewProvider("Etwemu.Test.Known", nil)
	if err != nil {
		t.Fatal(err)
	}
	g := consumer.MustParseProvider("Etwemu.Test.Known").GUID
	if !consumer.IsKnownProvider("Etwemu.Test.Known") || !consumer.IsKnownProvider("{"+g.String()+"}") || consumer.IsKnownProvider("Etwemu.Test.Other") || consumer.IsKnownProvider("") {
		t.Error("IsKnownProvider: want the registered provider known by name and GUID, and no other")
	}
	p.Close()
	if consumer.IsKnownProvider("Etwemu.Test.Known") {
		t.Error("a closed provider is still known")
	}
	if got := consumer.MustParseGUIDFromString("{" + g.String() + "}"); *got != g || *consumer.MustParseGUID(g.String()) != g {
		t.Errorf("MustParseGUIDFromString gave %v, want %v", got, g)
	}
	func() {
		defer func() {
			if recover() == nil {
				t.Error("MustParseGUIDFromString of a bad GUID did not panic")
			}
		}()
		consumer.MustParseGUIDFromString("not a guid")
	}()
	a, b := consumer.NewRealTimeSessionOn(k, "A"), consumer.NewRealTimeSessionOn(k, "B")
	if ss := consumer.SessionSlice([]*consumer.RealTimeSession{a, b}); len(ss) != 2 || ss[0].TraceName() != "A" || ss[1].TraceName() != "B" {
		t.Errorf("SessionSlice gave %v", ss)
	}
	// tekert's StopSession stops a session left running, by name, and no other.
	if _, err := k.StartTrace("Leftover", &emu.Properties{LogFileMode: logmode.RealTime}); err != nil {
		t.Fatal(err)
	}
	if err := consumer.StopSession("leftover"); err != nil || len(k.Sessions()) != 0 {
		t.Errorf("StopSession: %v, %d sessions left; want nil, 0", err, len(k.Sessions()))
	}
	if err := consumer.StopSession("Leftover"); !errors.Is(err, winerr.ErrWMIInstanceNotFound) {
		t.Errorf("StopSession of no session: %v, want ERROR_WMI_INSTANCE_NOT_FOUND", err)
	}
	// golang-etw's TestSessionSlice, as both forks have it: a []Session converts, and
	// what is not a slice of Session values panics.
	sessions := []consumer.Session{a, b}
	if ss := consumer.SessionSlice(sessions); len(ss) != len(sessions) {
		t.Errorf("SessionSlice of a []Session gave %d sessions, want %d", len(ss), len(sessions))
	}
	for _, bad := range []any{sessions[0], []int{1, 2}, nil} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("SessionSlice(%T) did not panic", bad)
				}
			}()
			consumer.SessionSlice(bad)
		}()
	}
}

// filterSession is a Session of the caller's own, as code written for golang-etw may
// pass to FromSessions.
type filterSession struct{ name string }

func (f filterSession) TraceName() string { return f.name }
func (f filterSession) Providers() []consumer.Provider {
	return []consumer.Provider{consumer.MustParseProvider("Etwemu.Test.Forks:5:0")}
}

// TestForkCalls: 0xrawsec's callbacks, helpers and Session interface, and tekert's
// ProcessEvents, LastError, StopWithTimeout and QueryTrace, on one consumer.
func TestForkCalls(t *testing.T) {
	k, _ := syncKernel(t)
	p := newProvider(t, k, "Etwemu.Test.Forks")
	liveSession(t, k, "Forks", "Etwemu.Test.Forks:5")
	c := consumer.NewConsumerOn(context.Background(), k).FromSessions(filterSession{"Forks"})
	var order []string
	c.EventRecordCallback = func(r *consumer.EventRecord) bool {
		order = append(order, "record")
		return r.EventHeader.Descriptor.Level != 1 // drops the Critical event
	}
	prov := consumer.MustParseProvider("Etwemu.Test.Forks")
	c.EventRecordHelperCallback = func(h *consumer.EventRecordHelper) error {
		order = append(order, "helper")
		if h.ProviderGUID() != prov.GUID { // both forks' idiom: the helper's GUID and Provider.GUID compare
			t.Errorf("ProviderGUID %v, the provider's GUID %v", h.ProviderGUID(), prov.GUID)
		}
		if n, err := h.GetPropertyInt("N"); err != nil || n == 3 {
			h.Skip()
		}
		if _, err := h.GetPropertyString("none"); !errors.Is(err, consumer.ErrUnknownProperty) {
			t.Errorf("GetPropertyString of a missing property: %v", err)
		}
		h.SelectFields("N", "Extra")
		return nil
	}
	c.PreparedCallback = func(h *consumer.EventRecordHelper) error {
		order = append(order, "prepared")
		h.SetProperty("Extra", h.Provider()+"/"+h.Channel())
		return nil
	}
	c.EventPreparedCallback = func(h *consumer.EventRecordHelper) error {
		order = append(order, "eventprepared")
		return errors.New("recorded, not fatal")
	}
	for n, level := range []etw.Level{etw.LevelInfo, etw.LevelCritical, etw.LevelInfo, etw.LevelInfo} {
		if err := p.WriteEvent("E", etw.WithEventOpts(etw.WithLevel(level)), etw.WithFields(etw.IntField("N", n), etw.StringField("Dropped", "x"))); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if err := c.ProcessEvents(42); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("ProcessEvents(42): %v", err)
	}
	if err := k.FlushTrace(0, "Forks", &emu.Properties{}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.QueryTrace("Forks"); err != nil {
		t.Errorf("QueryTrace: %v", err)
	}
	done := make(chan error, 1)
	go func() { done <- c.StopWithTimeout(time.Hour) }()
	var got []string
	stop := errors.New("enough")
	err := c.ProcessEvents(func(e *consumer.Event) error {
		b, _ := json.Marshal(e.EventData)
		got = append(got, string(b))
		if len(got) == 1 {
			return stop
		}
		return nil
	})
	if err != stop {
		t.Errorf("ProcessEvents returned %v, want the function's error", err)
	}
	if err := c.ProcessEvents(func(e *consumer.Event) {
		b, _ := json.Marshal(e.EventData)
		got = append(got, string(b))
	}); err != nil {
		t.Error(err)
	}
	// The callback's error is LastError's, not StopWithTimeout's: tekert's returns only
	// what closing the traces returned.
	if err := <-done; err != nil || c.LastError() == nil || c.LastError().Error() != "recorded, not fatal" {
		t.Errorf("StopWithTimeout %v, LastError %v; want nil and the callback's error", err, c.LastError())
	}
	want := []string{`{"Extra":"Etwemu.Test.Forks/TraceLogging","N":"0"}`, `{"Extra":"Etwemu.Test.Forks/TraceLogging","N":"2"}`}
	if !slices.Equal(got, want) || c.Filtered.Load() != 2 || c.Skipped.Load() != 0 {
		t.Errorf("events %v, Filtered %d, Skipped %d; want %v, 2, 0 (as 0xrawsec's: callbacks' skips are not Skipped)", got, c.Filtered.Load(), c.Skipped.Load(), want)
	}
	// N=0 passes every step, N=1 (Critical) is dropped by the record callback, N=2
	// passes, N=3 is skipped by the helper callback.
	if s := strings.Join(order, " "); s != "record helper prepared eventprepared record record helper prepared eventprepared record helper" {
		t.Errorf("callback order %s", s)
	}
}

// TestJSONShape: an event marshals to golang-etw's field names and nothing of etwemu's.
func TestJSONShape(t *testing.T) {
	k, _ := syncKernel(t)
	p := newProvider(t, k, "Etwemu.Test.JSON")
	s := liveSession(t, k, "JSON", "Etwemu.Test.JSON:5")
	c := consumer.NewConsumerOn(context.Background(), k).FromSessions(s)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if err := k.EventWriteEx(p.Registration(), &emu.EventDescriptor{ID: 7, Level: 4, Opcode: 1, Channel: 11, Keyword: 0x20000000000000}, &emu.WriteOptions{ThreadID: 77}); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	e := <-c.Events
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var sys map[string]any
	if err := json.Unmarshal(top["System"], &sys); err != nil {
		t.Fatal(err)
	}
	var sysKeys []string
	for k := range sys {
		sysKeys = append(sysKeys, k)
	}
	slices.Sort(sysKeys)
	if strings.Join(keys, ",") != "System" ||
		strings.Join(sysKeys, ",") != "Channel,Computer,Correlation,EventID,Execution,Keywords,Level,Opcode,Provider,Task,TimeCreated" {
		t.Errorf("keys %v, System keys %v", keys, sysKeys)
	}
	if e.System.Channel != "TraceLogging" || e.System.Opcode.Name != "Start" || e.System.Keywords.Name != "Audit Success" ||
		e.System.Execution.ThreadID != 77 || e.System.EventID != 7 || e.System.Correlation.ActivityID != "{00000000-0000-0000-0000-000000000000}" {
		t.Errorf("System %s", top["System"])
	}
	if len(b) > 700 {
		t.Errorf("%d bytes of JSON for an event without data: %s", len(b), b)
	}
}

// TestNilCallbacksAndSessions: nil functions and nil sessions are errors, never panics.
func TestNilCallbacksAndSessions(t *testing.T) {
	k, _ := syncKernel(t)
	c := consumer.NewConsumerOn(context.Background(), k)
	var f func(*consumer.Event)
	if err := c.ProcessEvents(f); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("ProcessEvents(nil func): %v", err)
	}
	if err := c.ProcessEvents(nil); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("ProcessEvents(nil): %v", err)
	}
	if err := c.DefaultEventCallback(nil); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("DefaultEventCallback(nil): %v", err)
	}
	var rs *consumer.RealTimeSession
	c.FromSessions(rs)
	if err := c.Start(); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("a nil *RealTimeSession: %v", err)
	}
	if _, err := consumer.NewRealTimeSessionOn(k, "never").QueryTrace(); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("QueryTrace before Start: %v", err)
	}
}

// TestNilSessionMethods: a nil *RealTimeSession answers ERROR_INVALID_PARAMETER.
func TestNilSessionMethods(t *testing.T) {
	var s *consumer.RealTimeSession
	for name, err := range map[string]error{"Start": s.Start(), "Stop": s.Stop(), "Flush": s.Flush(),
		"EnableProvider": s.EnableProvider(consumer.Provider{}), "DisableProvider": s.DisableProvider(consumer.Provider{})} {
		if !errors.Is(err, winerr.ErrInvalidParameter) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := s.QueryTrace(); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("QueryTrace: %v", err)
	}
	if s.TraceName() != "" || s.IsStarted() || s.IsKernelSession() || s.Providers() != nil {
		t.Error("a nil session reports a name, a start or providers")
	}
}

// TestEnableProperties: tekert's TestEnableProperties, with a provider of the program's
// own in place of Windows' kernel providers. A Provider's EnableProperties reach the
// session's enablement, and each event carries the items they ask for: the process start
// key, the SID (LocalSystem's, S-1-5-18), the event key (a new one each event) and the
// stack the event was written from (this test among its frames); a provider enabled
// without them gets none.
func TestEnableProperties(t *testing.T) {
	k, _ := syncKernel(t)
	with := newProvider(t, k, "Etwemu.Test.Properties")
	without := newProvider(t, k, "Etwemu.Test.NoProperties")
	s := consumer.NewRealTimeSessionOn(k, "GolangETW")
	defer s.Stop()
	prov := consumer.MustParseProvider("Etwemu.Test.Properties")
	prov.EnableProperties = uint32(consumer.EVENT_ENABLE_PROPERTY_PROCESS_START_KEY | consumer.EVENT_ENABLE_PROPERTY_SID |
		consumer.EVENT_ENABLE_PROPERTY_EVENT_KEY | consumer.EVENT_ENABLE_PROPERTY_STACK_TRACE)
	if err := s.EnableProvider(prov); err != nil {
		t.Fatal(err)
	}
	if err := s.EnableProvider(consumer.MustParseProvider("Etwemu.Test.NoProperties")); err != nil {
		t.Fatal(err)
	}
	c := consumer.NewConsumerOn(context.Background(), k).FromSessions(s)
	type seen struct {
		startKey, eventKey uint64
		sid                string
		stack              bool
		items              int
	}
	got := map[string][]seen{}
	c.EventPreparedCallback = func(h *consumer.EventRecordHelper) error {
		r := h.EventRec
		var x seen
		x.startKey, _ = r.ExtProcessStartKey()
		x.eventKey, _ = r.ExtEventKey()
		if sid := r.ExtSid(); sid != nil {
			x.sid = sid.String()
		}
		if st, ok := r.ExtStackTrace(); ok {
			// Each address is a frame's; CallersFrames also names the calls inlined there.
			pcs := make([]uintptr, len(st.Addresses))
			for i, pc := range st.Addresses {
				pcs[i] = uintptr(pc)
			}
			for frames, more := runtime.CallersFrames(pcs), true; more; {
				var f runtime.Frame
				f, more = frames.Next()
				x.stack = x.stack || strings.Contains(f.Function, "TestEnableProperties")
			}
		}
		x.items = len(r.ExtendedData)
		name := h.Provider()
		got[name] = append(got[name], x)
		return nil
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := with.WriteEvent("E", nil, nil); err != nil {
			t.Fatal(err)
		}
		if err := without.WriteEvent("E", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	w, wo := got["Etwemu.Test.Properties"], got["Etwemu.Test.NoProperties"]
	if len(w) != 2 || len(wo) != 2 {
		t.Fatalf("events %v, want 2 of each provider", got)
	}
	for i, x := range w {
		if x.startKey == 0 || x.sid != "S-1-5-18" || x.eventKey == 0 || !x.stack {
			t.Errorf("event %d of the provider with properties: %+v; want a start key, S-1-5-18, an event key and a stack through this test", i, x)
		}
	}
	if w[0].eventKey == w[1].eventKey || w[0].startKey != w[1].startKey {
		t.Errorf("event keys %d, %d and start keys %d, %d: want two keys, one process", w[0].eventKey, w[1].eventKey, w[0].startKey, w[1].startKey)
	}
	for i, x := range wo {
		if x.startKey != 0 || x.eventKey != 0 || x.sid != "" || x.stack {
			t.Errorf("event %d of the provider without properties: %+v, want no items of them", i, x)
		}
	}
}

// TestProviderFiltering: tekert's TestProviderFiltering, with a provider of the program's
// own in place of Windows' kernel providers, whose events carry ids 1 to 4. A Provider's
// Filters reach EnableTraceEx2, and the kernel applies them: event ids kept and dropped,
// the program's own process id and executable name (another's keep nothing), and an
// event-id filter combined with a PID filter. A filter the kernel refuses fails
// EnableProvider with ERROR_INVALID_PARAMETER, where tekert's silently leaves it out.
func TestProviderFiltering(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	pid := uint32(os.Getpid())
	for _, c := range []struct {
		name    string
		filters []consumer.ProviderFilter
		want    string
	}{
		{"EventID include", []consumer.ProviderFilter{consumer.NewEventIDFilter(true, 1, 2)}, "[1 2]"},
		{"EventID exclude", []consumer.ProviderFilter{consumer.NewEventIDFilter(false, 1, 2)}, "[3 4]"},
		{"PID", []consumer.ProviderFilter{consumer.NewPIDFilter(pid)}, "[1 2 3 4]"},
		{"another PID", []consumer.ProviderFilter{consumer.NewPIDFilter(pid + 1)}, "[]"},
		{"executable name", []consumer.ProviderFilter{consumer.NewExecutableNameFilter(strings.ToUpper(filepath.Base(exe)))}, "[1 2 3 4]"},
		{"another executable", []consumer.ProviderFilter{consumer.NewExecutableNameFilter("svchost.exe")}, "[]"},
		{"EventID and PID", []consumer.ProviderFilter{consumer.NewEventIDFilter(true, 3), consumer.NewPIDFilter(pid)}, "[3]"},
	} {
		k, err := emu.New(emu.Config{Processors: 1, Synchronous: true, ProcessID: pid})
		if err != nil {
			t.Fatal(err)
		}
		raw, err := k.EventRegister(guid.FromName("Etwemu.Test.Filtering"), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		s := consumer.NewRealTimeSessionOn(k, "GolangTest")
		prov := consumer.MustParseProvider("Etwemu.Test.Filtering:5")
		prov.Filters = c.filters
		if err := s.EnableProvider(prov); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		cons := consumer.NewConsumerOn(context.Background(), k).FromSessions(s)
		var ids []uint16
		cons.EventCallback = func(e *consumer.Event) error { ids = append(ids, e.System.EventID); return nil }
		if err := cons.Start(); err != nil {
			t.Fatal(err)
		}
		for id := uint16(1); id <= 4; id++ {
			if err := k.EventWrite(raw, &emu.EventDescriptor{ID: id, Level: 4}, []byte{byte(id)}); err != nil {
				t.Fatal(err)
			}
		}
		s.Stop()
		if err := cons.Wait(); err != nil {
			t.Fatal(err)
		}
		if got := fmt.Sprint(ids); got != c.want {
			t.Errorf("%s: ids %s, want %s", c.name, got, c.want)
		}
		k.Close()
	}
	k, _ := syncKernel(t)
	s := consumer.NewRealTimeSessionOn(k, "Refused")
	defer s.Stop()
	prov := consumer.MustParseProvider("Etwemu.Test.Filtering:5")
	prov.Filters = []consumer.ProviderFilter{consumer.NewEventIDFilter(true)}
	if err := s.EnableProvider(prov); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("an EVENT_ID filter of no id: %v, want ERROR_INVALID_PARAMETER", err)
	}
}

// What the forks' own tests and etwdump rely on: Stop returns what closing met, not a
// callback's error, which Err keeps (their TestEventMapInfo checks Stop, twice, while its
// callback fails every event); a session added by FromSessions and again by
// FromTraceNames, as etwdump adds each producer, is read once; and ParseProperties of a
// name the event lacks is no error.
func TestForkStopSourcesAndProperties(t *testing.T) {
	k, _ := syncKernel(t)
	p := newProvider(t, k, "Etwemu.Test.Dup")
	s := liveSession(t, k, "Dup", "Etwemu.Test.Dup:5")
	c := consumer.NewConsumerOn(context.Background(), k).FromSessions(s).FromTraceNames("dup").FromSessions(s)
	fake := errors.New("fake")
	events, parsed := 0, error(nil)
	c.EventRecordHelperCallback = func(h *consumer.EventRecordHelper) error {
		parsed = cmp.Or(parsed, h.ParseProperties("N", "Missing"))
		return nil
	}
	c.PreparedCallback = func(*consumer.EventRecordHelper) error { events++; return fake }
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for n := range 5 {
		if err := p.WriteEvent("E", nil, etw.WithFields(etw.IntField("N", n))); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.FlushTrace(0, "Dup", &emu.Properties{}); err != nil {
		t.Fatal(err)
	}
	if err, again := c.Stop(), c.Stop(); err != nil || again != nil {
		t.Errorf("Stop: %v, then %v; want nil, nil", err, again)
	}
	if events != 5 || !errors.Is(c.Err(), fake) || parsed != nil {
		t.Errorf("%d events (want 5, the session read once), Err %v (want the callback's), ParseProperties %v (want nil)", events, c.Err(), parsed)
	}
}
