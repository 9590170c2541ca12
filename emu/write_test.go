package emu

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/internal/hw"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// Events reach exactly the sessions whose level and keywords they pass, with the header
// the provider described.
func TestWriteRoutesByLevelAndKeyword(t *testing.T) {
	k := newKernel(t, winver.V2004)
	r, _ := k.EventRegister(provA, nil, nil)
	hv, verbose := startMem(t, k, "verbose", 0)
	hw, warnings := startMem(t, k, "warnings-kw2", 0)
	k.EnableTraceEx2(hv, provA, regentry.ControlEnable, 0, 0, 0, nil)
	k.EnableTraceEx2(hw, provA, regentry.ControlEnable, 3, 0x2, 0, nil)

	act, rel := guid.FromName("activity"), guid.FromName("related")
	write := func(id uint16, level uint8, kw uint64) {
		t.Helper()
		err := k.EventWriteEx(r, &EventDescriptor{ID: id, Level: level, Keyword: kw, Opcode: 1, Task: 7},
			&WriteOptions{Processor: 1, ThreadID: 77, ActivityID: &act, RelatedActivityID: &rel}, []byte("ab"), []byte("cde"))
		if err != nil {
			t.Fatal(err)
		}
	}
	write(1, 2, 0x2) // both
	write(2, 4, 0x2) // verbose only: level too high for warnings
	write(3, 1, 0x1) // verbose only: keyword misses warnings' any-mask
	write(4, 1, 0)   // keyword 0 passes both
	k.StopTrace(hv, "", nil)
	k.StopTrace(hw, "", nil)

	ids := func(hs []abi.EventHeader) (out []uint16) {
		for _, h := range hs {
			out = append(out, h.Descriptor.ID)
		}
		return
	}
	if got := ids(records(t, verbose)); len(got) != 4 {
		t.Fatalf("verbose session got %v", got)
	}
	if got := ids(records(t, warnings)); len(got) != 2 || got[0] != 1 || got[1] != 4 {
		t.Fatalf("warnings session got %v, want [1 4]", got)
	}
	// One record in full.
	var raw []byte
	verbose.Events(func(_ []byte, rec etl.Record) error {
		if raw == nil {
			raw = rec.Bytes
		}
		return nil
	})
	h, _ := abi.DecodeEventHeader(raw)
	if h.ProviderID != provA || h.ThreadID != 77 || h.ProcessID != uint32(os.Getpid()) || h.ActivityID != act ||
		h.Descriptor.Task != 7 || h.Descriptor.Opcode != 1 || h.HeaderType != abi.EventHeaderEvent64 ||
		h.Flags != abi.EventFlag64BitHeader|abi.EventFlagExtendedInfo {
		t.Fatalf("header %+v", h)
	}
	if int(h.Size) != abi.EventHeaderSize+24+5 || len(raw) != int(h.Size) {
		t.Fatalf("size %d", h.Size)
	}
	item := raw[abi.EventHeaderSize:]
	if binary.LittleEndian.Uint16(item[0:]) != 24 || binary.LittleEndian.Uint16(item[2:]) != abi.ExtTypeRelatedActivityID ||
		binary.LittleEndian.Uint16(item[6:]) != 16 || guid.FromBytes(item[8:]) != rel {
		t.Fatalf("related activity item % x", item[:24])
	}
	if !bytes.Equal(raw[abi.EventHeaderSize+24:], []byte("abcde")) {
		t.Fatalf("payload %q", raw[abi.EventHeaderSize+24:])
	}
	// The record landed in processor 1's buffer.
	b := verbose.Buffers()[0]
	if binary.LittleEndian.Uint16(b[abi.OffClientContext:]) != 1 {
		t.Fatal("record not in processor 1's buffer")
	}
}

