package session

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/internal/hw"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

func startTest(t testing.TB, v winver.Version, nproc int, p Properties) *Logger {
	t.Helper()
	a, err := Adjust(v, nproc, "test", &p)
	if err != nil {
		t.Fatal(err)
	}
	l := mustStart(t, Config{Version: v, ID: 5, Instance: 1, Name: "test", Processors: nproc,
		Clock: clock.NewManual(clock.QPC, clock.NewManualSource(1000, 1), 10_000_000), Props: p, Adjusted: a})
	t.Cleanup(func() { l.Stop() })
	return l
}

// testEvent makes a record with a payload of n bytes whose first byte is tag.
func testEvent(n int, tag byte) *Event {
	prov := guid.FromName("test").Bytes()
	ev := &Event{Size: uint32(abi.EventHeaderSize + n), Provider: &prov, Descriptor: &abi.EventDescriptor{ID: uint16(tag), Level: 4}}
	data := make([]byte, n)
	if n > 0 {
		data[0] = tag
	}
	ev.Data = [][]byte{data}
	return ev
}

func TestAdjust(t *testing.T) {
	const rt = logmode.RealTime
	cases := []struct {
		v             winver.Version
		nproc         int
		in            Properties
		size, mn, mx  uint32
		mode, ignored uint32
	}{
		{winver.V2004, 4, Properties{LogFileMode: logmode.RealTime}, 64, 8, 30, rt, 0},
		{winver.V2004, 4, Properties{LogFileMode: logmode.RealTime, BufferSize: 1, MinimumBuffers: 3, MaximumBuffers: 2}, 4, 8, 8, rt, 0},
		{winver.V6_1, 2, Properties{LogFileMode: logmode.RealTime, BufferSize: 4096}, 1024, 4, 26, rt, 0},                        // last version with a 1 MB cap
		{winver.V6_2, 2, Properties{LogFileMode: logmode.RealTime, BufferSize: 4096}, 4096, 4, 26, rt, 0},                        // first with 16 MB
		{winver.V6_2, 2, Properties{LogFileMode: logmode.RealTime, BufferSize: 1 << 20}, 16384, 4, 26, rt, 0},                    // clamped to 16 MB
		{winver.V6_2, 2, Properties{LogFileMode: logmode.RealTime, BufferSize: 16384, MaximumBuffers: 100}, 16384, 4, 64, rt, 0}, // 64 × 16 MB = 1 GiB cap
		{winver.V2004, 8, Properties{LogFileMode: logmode.RealTime | logmode.NoPerProcessorBufs}, 64, 2, 24, rt | logmode.NoPerProcessorBufs, 0},
		{winver.V6_0, 8, Properties{LogFileMode: logmode.RealTime | logmode.NoPerProcessorBufs}, 64, 16, 38, rt, logmode.NoPerProcessorBufs},
		{winver.V6_2, 2, Properties{LogFileMode: logmode.RealTime | logmode.IndependentSession}, 64, 4, 26, rt, logmode.IndependentSession},
		{winver.V6_3, 2, Properties{LogFileMode: logmode.RealTime | logmode.IndependentSession}, 64, 4, 26, rt | logmode.IndependentSession, 0},
	}
	for i, c := range cases {
		p := c.in
		a, err := Adjust(c.v, c.nproc, "test", &p)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if p.BufferSize != c.size || p.MinimumBuffers != c.mn || p.MaximumBuffers != c.mx || a.Mode != c.mode || a.Ignored != c.ignored {
			t.Errorf("case %d (%v): size %d min %d max %d mode %#x ignored %#x; want %d %d %d %#x %#x",
				i, c.v, p.BufferSize, p.MinimumBuffers, p.MaximumBuffers, a.Mode, a.Ignored, c.size, c.mn, c.mx, c.mode, c.ignored)
		}
		if p.ClockType != clock.QPC {
			t.Errorf("case %d: clock type %v", i, p.ClockType)
		}
	}
}

func TestAdjustRejects(t *testing.T) {
	for name, c := range map[string]struct {
		v    winver.Version
		p    Properties
		want *winerr.Errno
		msg  string
	}{
		"seq+circ": {winver.V5_0, Properties{LogFileMode: logmode.Sequential | logmode.Circular}, winerr.ErrInvalidParameter,
			"ERROR_INVALID_PARAMETER (87): EVENT_TRACE_FILE_MODE_SEQUENTIAL is invalid with EVENT_TRACE_FILE_MODE_CIRCULAR (5.0 and later)"},
		"buffering+seq": {winver.V6_0, Properties{LogFileMode: logmode.Buffering | logmode.Sequential}, winerr.ErrInvalidParameter, ""},
		"clock":         {winver.V2004, Properties{ClockType: 9}, winerr.ErrInvalidParameter, ""},
		"nowhere":       {winver.V2004, Properties{}, winerr.ErrInvalidParameter, ""},
		"memory":        {winver.V2004, Properties{LogFileMode: logmode.RealTime, BufferSize: 16384, MinimumBuffers: 100}, winerr.ErrNoSystemResources, ""},
	} {
		p := c.p
		_, err := Adjust(c.v, 2, "test", &p)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", name, err, c.want)
		}
		if c.msg != "" && (err == nil || err.Error() != c.msg) {
			t.Errorf("%s: message %q", name, err)
		}
	}
	// Buffering is unknown before 6.0, so 5.2 ignores it instead of rejecting the pair.
	p := Properties{LogFileMode: logmode.Buffering | logmode.Sequential, LogFileName: "a.etl"}
	if a, err := Adjust(winver.V5_2, 2, "test", &p); err != nil || a.Ignored != logmode.Buffering {
		t.Fatalf("5.2 buffering: %v %+v", err, a)
	}
}

