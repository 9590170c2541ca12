package consumer_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/consumer"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/etw"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/winerr"
)

func newKernel(t *testing.T) *emu.Kernel {
	t.Helper()
	k, err := emu.New(emu.Config{Processors: 2, FileSystem: &etl.MemFS{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

func TestParseProvider(t *testing.T) {
	p, err := consumer.ParseProvider("Microsoft-Windows-Kernel-File:0xff:13,14:0x80:0x00")
	if err != nil {
		t.Fatal(err)
	}
	if p.GUID != guid.FromName("Microsoft-Windows-Kernel-File") || p.EnableLevel != 0xFF || len(p.Filter) != 2 || p.Filter[1] != 14 ||
		p.MatchAnyKeyword != 0x80 || p.MatchAllKeyword != 0 {
		t.Errorf("parsed %+v", p)
	}
	p, err = consumer.ParseProvider("{01234567-89ab-cdef-0123-456789abcdef}")
	if err != nil || p.GUID != guid.MustParse("01234567-89ab-cdef-0123-456789abcdef") || p.EnableLevel != 0xFF {
		t.Errorf("a GUID: %+v, %v", p, err)
	}
	for _, bad := range []string{"", ":5", "A:256", "A:1:x", "A:1::0xZ", "A:1:::-1", "A:1:2:3:4:5", "a\x00b", "{bad-guid}", "{01234567-89ab-cdef-0123-456789abcdeg}:5"} {
		if _, err := consumer.ParseProvider(bad); !errors.Is(err, winerr.ErrInvalidParameter) {
			t.Errorf("ParseProvider(%q): %v, want ERROR_INVALID_PARAMETER", bad, err)
		}
	}
	// A number's error is still strconv's, under the Windows code.
	if _, err := consumer.ParseProvider("A:256"); !errors.Is(err, strconv.ErrRange) {
		t.Errorf("ParseProvider(\"A:256\"): %v, want strconv.ErrRange wrapped", err)
	}
}

// TestLossAndFilter: an event too large for the session's buffers is lost and counted;
// the consumer announces it as an RT_LostEvent event and counts it in LostEvents. A
// provider's Filter keeps only its event ids (TraceLogging events all have id 0, so a
// classic registration writes them here); the others are counted in Filtered.
func TestLossAndFilter(t *testing.T) {
	k := newKernel(t)
	s := consumer.NewRealTimeSessionOn(k, "Lossy")
	s.Properties.BufferSize = 4 // KB
	p, err := etw.NewProviderWithOptions("Etwemu.Test.Lossy", etw.WithKernel(k))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	prov := consumer.MustParseProvider("Etwemu.Test.Lossy:5")
	if err := s.EnableProvider(prov); err != nil {
		t.Fatal(err)
	}
	c := consumer.NewConsumerOn(context.Background(), k).FromSessions(s)
	var got []*consumer.Event
	c.EventCallback = func(e *consumer.Event) error { got = append(got, e); return nil }
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteEvent("Small", nil, etw.WithFields(etw.Uint8Field("x", 1))); err != nil {
		t.Fatal(err)
	}
	if err := p.WriteEvent("Huge", nil, etw.WithFields(etw.BinaryField("b", make([]byte, 8000)))); !errors.Is(err, winerr.ErrMoreData) {
		t.Fatalf("an event larger than the buffer: %v, want ERROR_MORE_DATA", err)
	}
	raw, err := k.EventRegister(guid.FromName("Etwemu.Test.Raw"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer k.EventUnregister(raw)
	if err := s.EnableProvider(consumer.MustParseProvider("Etwemu.Test.Raw:5:2")); err != nil {
		t.Fatal(err)
	}
	for id := uint16(1); id <= 2; id++ {
		if err := k.EventWrite(raw, &emu.EventDescriptor{ID: id, Level: 4}, []byte{byte(id)}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	var names []string
	lost := uint64(0)
	for _, e := range got {
		if e.System.Provider.Guid == "{"+strings.ToUpper(consumer.RTLostEventGUID.String())+"}" {
			if e.System.Opcode.Value != consumer.OpcodeRTLostEvent {
				t.Errorf("a loss notice with opcode %d", e.System.Opcode.Value)
			}
			// Its raw header says so too: code that sorts events by Header.ProviderID
			// does not take a notice for a provider's event.
			if e.Header.ProviderID != consumer.RTLostEventGUID || e.Header.Descriptor.Opcode != consumer.OpcodeRTLostEvent {
				t.Errorf("a loss notice's header: provider %v, opcode %d", e.Header.ProviderID, e.Header.Descriptor.Opcode)
			}
			n, err := strconv.ParseUint(e.EventData["EventsLost"].(string), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			lost += n
			continue
		}
		names = append(names, e.Name+"/"+itoa(e.System.EventID))
	}
	// The two writes may run on different processors, whose buffers reach the consumer in
	// either order: the events are compared as a set.
	slices.Sort(names)
	if fmt.Sprint(names) != "[/2 Small/0]" || lost != 1 || c.LostEvents.Load() != 1 || c.Filtered.Load() != 1 {
		t.Errorf("events %v, %d lost announced, LostEvents %d, Filtered %d; want [/2 Small/0] (sorted), 1, 1, 1", names, lost, c.LostEvents.Load(), c.Filtered.Load())
	}
}

func TestStartErrors(t *testing.T) {
	k := newKernel(t)
	c := consumer.NewConsumerOn(context.Background(), k).FromTraceNames("missing")
	if err := c.Start(); !errors.Is(err, winerr.ErrWMIInstanceNotFound) {
		t.Errorf("a missing session: %v, want ERROR_WMI_INSTANCE_NOT_FOUND", err)
	}
	if err := c.Wait(); !errors.Is(err, winerr.ErrWMIInstanceNotFound) {
		t.Errorf("Wait after a failed Start: %v", err)
	}
	// Stop returns what closing met, as golang-etw's: the source's error is Err's.
	if err := c.Stop(); err != nil || !errors.Is(c.Err(), winerr.ErrWMIInstanceNotFound) {
		t.Errorf("Stop after a failed Start: %v, Err %v", err, c.Err())
	}
	if err := c.Start(); err == nil {
		t.Error("a consumer started twice")
	}
	h, err := k.StartTrace("file-only", &emu.Properties{LogFileName: "f.etl", LogFileMode: emu.FileModeSequential})
	if err != nil {
		t.Fatal(err)
	}
	defer k.StopTrace(h, "", nil)
	c = consumer.NewConsumerOn(context.Background(), k).FromTraceNames("file-only")
	if err := c.Start(); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("a session without REAL_TIME: %v, want ERROR_INVALID_PARAMETER", err)
	}
	c = consumer.NewConsumerOn(context.Background(), k).FromFiles("nope.etl")
	if err := c.Start(); err == nil {
		t.Error("a missing file was accepted")
	}
	s := consumer.NewRealTimeSessionOn(k, "twice")
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	// As both golang-etw forks do, a session whose name is taken stops the running one
	// and starts again.
	again := consumer.NewRealTimeSessionOn(k, "twice")
	if err := again.Start(); err != nil {
		t.Errorf("a second session of the name: %v, want the first stopped and the second started", err)
	}
	named := 0
	for _, x := range k.Sessions() {
		if x.Name() == "twice" {
			named++
		}
	}
	if named != 1 || !again.IsStarted() {
		t.Errorf("%d sessions named twice after the restart, started %v", named, again.IsStarted())
	}
	again.Stop()
}

// TestStopWhileLive: Stop ends a consumer whose session still runs, and closes Events.
func TestStopWhileLive(t *testing.T) {
	k := newKernel(t)
	s := consumer.NewRealTimeSessionOn(k, "Live")
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	c := consumer.NewConsumerOn(context.Background(), k).FromSessions(s)
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, open := <-c.Events; open {
		t.Error("Events still open after Stop")
	}
	if s := k.Sessions(); len(s) != 1 || s[0].Consumers() != 0 {
		t.Errorf("the consumer is still attached")
	}
}

func itoa(v uint16) string { return strconv.Itoa(int(v)) }
