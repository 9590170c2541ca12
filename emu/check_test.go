package emu

import (
	"strings"
	"testing"

	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/internal/fault"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winver"
)

// rules returns the distinct rule names of vs.
func rules(vs []Violation) string {
	seen := map[string]bool{}
	var out []string
	for _, v := range vs {
		if !seen[v.Rule] {
			seen[v.Rule] = true
			out = append(out, v.Rule)
		}
	}
	return strings.Join(out, ",")
}

// A kernel driven through every control call keeps its invariants, and conservation
// holds for events still in current buffers as well as sealed ones.
func TestCheckerCleanKernel(t *testing.T) {
	k, err := New(Config{Version: winver.V2004, Processors: 2, Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	c := NewChecker(k)
	sink := &session.Counter{}
	h, err := k.StartTrace("checked", &Properties{LogFileMode: logmode.RealTime, BufferSize: 4, Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	r, _ := k.EventRegister(provA, nil, nil)
	r2, _ := k.EventRegister(provA, nil, nil)
	k.EnableTraceEx2(h, provA, regentry.ControlEnable, 5, 0, 0, nil)
	k.EnableTraceEx2(h, guid.FromName("pre-enabled"), regentry.ControlEnable, 5, 0, 0, nil)
	var tl Tally
	for i := 0; i < 100; i++ { // a few 4 KB buffers' worth, some sealed, some not
		k.EventWriteEx(r, &EventDescriptor{Level: 1}, &WriteOptions{Processor: i % 2, Tally: &tl}, make([]byte, 100))
	}
	c.Accepted(k.Session(h), tl.Delivered[h.LoggerID()])
	if vs := c.Check(); len(vs) != 0 {
		t.Fatalf("clean kernel: %v", vs)
	}
	if sink.EventsWritten() == 0 || sink.EventsWritten() == 100 {
		t.Fatalf("sink has %d events; the test wants some sealed and some pending", sink.EventsWritten())
	}
	k.EventUnregister(r2)
	k.EnableTraceEx2(h, provA, regentry.ControlDisable, 0, 0, 0, nil)
	k.FlushTrace(h, "", nil)
	if vs := c.Check(); len(vs) != 0 {
		t.Fatalf("after unregister, disable and flush: %v", vs)
	}
	// A wrong accepted count is caught.
	c.Accepted(k.Session(h), 1)
	if got := rules(c.Check()); got != "conservation" {
		t.Fatalf("one event too many accepted: rules %q, want conservation", got)
	}
}

// The deliberate bug "a mask bit not cleared on disable" is found by the checker.
func TestCheckerCatchesStaleMaskBit(t *testing.T) {
	defer fault.Set(fault.KeepMaskOnDisable)()
	k, err := New(Config{Version: winver.V2004, Processors: 1, Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	h, _ := k.StartTrace("s", &Properties{LogFileMode: logmode.RealTime, BufferSize: 4})
	r, _ := k.EventRegister(provA, nil, nil)
	k.EnableTraceEx2(h, provA, regentry.ControlEnable, 5, 0, 0, nil)
	c := NewChecker(k)
	if vs := c.Check(); len(vs) != 0 {
		t.Fatalf("before the disable: %v", vs)
	}
	k.EnableTraceEx2(h, provA, regentry.ControlDisable, 0, 0, 0, nil)
	if got := rules(c.Check()); got != "reg-mask" {
		t.Fatalf("after a disable that left the mask bit: rules %q, want reg-mask", got)
	}
	if r.EnableMask() == 0 {
		t.Fatal("the fault hook did not keep the bit; the test proves nothing")
	}
}