// A sealed buffer has its header fields at their offsets, 8-aligned records in write
// order and 0xFF after Offset.
func TestSealedBufferBytes(t *testing.T) {
	sink := &MemorySink{}
	l := startTest(t, winver.V2004, 2, Properties{LogFileMode: logmode.RealTime, BufferSize: 4, Sink: sink})
	for i := 0; i < 3; i++ {
		if err := l.Write(1, testEvent(5+i, byte(i+1))); err != nil {
			t.Fatal(err)
		}
	}
	l.Flush()
	bufs := sink.Buffers()
	if len(bufs) != 1 {
		t.Fatalf("%d buffers after flush, want 1 (stream 0 was empty and is not the last)", len(bufs))
	}
	b := bufs[0]
	le := binary.LittleEndian
	wantEnd := uint32(abi.BufferHeaderSize + abi.Align(0x55) + abi.Align(0x56) + abi.Align(0x57))
	if len(b) != 4096 || le.Uint32(b[0x00:]) != 4096 || le.Uint32(b[0x30:]) != wantEnd || le.Uint32(b[0x04:]) != wantEnd {
		t.Fatalf("BufferSize %d Offset %#x SavedOffset %#x, want %#x", le.Uint32(b), le.Uint32(b[0x30:]), le.Uint32(b[0x04:]), wantEnd)
	}
	// Closed to be flushed: Windows adds BufferSize to CurrentOffset.
	if cur := le.Uint32(b[0x08:]); cur != wantEnd+4096 {
		t.Fatalf("CurrentOffset %#x of a flushed buffer, want SavedOffset + BufferSize %#x", cur, wantEnd+4096)
	}
	if le.Uint16(b[0x28:]) != 1 || le.Uint16(b[0x2A:]) != 5 || le.Uint32(b[0x2C:]) != uint32(abi.BufferStateFlush) {
		t.Fatalf("processor %d logger %d state %d", le.Uint16(b[0x28:]), le.Uint16(b[0x2A:]), le.Uint32(b[0x2C:]))
	}
	if f := le.Uint16(b[0x34:]); f != abi.BufferFlagFlushMarker|abi.BufferFlagProcIndex {
		t.Fatalf("BufferFlag %#x", f)
	}
	if le.Uint64(b[0x20:])&7 != 1 || le.Uint64(b[0x20:])>>3 != 10_000_000 {
		t.Fatal("clock type/frequency not at 0x20")
	}
	for i := int(wantEnd); i < len(b); i++ {
		if b[i] != 0xFF {
			t.Fatalf("tail byte %#x is %#x, not 0xFF", i, b[i])
		}
	}
	var tags []byte
	var stamps []int64
	etl.SealedRecords(b, func(r etl.Record) error {
		h, _ := abi.DecodeEventHeader(r.Bytes)
		tags = append(tags, r.Bytes[abi.EventHeaderSize])
		stamps = append(stamps, h.TimeStamp)
		if r.Offset%8 != 0 {
			t.Errorf("record at unaligned offset %#x", r.Offset)
		}
		return nil
	})
	if string(tags) != "\x01\x02\x03" || !(stamps[0] < stamps[1] && stamps[1] < stamps[2]) {
		t.Fatalf("tags %v stamps %v", tags, stamps)
	}
}

func TestLoggerZeroWritesKernelBufferID(t *testing.T) {
	sink := &MemorySink{}
	p := Properties{LogFileMode: logmode.RealTime, BufferSize: 4, Sink: sink}
	a, _ := Adjust(winver.V6_1, 1, "test", &p)
	l := mustStart(t, Config{Version: winver.V6_1, ID: 0, Name: "NT Kernel Logger", Processors: 1,
		Clock: clock.NewManual(clock.QPC, clock.NewManualSource(0, 1), 1), Props: p, Adjusted: a})
	l.Write(0, testEvent(8, 1))
	l.Stop()
	b := sink.Buffers()[0]
	if binary.LittleEndian.Uint16(b[0x2A:]) != 0xFFFF {
		t.Fatal("logger 0 buffers do not carry KERNEL_LOGGER_ID")
	}
	// 6.1 has no PROC_INDEX flag and no clock at 0x20.
	if binary.LittleEndian.Uint16(b[0x34:])&abi.BufferFlagProcIndex != 0 || binary.LittleEndian.Uint64(b[0x20:]) != 0 {
		t.Fatal("6.1 buffer has 6.2 fields")
	}
}

