package etw_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/etwemu/etwemu/consumer"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/etw"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/internal/tltest"
	"github.com/etwemu/etwemu/tracelogging"
)

func newKernel(t *testing.T, cfg emu.Config) *emu.Kernel {
	t.Helper()
	k, err := emu.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// TestEveryFieldThroughConsumer writes an event with every field type through the
// go-winio-shaped provider and reads it back live through the consumer.
func TestEveryFieldThroughConsumer(t *testing.T) {
	k := newKernel(t, emu.Config{Processors: 2})
	cases := tltest.EveryField()
	s := consumer.NewRealTimeSessionOn(k, "RoundTrip")
	s.Properties.BufferSize = 64
	p, err := etw.NewProviderWithOptions("Etwemu.Test.RoundTrip", etw.WithKernel(k))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.IsEnabled() {
		t.Fatal("provider enabled before any session enabled it")
	}
	if err := s.EnableProvider(consumer.MustParseProvider("Etwemu.Test.RoundTrip:4")); err != nil {
		t.Fatal(err)
	}
	if !p.IsEnabledForLevel(etw.LevelInfo) || p.IsEnabledForLevel(etw.LevelVerbose) {
		t.Fatalf("enabled at level 4: IsEnabledForLevel(Info)=%v, (Verbose)=%v", p.IsEnabledForLevel(etw.LevelInfo), p.IsEnabledForLevel(etw.LevelVerbose))
	}
	c := consumer.NewConsumerOn(context.Background(), k).FromSessions(s)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	opts := tltest.Opts(cases)
	activity := guid.MustParse("11111111-2222-3333-4444-555555555555")
	related := guid.MustParse("66666666-7777-8888-9999-aaaaaaaaaaaa")
	if err := p.WriteEvent("Everything", etw.WithEventOpts(etw.WithLevel(etw.LevelInfo), etw.WithKeyword(0x10), etw.WithKeyword(0x2),
		etw.WithOpcode(etw.OpcodeStart), etw.WithTags(0x0ABCDEF), etw.WithActivityID(activity), etw.WithRelatedActivityID(related)), opts); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteEvent("TooVerbose", nil, etw.WithFields(etw.StringField("x", "y"))); err != nil { // level 5 (Verbose) by default
		t.Fatal(err)
	}
	if err := p.WriteEvent("NoFields", etw.WithEventOpts(etw.WithLevel(etw.LevelError)), nil); err != nil {
		t.Fatal(err)
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	var events []*consumer.Event
	for e := range c.Events {
		events = append(events, e)
	}
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 {
		t.Fatalf("%d events, want 2 (the Verbose one filtered by the session's level 4)", len(events))
	}
	// The writing goroutine may change processors between the two events, and the
	// session delivers each processor's buffers in turn, so they may come in either order.
	e, e2 := events[0], events[1]
	if e.Name == "NoFields" {
		e, e2 = e2, e
	}
	if e.DecodeError != "" {
		t.Fatal(e.DecodeError)
	}
	sys := e.System
	if e.Name != "Everything" || sys.Provider.Name != "Etwemu.Test.RoundTrip" || sys.Provider.Guid != "{"+strings.ToUpper(p.ID.String())+"}" ||
		sys.Level.Value != 4 || sys.Keywords.Value != 0x12 || sys.Opcode.Value != 1 || sys.Channel != "TraceLogging" ||
		sys.Correlation.ActivityID != "{"+strings.ToUpper(activity.String())+"}" || sys.Correlation.RelatedActivityID != "{"+strings.ToUpper(related.String())+"}" {
		t.Errorf("header: name %q, system %+v", e.Name, sys)
	}
	if sys.TimeCreated.SystemTime.IsZero() {
		t.Error("no TimeCreated")
	}
	if fmt.Sprint(e.ExtendedData) != "[RELATED_ACTIVITYID PROV_TRAITS EVENT_SCHEMA_TL]" {
		t.Errorf("extended items %v", e.ExtendedData)
	}
	sc, err := tracelogging.ParseSchema(e.Ext[2].Data)
	if err != nil || sc.Tags != 0x0ABCDEF {
		t.Errorf("schema tags %#x, %v", sc.Tags, err)
	}
	tltest.CheckFields(t, "consumer", e.Fields, cases)
	if v := e.EventData["Uint16"]; v != "65535" {
		t.Errorf("EventData[Uint16] = %#v", v)
	}
	if e2.Name != "NoFields" || len(e2.Fields) != 0 || len(e2.Payload) != 0 {
		t.Errorf("second event: %q, %d fields, %d payload bytes", e2.Name, len(e2.Fields), len(e2.Payload))
	}
}

// TestEveryFieldThroughFile writes the same event into an ETL file and reads it back
// through the consumer.
func TestEveryFieldThroughFile(t *testing.T) {
	k := newKernel(t, emu.Config{Processors: 2, FileSystem: &etl.MemFS{}})
	cases := tltest.EveryField()
	tltest.WriteFile(t, k, "tl.etl", cases)
	c := consumer.NewConsumerOn(context.Background(), k).FromFiles("tl.etl")
	var events []*consumer.Event
	c.EventCallback = func(e *consumer.Event) error {
		events = append(events, e)
		return nil
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(events) != 1 {
		t.Fatalf("%d events read from the file, want 1", len(events))
	}
	e := events[0]
	if e.Name != "Everything" || e.System.Provider.Name != "Etwemu.Test.File" || e.System.Level.Value != 4 || e.Source != "tl.etl" {
		t.Errorf("event %q from %q, provider %q, level %d", e.Name, e.Source, e.System.Provider.Name, e.System.Level.Value)
	}
	tltest.CheckFields(t, "file", e.Fields, cases)
}

// TestConcurrentWriters: goroutines share one provider while the session enabling it
// is switched off and on; every event the session accepted is read back whole, and
// written + lost accounts for each write that found the provider enabled.
func TestConcurrentWriters(t *testing.T) {
	k := newKernel(t, emu.Config{Processors: 4, FileSystem: &etl.MemFS{}})
	p, err := etw.NewProviderWithOptions("Etwemu.Test.Concurrent", etw.WithKernel(k))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	h, err := k.StartTrace("concurrent", &emu.Properties{LogFileName: "c.etl", LogFileMode: emu.FileModeSequential, BufferSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	const writers, each = 4, 500
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				p.WriteEvent("E", nil, etw.WithFields(etw.IntField("Writer", w), etw.IntField("I", i), etw.StringField("S", "x")))
			}
		}()
	}
	for range 20 {
		k.EnableTraceEx2(h, p.ID, emu.EnableProvider, 0, 0, 0, nil)
		k.EnableTraceEx2(h, p.ID, emu.DisableProvider, 0, 0, 0, nil)
	}
	k.EnableTraceEx2(h, p.ID, emu.EnableProvider, 0, 0, 0, nil)
	wg.Wait()
	var props emu.Properties
	if err := k.StopTrace(h, "", &props); err != nil {
		t.Fatal(err)
	}
	c := consumer.NewConsumerOn(context.Background(), k).FromFiles("c.etl")
	n := 0
	c.EventCallback = func(e *consumer.Event) error {
		if e.Name != "E" || len(e.Fields) != 3 || e.DecodeError != "" {
			t.Errorf("event %q with %d fields: %s", e.Name, len(e.Fields), e.DecodeError)
		}
		n++
		return nil
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	if n+int(props.EventsLost) > writers*each {
		t.Errorf("%d events read and %d lost, more than the %d written", n, props.EventsLost, writers*each)
	}
}

// TestProviderOptions: the GUID from the name matches go-winio's published vectors;
// WithID overrides it; WithGroup puts a group trait in the provider's metadata, so a
// session that enables the group reaches the provider, and the callback sees it.
func TestProviderOptions(t *testing.T) {
	k := newKernel(t, emu.Config{Processors: 1})
	for name, want := range map[string]string{
		"wincni":                          "c822b598-f4cc-5a72-7933-ce2a816d033f",
		"Moby":                            "6996f090-c5de-5082-a81e-5841acc3a635",
		"ContainerD":                      "2acb92c0-eb9b-571a-69cf-8f3410f383ad",
		"Microsoft.Virtualization.RunHCS": "0b52781f-b24d-5685-ddf6-69830ed40ec3",
	} {
		p, err := etw.NewProviderWithOptions(name, etw.WithKernel(k))
		if err != nil {
			t.Fatal(err)
		}
		if p.ID.String() != want || p.Registration().TraitsName() != name {
			t.Errorf("%s: GUID %s (want %s), traits name %q", name, p.ID, want, p.Registration().TraitsName())
		}
		p.Close()
	}
	id := guid.MustParse("0badf00d-0000-4000-8000-000000000002")
	group := guid.MustParse("0badf00d-0000-4000-8000-000000000003")
	var states []string
	p, err := etw.NewProviderWithOptions("Grouped", etw.WithKernel(k), etw.WithID(id), etw.WithGroup(group),
		etw.WithCallback(func(_ guid.GUID, s etw.ProviderState, l etw.Level, any, all uint64, _ uintptr) {
			states = append(states, fmt.Sprintf("%d/%d/%#x/%#x", s, l, any, all))
		}))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if g, ok := p.Registration().Group(); p.ID != id || !ok || g != group {
		t.Fatalf("ID %s, group %s %v", p.ID, g, ok)
	}
	h, err := k.StartTrace("group", &emu.Properties{LogFileMode: emu.RealTimeMode, Sink: &emu.MemorySink{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.EnableTraceEx2(h, group, emu.EnableProvider, 3, 0x10, 0, &emu.EnableParameters{EnableProperty: 0x020}); err != nil {
		t.Fatal(err)
	}
	if !p.IsEnabledForLevelAndKeywords(etw.LevelWarning, 0x10) || p.IsEnabledForLevelAndKeywords(etw.LevelInfo, 0x10) ||
		p.IsEnabledForLevelAndKeywords(etw.LevelWarning, 0x20) || !p.IsEnabledForLevelAndKeywords(etw.LevelWarning, 0) {
		t.Error("the group's level 3 and keyword 0x10 are not what the provider tests")
	}
	k.StopTrace(h, "", nil)
	if p.IsEnabled() || fmt.Sprint(states) != "[1/3/0x10/0x0 0/0/0x0/0x0]" {
		t.Errorf("after stop: enabled %v, callbacks %v", p.IsEnabled(), states)
	}
	var nilProvider *etw.Provider
	if nilProvider.WriteEvent("x", nil, nil) != nil || nilProvider.IsEnabled() || nilProvider.Close() != nil || nilProvider.String() != "<nil>" {
		t.Error("a nil provider is not inert")
	}
}