func TestWriteErrors(t *testing.T) {
	k := newKernel(t, winver.V2004)
	r, _ := k.EventRegister(provA, nil, nil)
	// Disabled: nothing happens, success.
	if err := k.EventWrite(r, &EventDescriptor{Level: 1}, make([]byte, 100000)); err != nil {
		t.Fatalf("disabled provider: %v", err)
	}
	h, _ := startMem(t, k, "e", 0)
	k.EnableTraceEx2(h, provA, regentry.ControlEnable, 5, 0, 0, nil)
	// Each refusal says what it refuses.
	if err := k.EventWrite(r, nil); !errors.Is(err, winerr.ErrInvalidParameter) || !strings.Contains(err.Error(), "EVENT_DESCRIPTOR is nil") {
		t.Fatalf("nil descriptor: %v", err)
	}
	if err := k.EventWrite(r, &EventDescriptor{Level: 1}, make([][]byte, 129)...); !errors.Is(err, winerr.ErrInvalidParameter) || !strings.Contains(err.Error(), "more than 128 data blocks") {
		t.Fatalf("129 data blocks: %v", err)
	}
	if err := k.EventWrite(r, &EventDescriptor{Level: 1}, make([]byte, 70000)); !errors.Is(err, winerr.ErrArithmeticOverflow) || !strings.Contains(err.Error(), "would pass 65535 bytes") {
		t.Fatalf("70000-byte event: %v", err)
	}
	if err := k.WriteSystemEvent(h, 0x524, nil, make([]byte, 70000)); !errors.Is(err, winerr.ErrArithmeticOverflow) || !strings.Contains(err.Error(), "would pass 65535 bytes") {
		t.Fatalf("70000-byte system event: %v", err)
	}
	if err := k.EventWrite(r, &EventDescriptor{Level: 1}, make([]byte, 5000)); !errors.Is(err, winerr.ErrMoreData) {
		t.Fatalf("event bigger than a 4 KB buffer: %v", err)
	}
	var q Properties
	k.QueryTrace(h, "", &q)
	if q.EventsLost != 3 {
		t.Fatalf("EventsLost %d, want 3 (too big for ETW twice, too big for the buffer)", q.EventsLost)
	}
}

// Without EVENT_TRACE_INDEPENDENT_SESSION_MODE a failure in one session stops publication
// to the sessions after it, which count the event lost; an independent session still gets it.
func TestIndependentSessionMode(t *testing.T) {
	k := newKernel(t, winver.V2004)
	r, _ := k.EventRegister(provA, nil, nil)
	small := &session.MemorySink{}
	hs, _ := k.StartTrace("small", &Properties{LogFileMode: logmode.RealTime, BufferSize: 4, Sink: small})
	hd, plain := startMem(t, k, "dependent", 0)
	hi, indep := startMem(t, k, "independent", 0x08000000)
	for _, h := range []TraceHandle{hs, hd, hi} {
		k.EnableTraceEx2(h, provA, regentry.ControlEnable, 5, 0, 0, nil)
	}
	// Slots are taken in enable order, so "small" is tried first. An event too big for
	// every session's 4 KB buffers fails there; the dependent session then counts it lost
	// without trying, and the independent one tries and fails on its own.
	if err := k.EventWrite(r, &EventDescriptor{Level: 1}, make([]byte, 5000)); !errors.Is(err, winerr.ErrMoreData) {
		t.Fatalf("oversize: %v", err)
	}
	tally := &Tally{}
	if err := k.EventWriteEx(r, &EventDescriptor{Level: 1}, &WriteOptions{Processor: 0, Tally: tally}, []byte("ok")); err != nil {
		t.Fatal(err)
	}
	var qs, qd, qi Properties
	k.StopTrace(hs, "", &qs)
	k.StopTrace(hd, "", &qd)
	k.StopTrace(hi, "", &qi)
	if qs.EventsLost != 1 || qd.EventsLost != 1 || qi.EventsLost != 1 {
		t.Fatalf("EventsLost small %d dependent %d independent %d", qs.EventsLost, qd.EventsLost, qi.EventsLost)
	}
	n := func(s *session.MemorySink) int { c, _ := s.CountEvents(); return c }
	if n(small) != 1 || n(plain) != 1 || n(indep) != 1 {
		t.Fatalf("the fitting event reached %d/%d/%d sessions", n(small), n(plain), n(indep))
	}
	if tally.Delivered[hs.LoggerID()] != 1 || tally.Delivered[hd.LoggerID()] != 1 || tally.Delivered[hi.LoggerID()] != 1 {
		t.Fatal("tally does not match")
	}
}