// Filling a buffer switches to the next with SavedOffset at the true end, and nothing is
// lost while free buffers remain.
func TestSwitchOnFull(t *testing.T) {
	sink := &MemorySink{}
	l := startTest(t, winver.V2004, 1, Properties{LogFileMode: logmode.RealTime, BufferSize: 4, MinimumBuffers: 8, MaximumBuffers: 8, Sink: sink})
	const n = 200 // 200 × 0x90 bytes is about 7 buffers of 4 KB
	for i := 0; i < n; i++ {
		if err := l.Write(0, testEvent(0x40, byte(i))); err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	l.Stop()
	got, err := sink.CountEvents()
	if err != nil || got != n {
		t.Fatalf("sealed events %d (%v), want %d", got, err, n)
	}
	per := (4096 - abi.BufferHeaderSize) / 0x90
	bufs := sink.Buffers()
	for i, b := range bufs[:2] {
		if off := binary.LittleEndian.Uint32(b[0x30:]); off != uint32(abi.BufferHeaderSize+per*0x90) {
			t.Fatalf("buffer %d Offset %#x, want %#x", i, off, abi.BufferHeaderSize+per*0x90)
		}
	}
	// CurrentOffset as the real files have it: a full buffer keeps the refused
	// reservation past its end, the last one, flushed at stop, has BufferSize added.
	for i, b := range bufs {
		le := binary.LittleEndian
		saved, cur := le.Uint32(b[0x04:]), le.Uint32(b[0x08:])
		want := saved + 0x90
		if i == len(bufs)-1 {
			want = saved + 4096
		}
		if cur != want {
			t.Errorf("buffer %d of %d: SavedOffset %#x CurrentOffset %#x, want %#x", i, len(bufs), saved, cur, want)
		}
	}
	if s := l.Stats(); s.EventsLost != 0 || s.BuffersWritten != uint64(len(sink.Buffers())) {
		t.Fatalf("stats %+v", s)
	}
}

// blockingSink holds the logger goroutine until released, so buffers cannot come back.
type blockingSink struct {
	MemorySink
	gate chan struct{}
}

func (b *blockingSink) WriteBuffer(buf []byte) error {
	<-b.gate
	return b.MemorySink.WriteBuffer(buf)
}

func TestNoFreeBufferLosesAndCounts(t *testing.T) {
	sink := &blockingSink{gate: make(chan struct{})}
	l := startTest(t, winver.V2004, 1, Properties{LogFileMode: logmode.RealTime, BufferSize: 4, MinimumBuffers: 2, MaximumBuffers: 2, Sink: sink})
	accepted, lost := 0, 0
	for i := 0; i < 500; i++ {
		switch err := l.Write(0, testEvent(0x40, 1)); {
		case err == nil:
			accepted++
		case errors.Is(err, winerr.ErrNotEnoughMemory):
			lost++
		default:
			t.Fatal(err)
		}
	}
	if lost == 0 || accepted == 0 {
		t.Fatalf("accepted %d lost %d: the buffers never ran out", accepted, lost)
	}
	if got := l.Stats().EventsLost; got != uint64(lost) {
		t.Fatalf("EventsLost %d, writers were told %d", got, lost)
	}
	if n := l.Stats().NumberOfBuffers; n != 2 {
		t.Fatalf("NumberOfBuffers %d beyond MaximumBuffers 2", n)
	}
	close(sink.gate)
	l.Stop()
	if got, _ := sink.CountEvents(); got != accepted {
		t.Fatalf("sealed %d, accepted %d", got, accepted)
	}
}

// A writer refused for want of a free buffer counts its loss without taking freeMu: with
// many processors out of buffers together, one lock per lost event queued the writers on
// the free list in front of the logger refilling it. The test holds freeMu while the
// writer is refused; the deadline only turns a writer stuck on the lock into a failure.
func TestShortageRefusalTakesNoLock(t *testing.T) {
	sink := &blockingSink{gate: make(chan struct{})}
	l := startTest(t, winver.V2004, 1, Properties{LogFileMode: logmode.RealTime, BufferSize: 4, MinimumBuffers: 2, MaximumBuffers: 2, Sink: sink})
	defer close(sink.gate) // before the cleanup's Stop, which needs the sink
	ev := testEvent(0x40, 1)
	err := l.Write(0, ev)
	for ; err == nil; err = l.Write(0, ev) {
	}
	if !errors.Is(err, winerr.ErrNotEnoughMemory) {
		t.Fatalf("write: %v, want ERROR_NOT_ENOUGH_MEMORY once the sink holds the buffers", err)
	}
	lost := l.Stats().EventsLost
	l.freeMu.Lock()
	held := true
	defer func() { // runs before the gate opens: a stuck writer and Stop need the lock
		if held {
			l.freeMu.Unlock()
		}
	}()
	done := make(chan error, 3)
	go func() {
		for range 3 {
			done <- l.Write(0, ev)
		}
	}()
	for range 3 {
		select {
		case err := <-done:
			if !errors.Is(err, winerr.ErrNotEnoughMemory) {
				t.Errorf("refused write: %v, want ERROR_NOT_ENOUGH_MEMORY", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("a writer refused in a shortage waits on freeMu")
		}
	}
	l.freeMu.Unlock()
	held = false
	if got := l.Stats().EventsLost; got != lost+3 {
		t.Fatalf("EventsLost %d, want %d: each refusal counted", got, lost+3)
	}
}

// stepSink lets the logger goroutine write one buffer per token sent on tokens; closing
// tokens lets every later buffer through.
type stepSink struct {
	MemorySink
	tokens chan struct{}
}

func (s *stepSink) WriteBuffer(buf []byte) error {
	<-s.tokens
	return s.MemorySink.WriteBuffer(buf)
}

// A writer that finds no free buffer makes the logger add one per stream at its next
// round, up to MaximumBuffers and never past it; at MaximumBuffers writers that outrun the
// sink lose events. The sink takes one buffer per token, so every step is decided by
// state: no sleep, no deadline.
func TestGrowthOnShortageWithinMaximum(t *testing.T) {
	sink := &stepSink{tokens: make(chan struct{})}
	l := startTest(t, winver.V2004, 1, Properties{LogFileMode: logmode.RealTime, BufferSize: 4, MinimumBuffers: 2, MaximumBuffers: 5, Sink: sink})
	defer close(sink.tokens) // before the cleanup's Stop, which needs the sink
	if n := l.Stats().NumberOfBuffers; n != 2 {
		t.Fatalf("started with %d buffers, want MinimumBuffers 2", n)
	}
	ev := testEvent(0x40, 1)
	writeUntilLost := func() {
		t.Helper()
		err := l.Write(0, ev)
		for ; err == nil; err = l.Write(0, ev) {
		}
		if !errors.Is(err, winerr.ErrNotEnoughMemory) {
			t.Fatalf("write: %v, want ERROR_NOT_ENOUGH_MEMORY once the sink holds the buffers", err)
		}
	}
	for rounds := 0; l.Stats().NumberOfBuffers < 5; rounds++ {
		if rounds > 10 {
			t.Fatalf("%d shortages grew the session to only %d buffers", rounds, l.Stats().NumberOfBuffers)
		}
		writeUntilLost()
		sink.tokens <- struct{}{} // the logger writes one buffer; its next step grows
	}
	// At MaximumBuffers a writer that outruns the sink loses events, and the logger adds
	// nothing however often it is told of a shortage.
	lost := l.Stats().EventsLost
	for i := 0; i < 3; i++ {
		writeUntilLost()
		sink.tokens <- struct{}{}
	}
	if s := l.Stats(); s.EventsLost < lost+3 || s.NumberOfBuffers != 5 || s.PeakBuffers != 5 {
		t.Fatalf("EventsLost %d (was %d), NumberOfBuffers %d, PeakBuffers %d; want 3 more lost and 5 buffers", s.EventsLost, lost, s.NumberOfBuffers, s.PeakBuffers)
	}
}

func TestOversizeAndStopped(t *testing.T) {
	l := startTest(t, winver.V2004, 1, Properties{LogFileMode: logmode.RealTime, BufferSize: 4})
	if err := l.Write(0, testEvent(4096, 1)); !errors.Is(err, winerr.ErrMoreData) {
		t.Fatalf("event bigger than a buffer: %v", err)
	}
	if l.Stats().EventsLost != 1 {
		t.Fatal("oversize event not counted")
	}
	l.Stop()
	if err := l.Write(0, testEvent(8, 1)); err != ErrStopped {
		t.Fatalf("write after stop: %v", err)
	}
	if l.Stats().EventsLost != 1 {
		t.Fatal("a write to a stopped session was counted as lost")
	}
	if l.Stop() {
		t.Fatal("second Stop reported success")
	}
}

// Many writers on all streams while flushes run: every accepted event is sealed exactly
// once, every lost one is counted, and all buffers end free.
func TestConcurrentConservation(t *testing.T) {
	sink := &MemorySink{}
	l := startTest(t, winver.V2004, 4, Properties{LogFileMode: logmode.RealTime, BufferSize: 4, MinimumBuffers: 8, MaximumBuffers: 12, Sink: sink})
	var accepted, lost atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 3000; i++ {
				err := l.Write(w%5, testEvent(8+(i%200), byte(w)))
				switch {
				case err == nil:
					accepted.Add(1)
				case errors.Is(err, winerr.ErrNotEnoughMemory):
					lost.Add(1)
				default:
					t.Error(err)
					return
				}
			}
		}(w)
	}
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				l.Flush()
			}
		}
	}()
	wg.Wait()
	close(stop)
	l.Stop()
	got, err := sink.CountEvents()
	if err != nil {
		t.Fatal(err)
	}
	if int64(got) != accepted.Load() || l.Stats().EventsLost != uint64(lost.Load()) {
		t.Fatalf("sealed %d accepted %d; EventsLost %d told %d", got, accepted.Load(), l.Stats().EventsLost, lost.Load())
	}
	for _, b := range l.Buffers() {
		if b.State != abi.BufferStateFree || !b.Closed || b.ReferenceCount != 0 {
			t.Fatalf("buffer after stop: %+v", b)
		}
	}
}

