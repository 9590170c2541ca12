package emu

import (
	"bytes"
	"errors"
	"testing"

	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

func pmcKernel(t *testing.T, v winver.Version, counters int, fs etl.FileSystem) *Kernel {
	t.Helper()
	k, err := New(Config{Version: v, Processors: 2, Clock: clock.NewManualSource(1000, 1), Synchronous: true,
		FileSystem: fs, PMCSource: pmc.Synthetic{}, PMCCounters: counters})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

var ulongs = pmc.ULONGs

func seq32(n int) []uint32 {
	v := make([]uint32, n)
	for i := range v {
		v[i] = uint32(i + 1)
	}
	return v
}

func seqSources(n int) []pmc.ProfileSource {
	v := make([]pmc.ProfileSource, n)
	for i := range v {
		v[i] = pmc.ProfileSource(i + 1)
	}
	return v
}

// TestPMCRoutesByVersion checks both ways in on each variant of ETW_PMC_SUPPORT, at the
// limit and one past it, with the Win32 codes of TraceSetInformation and the NTSTATUS
// codes of NtSetSystemInformation.
func TestPMCRoutesByVersion(t *testing.T) {
	cases := []struct {
		v        winver.Version
		counters int // the processor's counters
		limit    int // sources one logger may nominate
	}{
		{winver.V6_2, 8, 4}, {winver.V1607, 8, 4}, {winver.V1703, 8, 8}, {winver.V1809, 16, 8}, {winver.V1903, 6, 6}, {winver.V2004, 12, 12},
	}
	for _, c := range cases {
		k := pmcKernel(t, c.v, c.counters, nil)
		a, _ := startMem(t, k, "a", 0)
		b, _ := startMem(t, k, "b", 0)
		// TraceSetInformation: one past the limit, then the limit.
		if err := k.TraceSetInformation(a, pmc.TracePmcCounterListInfo, ulongs(seq32(c.limit+1)...)); !errors.Is(err, winerr.ErrInvalidParameter) {
			t.Errorf("%v: %d sources through TraceSetInformation: %v", c.v, c.limit+1, err)
		}
		if err := k.TraceSetInformation(a, pmc.TracePmcCounterListInfo, ulongs(seq32(c.limit)...)); err != nil {
			t.Fatalf("%v: %d sources: %v", c.v, c.limit, err)
		}
		if s := k.Session(a).PMC(); s == nil || s.CountersCount() != c.limit || s.Layout().SourceSlots != map[bool]int{true: 0, false: s.Layout().SourceSlots}[c.v >= winver.V1903] {
			t.Errorf("%v: PmcData %+v", c.v, s)
		}
		// NtSetSystemInformation on the other session: the processor's counters left.
		left := c.counters - c.limit
		if left+1 <= c.limit {
			err := k.SetSystemInformation(pmc.SystemPerformanceTraceInformation, pmc.CounterInformation(uint64(b), seqSources(left+1)...))
			if !errors.Is(err, winerr.StatusDeviceBusy) {
				t.Errorf("%v: over-committing the processor's counters: %v", c.v, err)
			}
		}
		if left > 0 {
			if err := k.SetSystemInformation(pmc.SystemPerformanceTraceInformation, pmc.CounterInformation(uint64(b), seqSources(left)...)); err != nil {
				t.Errorf("%v: the %d counters left: %v", c.v, left, err)
			}
		}
		// Events: four hook ids at most; CLASSIC_EVENT_IDs become hook ids.
		five := pmc.EventInformation(uint64(a), 1, 2, 3, 4, 5)
		if err := k.SetSystemInformation(pmc.SystemPerformanceTraceInformation, five); !errors.Is(err, winerr.StatusInvalidParameter) {
			t.Errorf("%v: five hook ids: %v", c.v, err)
		}
		ids := pmc.ClassicEventIDs(pmc.ClassicEventID{EventGUID: pmc.ThreadGUID, Type: 36}, pmc.ClassicEventID{EventGUID: pmc.PerfInfoGUID, Type: 46},
			pmc.ClassicEventID{EventGUID: pmc.DiskIoGUID, Type: 10}, pmc.ClassicEventID{EventGUID: pmc.ProcessGUID, Type: 1})
		if err := k.TraceSetInformation(a, pmc.TracePmcEventListInfo, ids); err != nil {
			t.Fatalf("%v: four events: %v", c.v, err)
		}
		if got := k.Session(a).PMC().HookIDs(); len(got) != 4 || got[0] != pmc.HookCSwitch || got[1] != pmc.HookSampledProfile || got[2] != 0x010A || got[3] != 0x0301 {
			t.Errorf("%v: hook ids %#x", c.v, got)
		}
		// Set once: both lists refuse a second time, by either route.
		if err := k.TraceSetInformation(a, pmc.TracePmcEventListInfo, ids[:pmc.ClassicEventIDSize]); !errors.Is(err, winerr.ErrBusy) {
			t.Errorf("%v: second event list: %v", c.v, err)
		}
		if err := k.SetSystemInformation(pmc.SystemPerformanceTraceInformation, pmc.CounterInformation(uint64(a), 19)); !errors.Is(err, winerr.StatusDeviceBusy) {
			t.Errorf("%v: second counter list: %v", c.v, err)
		}
		// Stopping a logger returns its counters to the HAL.
		hal, _ := k.HAL()
		if _, err := k.StopTrace(a, "", nil), error(nil); err != nil || hal.InUse() != max(left, 0) {
			t.Errorf("%v: %d counters in use after stop, want %d", c.v, hal.InUse(), max(left, 0))
		}
	}
}

// TestPMCChecks checks what both routes refuse besides limits: versions before 6.2, a
// logger that does not exist, events before counters, short buffers, other classes and
// GUIDs that are no kernel event class.
func TestPMCChecks(t *testing.T) {
	old := pmcKernel(t, winver.V6_1, 0, nil)
	h, _ := startMem(t, old, "old", 0)
	if err := old.TraceSetInformation(h, pmc.TracePmcCounterListInfo, ulongs(19)); !errors.Is(err, winerr.ErrNotSupported) {
		t.Errorf("6.1 TraceSetInformation: %v", err)
	}
	if err := old.SetSystemInformation(pmc.SystemPerformanceTraceInformation, pmc.CounterInformation(uint64(h), 19)); !errors.Is(err, winerr.StatusInvalidInfoClass) {
		t.Errorf("6.1 NtSetSystemInformation: %v", err)
	}
	k := pmcKernel(t, winver.V1809, 0, nil)
	h, _ = startMem(t, k, "s", 0)
	cases := []struct {
		name string
		err  error
		want error
	}{
		{"unknown handle", k.TraceSetInformation(h+1<<16, pmc.TracePmcCounterListInfo, ulongs(19)), winerr.ErrWMIInstanceNotFound},
		{"unknown handle, native", k.SetSystemInformation(pmc.SystemPerformanceTraceInformation, pmc.CounterInformation(uint64(h)+5, 19)), winerr.StatusWMIInstanceNotFound},
		{"events first", k.TraceSetInformation(h, pmc.TracePmcEventListInfo, pmc.ClassicEventIDs(pmc.ClassicEventID{EventGUID: pmc.ThreadGUID, Type: 36})), winerr.ErrInvalidParameter},
		{"events first, native", k.SetSystemInformation(pmc.SystemPerformanceTraceInformation, pmc.EventInformation(uint64(h), pmc.HookCSwitch)), winerr.StatusInvalidParameter},
		{"3 bytes", k.TraceSetInformation(h, pmc.TracePmcCounterListInfo, []byte{19, 0, 0}), winerr.ErrBadLength},
		{"header only", k.SetSystemInformation(pmc.SystemPerformanceTraceInformation, pmc.CounterInformation(uint64(h))), winerr.StatusInfoLengthMismatch},
		{"other system class", k.SetSystemInformation(0x05, nil), winerr.StatusInvalidInfoClass},
		{"other trace class", k.TraceSetInformation(h, 3, nil), winerr.ErrNotSupported},
		{"not a source", k.TraceSetInformation(h, pmc.TracePmcCounterListInfo, ulongs(uint32(pmc.ProfileMaximum))), winerr.ErrInvalidParameter},
		{"empty", k.TraceSetInformation(h, pmc.TracePmcCounterListInfo, nil), winerr.ErrBadLength},
	}
	for _, c := range cases {
		if !errors.Is(c.err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
	if k.Session(h).PMC() != nil {
		t.Error("refused requests left PmcData set")
	}
	must(t, k.TraceSetInformation(h, pmc.TracePmcCounterListInfo, ulongs(19)))
	if err := k.TraceSetInformation(h, pmc.TracePmcEventListInfo, pmc.ClassicEventIDs(pmc.ClassicEventID{EventGUID: guid.FromName("user"), Type: 1})); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("a provider GUID in CLASSIC_EVENT_ID: %v", err)
	}
	if _, err := k.TraceQueryInformation(pmc.TraceMaxPmcCounterQuery); !errors.Is(err, winerr.ErrNotSupported) {
		t.Errorf("TraceMaxPmcCounterQuery on 1809: %v", err)
	}
	k2 := pmcKernel(t, winver.V2004, 6, nil)
	if b, err := k2.TraceQueryInformation(pmc.TraceMaxPmcCounterQuery); err != nil || !bytes.Equal(b, ulongs(6)) {
		t.Errorf("TraceMaxPmcCounterQuery on 2004: % x %v", b, err)
	}
	if _, err := New(Config{PMCCounters: 17}); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("17 counters per processor: %v", err)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestPMCEndToEnd configures counters and events, writes EVENT_HEADER and system events
// on both processors, and reads the ETL file back: the selected events carry the
// synthetic counters of the processor that wrote them, numbered by that processor's
// reads, and the others carry none.
func TestPMCEndToEnd(t *testing.T) {
	for _, v := range []winver.Version{winver.V1607, winver.V1809, winver.V2004} {
		fs := &etl.MemFS{}
		k := pmcKernel(t, v, 8, fs)
		h, err := k.StartTrace("pmc", &Properties{BufferSize: 4, LogFileMode: logmode.Sequential, LogFileName: "pmc.etl"})
		must(t, err)
		sources := []pmc.ProfileSource{pmc.ProfileTotalCycles, pmc.ProfileCacheMisses, pmc.ProfileBranchMispredictions}
		must(t, k.TraceSetInformation(h, pmc.TracePmcCounterListInfo, ulongs(19, 10, 11)))
		must(t, k.SetSystemInformation(pmc.SystemPerformanceTraceInformation, pmc.EventInformation(uint64(h), pmc.HookCSwitch, 7)))
		prov := guid.FromName("pmc-provider")
		r, err := k.EventRegister(prov, nil, nil)
		must(t, err)
		must(t, k.EnableTraceEx2(h, prov, regentry.ControlEnable, 5, 0, 0, nil))

		type want struct {
			kind   etl.Kind
			id     uint16 // event id or hook id
			proc   int
			seq    uint64 // the processor's read number; 0: no counters
			hasRel bool
		}
		var wants []want
		var reads [2]uint64
		counted := func(proc int) uint64 { reads[proc]++; return reads[proc] }
		related := guid.FromName("related")
		for i := 0; i < 40; i++ {
			proc := i % 2
			o := &WriteOptions{Processor: proc, ThreadID: 100 + uint32(i)}
			switch i % 4 {
			case 0, 1: // event 7 is selected, 8 is not
				id := uint16(7 + i%4)
				if i%8 == 0 {
					o.RelatedActivityID = &related
				}
				must(t, k.EventWriteEx(r, &EventDescriptor{ID: id, Level: 4}, o, []byte("payload")))
				w := want{kind: etl.KindEventHeader, id: id, proc: proc, hasRel: o.RelatedActivityID != nil}
				if id == 7 {
					w.seq = counted(proc)
				}
				wants = append(wants, w)
			case 2, 3: // CSwitch is selected, the image load hook is not
				hook := uint16(pmc.HookCSwitch)
				if i%4 == 3 {
					hook = 0x140A
				}
				must(t, k.WriteSystemEvent(h, hook, o, []byte("system data")))
				w := want{kind: etl.KindSystem, id: hook, proc: proc}
				if hook == pmc.HookCSwitch {
					w.seq = counted(proc)
				}
				wants = append(wants, w)
			}
		}
		var q Properties
		must(t, k.StopTrace(h, "", &q))
		if q.EventsLost != 0 {
			t.Fatalf("%v: %d events lost", v, q.EventsLost)
		}
		data, _ := fs.ReadFile("pmc.etl")
		rd, err := etl.NewReader(bytes.NewReader(data), int64(len(data)))
		must(t, err)
		var got [2][]etl.Record
		must(t, rd.Walk(func(b *etl.Buffer, rec etl.Record) error {
			got[b.Header.ProcessorNumber] = append(got[b.Header.ProcessorNumber], rec)
			return nil
		}))
		var next [2]int
		for _, w := range wants {
			if next[w.proc] >= len(got[w.proc]) {
				t.Fatalf("%v: processor %d has %d records, more expected", v, w.proc, len(got[w.proc]))
			}
			rec := got[w.proc][next[w.proc]]
			next[w.proc]++
			id := rec.HookID
			if rec.Kind == etl.KindEventHeader {
				id = rec.Event.Descriptor.ID
			}
			if rec.Kind != w.kind || id != w.id {
				t.Fatalf("%v: processor %d record %d is %v %#x, want %v %#x", v, w.proc, next[w.proc]-1, rec.Kind, id, w.kind, w.id)
			}
			if w.seq == 0 {
				if rec.PMC != nil {
					t.Errorf("%v: unselected %v %#x carries counters %#x", v, rec.Kind, id, rec.PMC)
				}
			} else {
				if len(rec.PMC) != len(sources) {
					t.Fatalf("%v: %v %#x carries %d counters, want %d", v, rec.Kind, id, len(rec.PMC), len(sources))
				}
				for i, s := range sources {
					if rec.PMC[i] != pmc.SyntheticValue(w.proc, s, w.seq) {
						t.Errorf("%v: processor %d read %d counter %v = %#x, want %#x", v, w.proc, w.seq, s, rec.PMC[i], pmc.SyntheticValue(w.proc, s, w.seq))
					}
				}
			}
			if w.kind == etl.KindSystem && (rec.Marker>>8&7 != uint32(len(rec.PMC)) || string(rec.Payload) != "system data") {
				t.Errorf("%v: system record marker %#x payload %q", v, rec.Marker, rec.Payload)
			}
			if w.kind == etl.KindEventHeader {
				if string(rec.Payload) != "payload" {
					t.Errorf("%v: event payload %q", v, rec.Payload)
				}
				rel := false
				for _, x := range rec.Ext {
					rel = rel || x.Type == 1 && guid.FromBytes(x.Data) == related
				}
				if rel != w.hasRel || (w.seq != 0) != (rec.Event.Flags&1 != 0) && !w.hasRel {
					t.Errorf("%v: event %d ext items %+v flags %#x, related %v", v, id, rec.Ext, rec.Event.Flags, w.hasRel)
				}
			}
		}
		if next[0] != len(got[0]) || next[1] != len(got[1]) {
			t.Errorf("%v: file has %d+%d records, %d+%d written", v, len(got[0]), len(got[1]), next[0], next[1])
		}
	}
}

// TestPMCSystemHeaderCap: with eight sources (1703 to 1809 allow them) a system header
// carries seven, the most its marker can say; an EVENT_HEADER event carries all eight.
func TestPMCSystemHeaderCap(t *testing.T) {
	k := pmcKernel(t, winver.V1809, 8, nil)
	h, sink := startMem(t, k, "eight", 0)
	must(t, k.TraceSetInformation(h, pmc.TracePmcCounterListInfo, ulongs(seq32(8)...)))
	must(t, k.SetSystemInformation(pmc.SystemPerformanceTraceInformation, pmc.EventInformation(uint64(h), pmc.HookCSwitch, 3)))
	must(t, k.WriteSystemEvent(h, pmc.HookCSwitch, &WriteOptions{Processor: 1}))
	prov := guid.FromName("eight")
	r, _ := k.EventRegister(prov, nil, nil)
	must(t, k.EnableTraceEx2(h, prov, regentry.ControlEnable, 5, 0, 0, nil))
	must(t, k.EventWriteEx(r, &EventDescriptor{ID: 3, Level: 1}, &WriteOptions{Processor: 1}))
	must(t, k.StopTrace(h, "", nil))
	var counts []int
	for _, buf := range sink.Buffers() {
		b, err := etl.ParseBuffer(buf)
		must(t, err)
		must(t, b.Records(func(rec etl.Record) error {
			counts = append(counts, len(rec.PMC))
			return nil
		}))
	}
	if len(counts) != 2 || counts[0] != 7 || counts[1] != 8 {
		t.Errorf("counters per record %v, want [7 8]", counts)
	}
}