// A session out of buffers stops publication to a later dependent session but not to an
// independent one.
func TestFailureStopsDependentSessions(t *testing.T) {
	k := newKernel(t, winver.V2004)
	r, _ := k.EventRegister(provA, nil, nil)
	gate := make(chan struct{})
	blocked := &gateSink{gate: gate}
	hb, err := k.StartTrace("full", &Properties{LogFileMode: logmode.RealTime, BufferSize: 4, MinimumBuffers: 4, MaximumBuffers: 4, Sink: blocked})
	if err != nil {
		t.Fatal(err)
	}
	// The two later sessions have room for all 400 events; only the first runs out.
	dep, ind := &session.MemorySink{}, &session.MemorySink{}
	hd, _ := k.StartTrace("dependent", &Properties{LogFileMode: logmode.RealTime, BufferSize: 4, MinimumBuffers: 40, Sink: dep})
	hi, _ := k.StartTrace("independent", &Properties{BufferSize: 4, MinimumBuffers: 40, LogFileMode: logmode.RealTime | logmode.IndependentSession, Sink: ind})
	for _, h := range []TraceHandle{hb, hd, hi} {
		k.EnableTraceEx2(h, provA, regentry.ControlEnable, 5, 0, 0, nil)
	}
	tally := &Tally{}
	var firstFail = -1
	for i := 0; i < 400; i++ {
		err := k.EventWriteEx(r, &EventDescriptor{Level: 1}, &WriteOptions{Processor: 0, Tally: tally}, make([]byte, 100))
		if err != nil {
			if !errors.Is(err, winerr.ErrNotEnoughMemory) {
				t.Fatal(err)
			}
			if firstFail < 0 {
				firstFail = i
			}
		}
	}
	if firstFail < 0 {
		t.Fatal("the blocked session never ran out of buffers")
	}
	close(gate)
	for _, h := range []TraceHandle{hb, hd, hi} {
		k.StopTrace(h, "", nil)
	}
	cd, _ := dep.CountEvents()
	ci, _ := ind.CountEvents()
	if ci != 400 || cd >= 400 || uint64(cd) != tally.Delivered[hd.LoggerID()] || tally.Lost[hd.LoggerID()] != uint64(400-cd) {
		t.Fatalf("independent got %d (want 400), dependent got %d with %d lost", ci, cd, tally.Lost[hd.LoggerID()])
	}
}

type gateSink struct {
	session.MemorySink
	gate chan struct{}
}

func (g *gateSink) WriteBuffer(b []byte) error {
	<-g.gate
	return g.MemorySink.WriteBuffer(b)
}