func TestStreamSize(t *testing.T) {
	if n := unsafe.Sizeof(stream{}); n != streamSize {
		t.Fatalf("stream is %d bytes, want %d: indexing would need a multiply", n, streamSize)
	}
}

// PutHeader relies on abi.EventDescriptor having EVENT_DESCRIPTOR's layout, and writes
// its bytes in Windows (little-endian) order.
func TestDescriptorLayout(t *testing.T) {
	var d abi.EventDescriptor
	if unsafe.Sizeof(d) != 16 || unsafe.Offsetof(d.Version) != 2 || unsafe.Offsetof(d.Channel) != 3 ||
		unsafe.Offsetof(d.Level) != 4 || unsafe.Offsetof(d.Opcode) != 5 || unsafe.Offsetof(d.Task) != 6 || unsafe.Offsetof(d.Keyword) != 8 {
		t.Fatal("abi.EventDescriptor no longer has the EVENT_DESCRIPTOR layout")
	}
	d = abi.EventDescriptor{ID: 0x0102, Version: 3, Channel: 4, Level: 5, Opcode: 6, Task: 0x0708, Keyword: 0x1122334455667788}
	var h [abi.EventHeaderSize]byte
	PutHeader(&h, abi.EventHeaderSize, 0, 0, 0, &[16]byte{}, &d)
	want := []byte{0x02, 0x01, 3, 4, 5, 6, 0x08, 0x07, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11}
	if got := h[abi.OffEventDescriptor : abi.OffEventDescriptor+16]; !bytes.Equal(got, want) {
		t.Fatalf("descriptor bytes % x, want % x", got, want)
	}
}