// Many goroutines write to several sessions on all processors while others enable,
// disable, register and unregister. Afterwards, for every session, the events in its
// sealed buffers plus its EventsLost equal what the writers were told was delivered or
// lost there: nothing vanishes, nothing is counted twice.
func TestStressConservation(t *testing.T) {
	k := newKernel(t, winver.V2004)
	const sessions = 4
	provs := []guid.GUID{provA, guid.FromName("B"), guid.FromName("C")}
	handles := make([]TraceHandle, sessions)
	sinks := make([]*session.MemorySink, sessions)
	for i := range handles {
		sinks[i] = &session.MemorySink{}
		mode := uint32(logmode.RealTime)
		if i%2 == 1 {
			mode |= logmode.IndependentSession
		}
		h, err := k.StartTrace("stress"+itoa(i), &Properties{BufferSize: 4, MinimumBuffers: 4, MaximumBuffers: 8, LogFileMode: mode, Sink: sinks[i]})
		if err != nil {
			t.Fatal(err)
		}
		handles[i] = h
		for _, p := range provs {
			k.EnableTraceEx2(h, p, regentry.ControlEnable, 5, 0, 0, nil)
		}
	}
	iters := 4000
	if testing.Short() {
		iters = 1000
	}
	var wg sync.WaitGroup
	var stop atomic.Bool
	tallies := make([]*Tally, 8)
	for w := range tallies {
		tallies[w] = &Tally{}
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			r, err := k.EventRegister(provs[w%len(provs)], nil, nil)
			if err != nil {
				t.Error(err)
				return
			}
			defer k.EventUnregister(r)
			opts := &WriteOptions{Tally: tallies[w]}
			for i := 0; i < iters; i++ {
				opts.Processor = (w + i) % 3 // includes a processor past the two emulated ones
				if w%2 == 0 {
					opts.Processor = AnyProcessor
				}
				err := k.EventWriteEx(r, &EventDescriptor{ID: uint16(i), Level: uint8(1 + i%5), Keyword: uint64(i % 3)}, opts, make([]byte, i%300))
				if err != nil && !errors.Is(err, winerr.ErrNotEnoughMemory) && !errors.Is(err, winerr.ErrMoreData) {
					t.Error(err)
					return
				}
			}
		}(w)
	}
	// Control churn: enable and disable with changing levels, and short-lived registrations.
	var churn sync.WaitGroup
	churn.Add(2)
	go func() {
		defer churn.Done()
		for i := 0; !stop.Load(); i++ {
			h := handles[i%sessions]
			p := provs[i%len(provs)]
			if i%3 == 0 {
				k.EnableTraceEx2(h, p, regentry.ControlDisable, 0, 0, 0, nil)
			} else {
				k.EnableTraceEx2(h, p, regentry.ControlEnable, uint8(i%6), uint64(i%4), 0, nil)
			}
		}
	}()
	go func() {
		defer churn.Done()
		for i := 0; !stop.Load(); i++ {
			r, err := k.EventRegister(provs[i%len(provs)], func(guid.GUID, regentry.ControlCode, uint8, uint64, uint64, []byte, any) {}, nil)
			if err == nil {
				k.EventUnregister(r)
			}
		}
	}()
	wg.Wait()
	stop.Store(true)
	churn.Wait()

	// With writers joined, the live kernel must keep every invariant, including
	// conservation for sessions still running (events not yet flushed are counted in
	// their buffers).
	c := NewChecker(k)
	for _, h := range handles {
		for _, tl := range tallies {
			c.Accepted(k.Session(h), tl.Delivered[h.LoggerID()])
		}
	}
	for _, v := range c.Check() {
		t.Error(v)
	}
	for i, h := range handles {
		var q Properties
		if err := k.StopTrace(h, "", &q); err != nil {
			t.Fatal(err)
		}
		var delivered, lost uint64
		for _, tl := range tallies {
			delivered += tl.Delivered[h.LoggerID()]
			lost += tl.Lost[h.LoggerID()]
		}
		sealed, err := sinks[i].CountEvents()
		if err != nil {
			t.Fatal(err)
		}
		if uint64(sealed) != delivered || uint64(q.EventsLost) != lost {
			t.Errorf("session %d: sealed %d + lost %d, writers were told %d delivered + %d lost", i, sealed, q.EventsLost, delivered, lost)
		}
		if delivered == 0 {
			t.Errorf("session %d received nothing; the test exercised nothing", i)
		}
	}
}