// A synchronous session writes each full buffer before the Write that filled it returns,
// so counters follow the writes exactly, with no goroutine involved.
func TestSynchronousWritesFullBuffersAtOnce(t *testing.T) {
	sink := &MemorySink{}
	l := startSynchronous(t, "sync", 1, Properties{LogFileMode: logmode.RealTime, BufferSize: 4, MinimumBuffers: 2, MaximumBuffers: 2, Sink: sink})
	per := (4096 - abi.BufferHeaderSize) / 0x90 // records of 0x90 bytes per 4 KB buffer
	for i := 0; i < 5*per; i++ {
		if err := l.Write(0, testEvent(0x40, byte(i))); err != nil {
			t.Fatalf("write %d: %v (two buffers must suffice when each is written at once)", i, err)
		}
		if got, want := l.Stats().BuffersWritten, uint64(i/per); got != want {
			t.Fatalf("after %d events BuffersWritten = %d, want %d", i+1, got, want)
		}
	}
	l.Flush()
	if got := l.Stats().BuffersWritten; got != 5 {
		t.Fatalf("after flush BuffersWritten = %d, want 5", got)
	}
	if !l.Stop() {
		t.Fatal("Stop of a running synchronous session reported false")
	}
	if n, err := sink.CountEvents(); err != nil || n != 5*per {
		t.Fatalf("sink holds %d events (%v), want %d", n, err, 5*per)
	}
	if l.Stop() {
		t.Fatal("second Stop reported true")
	}
}

// Check finds nothing wrong with a running session, in either mode, and counts the
// events not yet sealed; a buffer put on two lists is reported.
func TestCheck(t *testing.T) {
	for _, synchronous := range []bool{false, true} {
		sink := &Counter{}
		p := Properties{LogFileMode: logmode.RealTime, BufferSize: 4, MinimumBuffers: 4, MaximumBuffers: 8, Sink: sink}
		a, _ := Adjust(winver.V2004, 2, "test", &p)
		l := mustStart(t, Config{Version: winver.V2004, ID: 3, Name: "chk", Processors: 2, Synchronous: synchronous,
			Clock: clock.NewManual(clock.QPC, clock.NewManualSource(1, 1), 10_000_000), Props: p, Adjusted: a})
		const n = 100
		for i := 0; i < n; i++ {
			if err := l.Write(i%2, testEvent(0x40, 1)); err != nil {
				t.Fatal(err)
			}
		}
		var problems []string
		report := func(rule, detail string) { problems = append(problems, rule+": "+detail) }
		pending, sealed := l.Check(report)
		if len(problems) != 0 {
			t.Fatalf("synchronous=%v: %v", synchronous, problems)
		}
		if sealed+int64(pending) != n {
			t.Fatalf("synchronous=%v: sealed %d + pending %d != %d written", synchronous, sealed, pending, n)
		}
		// Break the rule on purpose: a current buffer also on the free list.
		l.freeMu.Lock()
		l.free = append(l.free, l.streams[0].cur.Load())
		l.freeMu.Unlock()
		l.Check(report)
		if len(problems) == 0 || !strings.HasPrefix(problems[0], "buffer-place") {
			t.Fatalf("synchronous=%v: a buffer on two lists gave %v", synchronous, problems)
		}
		l.freeMu.Lock()
		l.free = l.free[:len(l.free)-1]
		l.freeMu.Unlock()
		// A free buffer taken off the free list is in no place; one on the free list that
		// is not in the GlobalList is a stranger. The flush returns every buffer the logger
		// has yet to write to the free list, so that it holds one whatever the logger
		// goroutine had done by now.
		l.Flush()
		for _, edit := range []func() (want string){
			func() string {
				b := l.free[len(l.free)-1]
				l.free = l.free[:len(l.free)-1]
				return fmt.Sprintf("buffer-place: session \"chk\" (id 3): buffer %d is on no list and in no stream", b.id)
			},
			func() string {
				l.free = append(l.free, newBuffer(4096, 1))
				return "buffer-place: session \"chk\" (id 3): a buffer on free list is not in the GlobalList"
			},
		} {
			l.freeMu.Lock()
			saved := append([]*Buffer(nil), l.free...)
			want := edit()
			l.freeMu.Unlock()
			problems = nil
			l.Check(report)
			if !slices.Contains(problems, want) {
				t.Fatalf("synchronous=%v: got %q, want %q among them", synchronous, problems, want)
			}
			l.freeMu.Lock()
			l.free = saved
			l.freeMu.Unlock()
		}
		l.Stop()
	}
}

// Lose and Deny count while the session collects and nothing once it has stopped, so the
// counters Stop returns are final; Permits lets every provider log unless SECURE_MODE.
func TestRefusedEventCounters(t *testing.T) {
	prov := guid.FromName("p")
	open := startTest(t, winver.V2004, 1, Properties{LogFileMode: logmode.RealTime, BufferSize: 4})
	if !open.Permits(prov) || open.Secure() {
		t.Fatal("a session without SECURE_MODE refused a provider")
	}
	l := startTest(t, winver.V2004, 1, Properties{LogFileMode: logmode.RealTime | logmode.Secure, BufferSize: 4})
	if l.Permits(prov) {
		t.Fatal("a SECURE_MODE session permits a provider nobody granted")
	}
	l.SetPermits(Permits{prov: true})
	if !l.Permits(prov) || l.Permits(guid.FromName("q")) {
		t.Fatal("SetPermits not applied")
	}
	if !l.Lose() || !l.Deny() || !l.Deny() {
		t.Fatal("a collecting session did not count")
	}
	l.Stop()
	if l.Lose() || l.Deny() {
		t.Fatal("a stopped session counted")
	}
	if s := l.Stats(); s.EventsLost != 1 || s.EventsDenied != 2 {
		t.Fatalf("lost %d denied %d, want 1 and 2", s.EventsLost, s.EventsDenied)
	}
}