// The sessions an event goes to through EventWrite share one reading of the time-stamp
// counter when their clocks read it (QPC and CPU cycles), taken with the processor; a
// system-time session stamps its own clock.
func TestWriteSharesTSCReading(t *testing.T) {
	if !hw.HasTSC() {
		t.Skip("no invariant TSC on this machine")
	}
	k, err := New(Config{Version: winver.V2004, Processors: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	r, _ := k.EventRegister(provA, nil, nil)
	var sinks []*session.MemorySink
	for _, ct := range []clock.Type{clock.QPC, clock.CPUCycles, clock.System} {
		sink := &session.MemorySink{}
		h, err := k.StartTrace("clock-"+ct.String(), &Properties{LogFileMode: logmode.RealTime, BufferSize: 4, ClockType: ct, Sink: sink})
		if err != nil {
			t.Fatal(err)
		}
		k.EnableTraceEx2(h, provA, regentry.ControlEnable, 0, 0, 0, nil)
		sinks = append(sinks, sink)
	}
	if err := k.EventWrite(r, &EventDescriptor{ID: 1, Level: 4}, []byte("x")); err != nil {
		t.Fatal(err)
	}
	k.Close()
	var stamps []int64
	for _, sink := range sinks {
		sink.Events(func(_ []byte, rec etl.Record) error {
			stamps = append(stamps, int64(binary.LittleEndian.Uint64(rec.Bytes[abi.OffEventTimeStamp:])))
			return nil
		})
	}
	if len(stamps) != 3 {
		t.Fatalf("%d records, want one per session", len(stamps))
	}
	if stamps[0] != stamps[1] {
		t.Errorf("QPC and CPU-cycle sessions stamped %d and %d: want the one reading taken with the processor", stamps[0], stamps[1])
	}
	if stamps[2] == stamps[0] || stamps[2] < 116444736000000000 { // FILETIME of 1970
		t.Errorf("system-time session stamped %d, want its own FILETIME", stamps[2])
	}
}

// An event for one session takes a path of its own: EventWriteEx without a Tally takes
// write's one-session path, and EventWrite (where sessions stamp with the time-stamp
// counter) writePlain. Both must answer exactly as the general path does (EventWriteEx
// with a Tally): the same error for each event, the same events in the session and the
// same EventsLost. The sequence covers acceptance, level filtering, an event too big for
// a buffer, one too big for ETW, and running out of buffers while the sink is stalled.
// The kernel has one processor, so that EventWrite's events go where the others name.
func TestOneSessionPathMatchesGeneralPath(t *testing.T) {
	type run struct {
		errs   []error
		events int
		lost   uint32
		tally  Tally
	}
	const (
		general = iota
		oneSession
		plain
	)
	sizes := []int{100, 5000, 100, 70000, 100}
	do := func(path int) run {
		k, err := New(Config{Version: winver.V2004, Processors: 1})
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		if path == plain && !k.tsc {
			t.Fatal("EventWrite's own path needs sessions that may stamp with the time-stamp counter")
		}
		r, _ := k.EventRegister(provA, nil, nil)
		gate := make(chan struct{})
		sink := &gateSink{gate: gate}
		h, err := k.StartTrace("one", &Properties{LogFileMode: logmode.RealTime, BufferSize: 4, MinimumBuffers: 4, MaximumBuffers: 4, Sink: sink})
		if err != nil {
			t.Fatal(err)
		}
		k.EnableTraceEx2(h, provA, regentry.ControlEnable, 4, 0, 0, nil)
		var out run
		for i := 0; i < 300; i++ {
			d := &EventDescriptor{ID: uint16(i), Level: uint8(3 + i%3)} // level 5 is filtered
			data := make([]byte, sizes[i%len(sizes)])
			switch path {
			case general:
				err = k.EventWriteEx(r, d, &WriteOptions{Processor: 0, Tally: &out.tally}, data)
			case oneSession:
				err = k.EventWriteEx(r, d, &WriteOptions{Processor: 0}, data)
			case plain:
				err = k.EventWrite(r, d, data)
			}
			out.errs = append(out.errs, err)
		}
		close(gate)
		var q Properties
		k.StopTrace(h, "", &q)
		out.events, _ = sink.CountEvents()
		out.lost = q.EventsLost
		return out
	}
	paths := []int{oneSession, plain}
	if !hw.HasTSC() {
		paths = paths[:1] // without an invariant TSC, EventWrite takes write's paths
	}
	want := do(general)
	for _, path := range paths {
		name := [...]string{"general", "one-session", "EventWrite's"}[path]
		got := do(path)
		for i := range got.errs {
			if !errors.Is(got.errs[i], want.errs[i]) && got.errs[i] != want.errs[i] {
				t.Fatalf("event %d: %s path %v, general path %v", i, name, got.errs[i], want.errs[i])
			}
		}
		if got.events != want.events || got.lost != want.lost {
			t.Fatalf("%s path: %d events, %d lost; general path: %d events, %d lost", name, got.events, got.lost, want.events, want.lost)
		}
	}
	kinds := map[string]bool{}
	for _, err := range want.errs {
		kinds[fmt.Sprint(err)] = true
	}
	if len(kinds) != 4 || want.lost == 0 {
		t.Fatalf("the sequence reached %v with %d lost; want success, ERROR_MORE_DATA, ERROR_ARITHMETIC_OVERFLOW and ERROR_NOT_ENOUGH_MEMORY", kinds, want.lost)
	}
}

// EventWrite writes a plain event in its own frame (writePlain): a data block of up to
// hw.CopyReleaseMax bytes with CopyPublish, a longer one with CopyPublishLong. Either way
// the record must be the one the general path (Logger.Write) writes, byte for byte but
// the timestamp, with the event's data after the header and its alignment padding
// zeroed. The buffers are recycled first under events of other bytes, so that padding
// left as it was would show.
func TestEventWriteRecordsMatchGeneralPath(t *testing.T) {
	if !hw.HasTSC() {
		t.Skip("without an invariant TSC, EventWrite takes write's paths")
	}
	sizes := []int{0, 1, 7, 9, 255, hw.CopyReleaseMax, hw.CopyReleaseMax + 1, 300, 511, 513, 1000, 4001}
	payload := func(n int) []byte {
		data := make([]byte, n)
		for j := range data {
			data[j] = byte(n + 7*j + 1)
		}
		return data
	}
	records := func(plain bool) [][]byte {
		k, err := New(Config{Version: winver.V2004, Processors: 1, Synchronous: true})
		if err != nil {
			t.Fatal(err)
		}
		defer k.Close()
		if plain && !k.tsc {
			t.Fatal("EventWrite's own path needs sessions that may stamp with the time-stamp counter")
		}
		r, _ := k.EventRegister(provA, nil, nil)
		sink := &session.MemorySink{}
		h, err := k.StartTrace("records", &Properties{LogFileMode: logmode.RealTime, BufferSize: 8, MinimumBuffers: 4, MaximumBuffers: 4, Sink: sink})
		if err != nil {
			t.Fatal(err)
		}
		k.EnableTraceEx2(h, provA, regentry.ControlEnable, 0, 0, 0, nil)
		for i := range 300 { // fill and recycle every buffer with 0xAA bytes
			data := bytes.Repeat([]byte{0xAA}, 100+i%200)
			if err := k.EventWriteEx(r, &EventDescriptor{ID: 1}, &WriteOptions{Processor: AnyProcessor}, data); err != nil {
				t.Fatal(err)
			}
		}
		for i, n := range sizes {
			data := payload(n)
			d := &EventDescriptor{ID: uint16(1000 + i), Level: 4}
			if plain {
				err = k.EventWrite(r, d, data)
			} else {
				err = k.EventWriteEx(r, d, &WriteOptions{Processor: AnyProcessor, Tally: &Tally{}}, data)
			}
			if err != nil {
				t.Fatalf("%d bytes: %v", n, err)
			}
		}
		k.Close()
		var out [][]byte
		sink.Events(func(buf []byte, rec etl.Record) error {
			if binary.LittleEndian.Uint16(rec.Bytes[abi.OffEventDescriptor:]) < 1000 {
				return nil
			}
			b := bytes.Clone(buf[rec.Offset : rec.Offset+int(abi.Align(uint32(rec.Size)))])
			clear(b[abi.OffEventTimeStamp : abi.OffEventTimeStamp+8])
			out = append(out, b)
			return nil
		})
		return out
	}
	want, got := records(false), records(true)
	if len(want) != len(sizes) || len(got) != len(sizes) {
		t.Fatalf("general path %d records, EventWrite %d; want %d each", len(want), len(got), len(sizes))
	}
	for i, n := range sizes {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("%d-byte event: EventWrite's record differs from the general path's:\n%x\n%x", n, got[i], want[i])
		}
		if data := got[i][abi.EventHeaderSize : abi.EventHeaderSize+n]; !bytes.Equal(data, payload(n)) {
			t.Errorf("%d-byte event: data %x, want %x", n, data, payload(n))
		}
		if pad := got[i][abi.EventHeaderSize+n:]; bytes.ContainsFunc(pad, func(r rune) bool { return r != 0 }) {
			t.Errorf("%d-byte event: padding %x, want zeros", n, pad)
		}
	}
}

// Every named error index picks the error it names, and errIndex maps a session's errors
// back onto their indices.
func TestWriteErrorIndices(t *testing.T) {
	for idx, want := range map[uint8]error{moreData: winerr.ErrMoreData, notEnoughMemory: winerr.ErrNotEnoughMemory,
		invalidParameter: winerr.ErrInvalidParameter, accessDenied: winerr.ErrAccessDenied,
		logFileFull: winerr.ErrLogFileFull, cancelled: winerr.ErrCancelled} {
		if writeErrors[idx] != want {
			t.Errorf("writeErrors[%d] = %v, want %v", idx, writeErrors[idx], want)
		}
	}
	for _, idx := range []uint8{moreData, notEnoughMemory, logFileFull} {
		if got := errIndex(writeErrors[idx]); got != idx {
			t.Errorf("errIndex(%v) = %d, want %d", writeErrors[idx], got, idx)
		}
	}
	if writeErrors[0] != nil || len(writeErrors) != cancelled+1 {
		t.Errorf("writeErrors has %d entries, want nil and the six named", len(writeErrors))
	}
}