func mustStart(t testing.TB, cfg Config) *Logger {
	t.Helper()
	l, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// startSynchronous starts a synchronous Windows 10 2004 session with properties p on
// the given number of processors, stamped by a manual clock: every step of a test on it
// is decided by the test.
func startSynchronous(t testing.TB, name string, processors int, p Properties) *Logger {
	t.Helper()
	a, err := Adjust(winver.V2004, processors, "test", &p)
	if err != nil {
		t.Fatal(err)
	}
	return mustStart(t, Config{Version: winver.V2004, ID: 3, Name: name, Processors: processors, Synchronous: true,
		Clock: clock.NewManual(clock.QPC, clock.NewManualSource(1, 1), 10_000_000), Props: p, Adjusted: a})
}

// notifySink tells got about the first buffer it receives.
type notifySink struct {
	Counter
	got  chan struct{}
	once sync.Once
}

func (s *notifySink) WriteBuffer(buf []byte) error {
	err := s.Counter.WriteBuffer(buf)
	s.once.Do(func() { close(s.got) })
	return err
}

// FlushThreshold is how many full buffers wake the logger: with 1, the writer that fills
// one buffer wakes it and that buffer is written at once; with the default batch the
// writer does not wake it, and the buffer waits in the flush list (no FlushTimer).
func TestFlushThresholdWakesLogger(t *testing.T) {
	for _, threshold := range []uint32{1, 0} {
		sink := &notifySink{got: make(chan struct{})}
		l := startTest(t, winver.V2004, 1, Properties{LogFileMode: logmode.RealTime, BufferSize: 4,
			MinimumBuffers: 32, MaximumBuffers: 32, FlushThreshold: threshold, Sink: sink})
		per := (4096 - abi.BufferHeaderSize) / 0x90
		for i := 0; i <= per; i++ { // fill one buffer, and switch to the next
			if err := l.Write(0, testEvent(0x40, byte(i))); err != nil {
				t.Fatal(err)
			}
		}
		wakeups := l.Stats().LoggerWakeups
		if threshold == 1 {
			<-sink.got // the logger was woken; a lost wake-up hangs here until the test times out
			if wakeups != 1 || sink.BuffersReceived() != 1 {
				t.Errorf("FlushThreshold 1: %d wake-ups, %d buffers written after one switch; want 1 and 1", wakeups, sink.BuffersReceived())
			}
		} else if got := sink.BuffersReceived(); wakeups != 0 || got != 0 {
			// Nothing else drains the flush list: the housekeeping tick only tops up the
			// free list while FlushTimer is 0.
			t.Errorf("FlushThreshold 0 (a batch of %d): one switch woke the logger %d times, %d buffers written", flushBatch, wakeups, got)
		}
		l.Stop()
		if want := uint64(2); l.Stats().BuffersWritten != want {
			t.Errorf("FlushThreshold %d: %d buffers written at stop, want %d", threshold, l.Stats().BuffersWritten, want)
		}
	}
}

// A REAL_TIME session without consumers whose backlog is full refuses writers with
// ERROR_LOG_FILE_FULL and counts each refusal in EventsLost. The refused writers must
// not pile their reservations onto a buffer left in its slot: 4 GB of refusals would
// carry the offset into the reference count and hand a later writer a record outside
// the buffer. A consumer attaching later makes writes succeed again.
func TestRealTimeFullLeavesNoGrowingBuffer(t *testing.T) {
	p := Properties{LogFileMode: logmode.RealTime, BufferSize: 4, MinimumBuffers: 4, MaximumBuffers: 4}
	a, err := Adjust(winver.V2004, 1, "test", &p)
	if err != nil {
		t.Fatal(err)
	}
	l := mustStart(t, Config{Version: winver.V2004, ID: 3, Name: "rt", Processors: 1, Synchronous: true, RealTimeBacklog: 2,
		Clock: clock.NewManual(clock.QPC, clock.NewManualSource(1, 1), 10_000_000), Props: p, Adjusted: a})
	defer l.Stop()
	ev := testEvent(0x40, 1)
	accepted := 0
	for ; ; accepted++ {
		err := l.Write(0, ev)
		if errors.Is(err, winerr.ErrLogFileFull) {
			break
		}
		if err != nil || accepted > 1000 {
			t.Fatalf("write %d: %v (want success until the backlog of 2 buffers is full)", accepted, err)
		}
	}
	per := (4096 - abi.BufferHeaderSize) / 0x90
	if accepted < 3*per {
		t.Fatalf("refused after %d events; two backlog buffers and one dropped hold %d", accepted, 3*per)
	}
	const refusals = 20000 // 2.9 MB of records: far past any buffer's end
	for i := 0; i < refusals; i++ {
		if err := l.Write(0, ev); !errors.Is(err, winerr.ErrLogFileFull) {
			t.Fatalf("refusal %d: %v, want ERROR_LOG_FILE_FULL", i, err)
		}
	}
	if b := l.streams[0].cur.Load(); b != nil {
		if off := uint32(b.word.Load() & offMask); off&^closedOff > l.bufSize {
			t.Fatalf("after %d refusals the current buffer's CurrentOffset is %#x, past BufferSize %#x", refusals, off, l.bufSize)
		}
	}
	st := l.Stats()
	if st.EventsLost != refusals+1 || st.RealTimeBuffersLost == 0 {
		t.Fatalf("EventsLost %d, RealTimeBuffersLost %d; want %d and at least 1", st.EventsLost, st.RealTimeBuffersLost, refusals+1)
	}

	got := make(chan int, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		n := 0
		l.Consume(ctx, 0, func(buf []byte) error {
			n += recordsIn(t, buf)
			return nil
		})
		got <- n
	}()
	for l.Consumers() == 0 {
		time.Sleep(time.Millisecond)
	}
	for i := 0; i < per; i++ {
		if err := l.Write(0, ev); err != nil {
			t.Fatalf("write %d after a consumer attached: %v", i, err)
		}
	}
	l.Stop()
	n := <-got
	if n < 2*per+per {
		t.Fatalf("the consumer received %d events: want the 2-buffer backlog and the %d written since (%d)", n, per, 3*per)
	}
	// The events of the buffers dropped while the backlog was full are counted: with
	// those the consumer received, every event accepted.
	if st := l.Stats(); uint64(n)+st.RealTimeEventsLost != uint64(accepted+per) {
		t.Errorf("received %d, RealTimeEventsLost %d: %d events, but %d were accepted", n, st.RealTimeEventsLost, uint64(n)+st.RealTimeEventsLost, accepted+per)
	}
}

// recordsIn counts the records of one sealed buffer.
func recordsIn(t *testing.T, buf []byte) int {
	n := 0
	if err := etl.SealedRecords(buf, func(etl.Record) error { n++; return nil }); err != nil {
		t.Errorf("buffer does not parse: %v", err)
	}
	return n
}

// A session whose clock reads the time-stamp counter stamps an event with the reading
// the kernel took with the processor (Event.TSC), or reads the counter itself when there
// is none; a session with another clock always reads its own.
func TestStampSharedTSC(t *testing.T) {
	if !hw.HasTSC() {
		t.Skip("no invariant TSC on this machine")
	}
	qpc, err := clock.New(clock.QPC)
	if err != nil || !qpc.ReadsTSC() {
		t.Skipf("the QPC clock does not read the TSC here (%v)", err)
	}
	manual := clock.NewManual(clock.QPC, clock.NewManualSource(1000, 1), 10_000_000)
	for _, c := range []struct {
		name  string
		clock *clock.Clock
	}{{"tsc", qpc}, {"manual", manual}} {
		sink := &MemorySink{}
		p := Properties{LogFileMode: logmode.RealTime, BufferSize: 4, MinimumBuffers: 2, MaximumBuffers: 2, Sink: sink}
		a, err := Adjust(winver.V2004, 1, "test", &p)
		if err != nil {
			t.Fatal(err)
		}
		l := mustStart(t, Config{Version: winver.V2004, ID: 3, Name: c.name, Processors: 1, Synchronous: true,
			Clock: c.clock, Props: p, Adjusted: a})
		shared := testEvent(8, 1)
		shared.TSC = 12345
		before := hw.TSC()
		for _, ev := range []*Event{shared, testEvent(8, 2)} {
			if err := l.Write(0, ev); err != nil {
				t.Fatal(err)
			}
		}
		after := hw.TSC()
		l.Stop()
		var stamps []int64
		if err := sink.Events(func(_ []byte, r etl.Record) error {
			stamps = append(stamps, int64(binary.LittleEndian.Uint64(r.Bytes[abi.OffEventTimeStamp:])))
			return nil
		}); err != nil || len(stamps) != 2 {
			t.Fatalf("%s: %d records (%v), want 2", c.name, len(stamps), err)
		}
		if c.clock == qpc {
			if stamps[0] != 12345 || stamps[1] < before || stamps[1] > after {
				t.Errorf("tsc clock: stamps %d, %d; want 12345 (the kernel's reading) and one in [%d, %d]", stamps[0], stamps[1], before, after)
			}
		} else if stamps[0] == 12345 || stamps[0] >= stamps[1] || stamps[1]-stamps[0] > 10 {
			t.Errorf("manual clock: stamps %d, %d; want two successive manual ticks, not the TSC reading", stamps[0], stamps[1])
		}
	}
}

// A buffer that comes back from the sink waits in its stream's spare slot, and that
// stream's next switch takes it from there rather than from the free list; BuffersAvailable
// counts it, and Check finds it in one place. Synchronous, so each step is decided.
func TestSpareBufferGoesBackToItsStream(t *testing.T) {
	l := startSynchronous(t, "spare", 2, Properties{LogFileMode: logmode.RealTime, BufferSize: 4, MinimumBuffers: 4, MaximumBuffers: 4, Sink: &Counter{}})
	defer l.Stop()
	per := (4096 - abi.BufferHeaderSize) / 0x90 // records of 0x90 bytes per 4 KB buffer
	first := l.CurrentBuffers()[1]
	for i := 0; i <= per; i++ { // the last write switches stream 1 and writes its first buffer
		if err := l.Write(1, testEvent(0x40, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.streams[1].spare.Load(); got == nil || got.id != first {
		t.Fatalf("stream 1's spare slot holds %v, want its first buffer %d", got, first)
	}
	if l.streams[0].spare.Load() != nil {
		t.Fatal("stream 0 has a spare though it filled nothing")
	}
	if s := l.Stats(); s.FreeBuffers != s.NumberOfBuffers-2 {
		t.Fatalf("BuffersAvailable %d of %d with two buffers current: the spare is not counted", s.FreeBuffers, s.NumberOfBuffers)
	}
	l.freeMu.Lock()
	onList := len(l.free)
	l.freeMu.Unlock()
	for i := 0; i < per; i++ { // fills the second buffer; the next switch takes the spare
		if err := l.Write(1, testEvent(0x40, 1)); err != nil {
			t.Fatal(err)
		}
	}
	if got := l.CurrentBuffers()[1]; got != first {
		t.Fatalf("stream 1 switched to buffer %d, want its spare %d", got, first)
	}
	l.freeMu.Lock()
	if len(l.free) != onList {
		t.Errorf("the free list went from %d to %d buffers: the switch did not use the spare", onList, len(l.free))
	}
	l.freeMu.Unlock()
	var problems []string
	l.Check(func(rule, detail string) { problems = append(problems, rule+": "+detail) })
	if len(problems) != 0 {
		t.Fatal(problems)
	}
}

// Writers do not allocate when they queue full buffers: the flush queue keeps its
// arrays from batch to batch. Synchronous, so every switch drains the queue before the
// next one appends to it.
func TestQueueingFullBuffersDoesNotAllocate(t *testing.T) {
	l := startSynchronous(t, "alloc", 1, Properties{LogFileMode: logmode.RealTime, BufferSize: 4, MinimumBuffers: 4, MaximumBuffers: 4, Sink: Discard{}})
	defer l.Stop()
	ev := testEvent(0x40, 1)
	per := (4096 - abi.BufferHeaderSize) / 0x90 // records of 0x90 bytes per 4 KB buffer
	fill := func() {
		for i := 0; i < per; i++ {
			if err := l.Write(0, ev); err != nil {
				t.Fatal(err)
			}
		}
	}
	fill() // the first switches may size the queue's arrays
	fill()
	before := l.Stats().BuffersWritten
	if n := testing.AllocsPerRun(20, fill); n != 0 {
		t.Errorf("%v allocations for a buffer's worth of events, each run switching buffers once", n)
	}
	if got := l.Stats().BuffersWritten - before; got < 20 {
		t.Fatalf("%d buffers written during the runs, want at least 20: the runs did not switch buffers", got)
	}
}

// ReadStats reads what Stats returns, and reading into the same Stats again allocates
// nothing.
func TestReadStats(t *testing.T) {
	l := startTest(t, winver.V2004, 4, Properties{LogFileMode: logmode.RealTime, BufferSize: 1})
	for i := range 200 {
		if err := l.Write(i%4, testEvent(0x40, byte(i))); err != nil {
			t.Fatal(err)
		}
	}
	l.Stop() // the logger goroutine, which moves the counters, has exited
	want := l.Stats()
	if want.BuffersWritten == 0 || len(want.BuffersPerStream) != 4 {
		t.Fatalf("the writes sealed no buffer or the streams are not four: %+v", want)
	}
	var got Stats
	l.ReadStats(&got)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("ReadStats read %+v, Stats returned %+v", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { l.ReadStats(&got) }); n != 0 {
		t.Fatalf("ReadStats into a Stats read before allocated %v times", n)
	}
}

// A REAL_TIME session without consumers keeps its backlog count of buffers when they are
// small, and no more than MaxRealTimeBacklogBytes of them when they are large.
func TestRealTimeBacklogBoundedInBytes(t *testing.T) {
	for _, c := range []struct {
		kb   uint32
		want int
	}{{64, DefaultRealTimeBacklog}, {1024, DefaultRealTimeBacklog}, {16384, MaxRealTimeBacklogBytes / (16384 << 10)}} {
		p := Properties{LogFileMode: logmode.RealTime, BufferSize: c.kb, MinimumBuffers: 4, MaximumBuffers: 4}
		a, err := Adjust(winver.V2004, 1, "test", &p)
		if err != nil {
			t.Fatal(err)
		}
		l := mustStart(t, Config{Version: winver.V2004, ID: 3, Name: "rt", Processors: 1, Synchronous: true,
			Clock: clock.NewManual(clock.QPC, clock.NewManualSource(1, 1), 10_000_000), Props: p, Adjusted: a})
		if got := l.RealTimeBacklog(); got != c.want {
			t.Errorf("%d KB buffers: a backlog of %d buffers, want %d", c.kb, got, c.want)
		}
		l.Stop()
	}
}
