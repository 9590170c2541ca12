package emu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

func TestStartTraceAdjustsAndAssignsIDs(t *testing.T) {
	k := newKernel(t, winver.V2004)
	p := &Properties{LogFileMode: logmode.RealTime, BufferSize: 1, MinimumBuffers: 1}
	h, err := k.StartTrace("first", p)
	if err != nil {
		t.Fatal(err)
	}
	if h.LoggerID() != 2 {
		t.Fatalf("first ordinary session got logger id %d, want 2", h.LoggerID())
	}
	if p.BufferSize != 4 || p.MinimumBuffers != 4 || p.MaximumBuffers != 26 || p.NumberOfBuffers != 4 {
		t.Fatalf("adjusted properties not written back: %+v", p)
	}
	hk, err := k.StartTrace(KernelLoggerName, &Properties{LogFileMode: logmode.RealTime, GUID: SystemTraceControlGUID})
	if err != nil || hk.LoggerID() != 0 {
		t.Fatalf("NT Kernel Logger: id %d, %v", hk.LoggerID(), err)
	}
	hg, err := k.StartTrace(GlobalLoggerName, &Properties{LogFileMode: logmode.RealTime})
	if err != nil || hg.LoggerID() != 1 {
		t.Fatalf("GlobalLogger: id %d, %v", hg.LoggerID(), err)
	}
	// The reserved names compare without regard to case, as every logger name does.
	k2 := newKernel(t, winver.V2004)
	if h, err := k2.StartTrace("nt kernel logger", &Properties{LogFileMode: logmode.RealTime, GUID: SystemTraceControlGUID}); err != nil || h.LoggerID() != 0 {
		t.Fatalf("nt kernel logger: id %d, %v", h.LoggerID(), err)
	}
	if h, err := k2.StartTrace("GLOBALLOGGER", &Properties{LogFileMode: logmode.RealTime}); err != nil || h.LoggerID() != 1 {
		t.Fatalf("GLOBALLOGGER: id %d, %v", h.LoggerID(), err)
	}
	if _, err := k.StartTrace("FIRST", &Properties{LogFileMode: logmode.RealTime}); !errors.Is(err, winerr.ErrAlreadyExists) {
		t.Fatalf("duplicate name in other case: %v", err)
	}
	if _, err := k.StartTrace("other", &Properties{LogFileMode: logmode.RealTime, GUID: SystemTraceControlGUID}); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("SystemTraceControlGuid with another name: %v", err)
	}
	for _, name := range []string{"", strings.Repeat("x", 1025)} {
		if _, err := k.StartTrace(name, &Properties{LogFileMode: logmode.RealTime}); !errors.Is(err, winerr.ErrInvalidParameter) {
			t.Fatalf("name of %d chars: %v", len(name), err)
		}
	}
	if _, err := k.StartTrace("nil", nil); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("nil properties: %v", err)
	}
}

func TestLoggerTableFullByVersion(t *testing.T) {
	k := newKernel(t, winver.V5_0) // 32 slots, ids 2..31 for ordinary sessions
	n := 0
	for ; n < 40; n++ {
		if _, err := k.StartTrace("s"+itoa(n), &Properties{LogFileMode: logmode.RealTime, BufferSize: 4}); err != nil {
			if !errors.Is(err, winerr.ErrNoSystemResources) {
				t.Fatalf("session %d: %v", n, err)
			}
			break
		}
	}
	if n != 30 {
		t.Fatalf("5.0 started %d ordinary sessions, want 30 (32 slots less 0 and 1)", n)
	}
}

func TestControlTrace(t *testing.T) {
	k := newKernel(t, winver.V2004)
	h, _ := startMem(t, k, "ctl", 0)
	var q Properties
	if err := k.QueryTrace(h, "", &q); err != nil || q.BufferSize != 4 || q.LoggerThreadID == 0 {
		t.Fatalf("query by handle: %+v %v", q, err)
	}
	if err := k.QueryTrace(0, "CTL", &q); err != nil {
		t.Fatalf("query by name: %v", err)
	}
	if err := k.ControlTrace(h, "", &Properties{MaximumBuffers: 40, FlushTimer: 3}, ControlUpdate); err != nil {
		t.Fatal(err)
	}
	k.QueryTrace(h, "", &q)
	if q.MaximumBuffers != 40 || q.FlushTimer != 3 {
		t.Fatalf("update not applied: max %d timer %d", q.MaximumBuffers, q.FlushTimer)
	}
	if err := k.ControlTrace(h, "", nil, 99); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("unknown code: %v", err)
	}
	if err := k.ControlTrace(h, "", nil, ControlIncrementFile); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("increment file without NEWFILE: %v", err)
	}
	if err := k.ControlTrace(h, "", nil, ControlConvertToRealtime); !errors.Is(err, winerr.ErrNotSupported) {
		t.Fatalf("convert to real time: %v", err)
	}
	if err := k.ControlTrace(0, "", nil, ControlQuery); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("no handle, no name: %v", err)
	}
	if err := k.StopTrace(h, "", &q); err != nil {
		t.Fatal(err)
	}
	if err := k.StopTrace(h, "", nil); !errors.Is(err, winerr.ErrWMIInstanceNotFound) {
		t.Fatalf("second stop: %v", err)
	}
	if err := k.QueryTrace(h, "", nil); !errors.Is(err, winerr.ErrWMIInstanceNotFound) ||
		err.Error() != fmt.Sprintf("ERROR_WMI_INSTANCE_NOT_FOUND (4201): no running session has handle %#x", uint64(h)) {
		t.Fatalf("query of a stopped session: %v", err)
	}
	// The id is free again, and the old handle does not reach the new session.
	h2, _ := startMem(t, k, "ctl2", 0)
	if h2.LoggerID() != h.LoggerID() || h2 == h {
		t.Fatalf("reuse: old %#x new %#x", uint64(h), uint64(h2))
	}
	if err := k.QueryTrace(h, "", nil); err == nil {
		t.Fatal("a stale handle reached the session that reused its id")
	}
}

func TestBadInputNeverPanics(t *testing.T) {
	k := newKernel(t, winver.V2004)
	d := &EventDescriptor{Level: 4}
	if err := k.EventWrite(nil, d); !errors.Is(err, winerr.ErrInvalidHandle) {
		t.Fatalf("nil handle: %v", err)
	}
	if err := k.EventUnregister(nil); err != nil {
		t.Fatalf("unregister nil: %v", err)
	}
	if k.EventEnabled(nil, d) || k.EventProviderEnabled(nil, 1, 1) {
		t.Fatal("nil handle reported enabled")
	}
	if err := k.EnableTraceEx2(0, provA, 1, 5, 0, 0, nil); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("zero trace handle: %v", err)
	}
	if err := k.EnableTraceEx2(0x1234, provA, 1, 5, 0, 0, nil); !errors.Is(err, winerr.ErrWMIInstanceNotFound) {
		t.Fatalf("unknown trace handle: %v", err)
	}
	if _, err := New(Config{Processors: -1}); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("negative processors: %v", err)
	}
	if _, err := New(Config{Version: 99}); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("unknown version: %v", err)
	}
	if _, err := New(Config{Executable: "a\x00b.exe"}); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Fatalf("an executable name with a NUL: %v", err)
	}
	// What a failed New returns closes as nothing, so `defer k.Close()` before the error
	// check does not panic.
	failed, _ := New(Config{Processors: -1})
	failed.Close()
	var st session.Stats
	h, _ := startMem(t, k, "stats", 0)
	k.Session(h).ReadStats(nil)
	k.Session(h).ReadStats(&st)
	k.StopTrace(h, "", nil)
}

// A zero Registration is no handle EventRegister made: every call that takes it answers
// ERROR_INVALID_HANDLE and says so (three write calls and PokeEnableMask panicked),
// EventWrite's first test finds it disabled, and its masks read as zero.
func TestZeroRegistration(t *testing.T) {
	k := newKernel(t, winver.V2004)
	r := &Registration{}
	d := &EventDescriptor{Level: 4}
	if err := k.EventWrite(r, d, []byte("x")); err != nil {
		t.Errorf("EventWrite: %v, want nil (no session enables it)", err)
	}
	for name, err := range map[string]error{
		"EventWriteEx":          k.EventWriteEx(r, d, nil, []byte("x")),
		"EventWriteTransfer":    k.EventWriteTransfer(r, d, nil, nil, []byte("x")),
		"EventWriteDescriptors": k.EventWriteDescriptors(r, d, nil, DataDescriptor{Data: []byte("x")}),
		"PokeEnableMask":        k.PokeEnableMask(r, false, 1),
		"EventUnregister":       k.EventUnregister(r),
		"EventSetInformation":   k.EventSetInformation(r, EventProviderUseDescriptorType, []byte{1}),
	} {
		if !errors.Is(err, winerr.ErrInvalidHandle) {
			t.Errorf("%s: %v, want ERROR_INVALID_HANDLE", name, err)
		} else if name != "EventUnregister" && name != "EventSetInformation" && !strings.Contains(err.Error(), "zero Registration") {
			t.Errorf("%s: %v, want the reason", name, err)
		}
	}
	if r.EnableMask() != 0 || r.GroupEnableMask() != 0 || r.HostEnableMask() != 0 || r.HostGroupEnableMask() != 0 || r.Closed() ||
		r.Provider() != guid.Null || k.EventEnabled(r, d) {
		t.Errorf("a zero Registration reads as masks %d %d, closed %v, provider %v", r.EnableMask(), r.GroupEnableMask(), r.Closed(), r.Provider())
	}
}

// The stop's flush-all takes every processor's buffer out in processor order and marks
// the last of the batch with ETW_BUFFER_FLAG_FLUSH_MARKER; an empty buffer is written only
// when it carries the marker (WmipPrepareHeader). So one event costs one buffer when it
// landed on the last processor and two otherwise: the count depends on the processor,
// which is why the package example runs on one processor.
func TestFlushMarkerOnLastProcessor(t *testing.T) {
	for proc, want := range []uint32{2, 2, 2, 1} {
		k, err := New(Config{Version: winver.V2004, Processors: 4, Synchronous: true, Clock: clock.NewManualSource(1000, 1)})
		if err != nil {
			t.Fatal(err)
		}
		sink := &session.MemorySink{}
		h, err := k.StartTrace("marker", &Properties{BufferSize: 4, LogFileMode: logmode.RealTime, Sink: sink})
		if err != nil {
			t.Fatal(err)
		}
		prov := guid.FromName("Marker.Provider")
		reg, _ := k.EventRegister(prov, nil, nil)
		k.EnableTraceEx2(h, prov, regentry.ControlEnable, 4, 0, 0, nil)
		if err := k.EventWriteEx(reg, &EventDescriptor{ID: 1, Level: 4}, &WriteOptions{Processor: proc}, []byte("x")); err != nil {
			t.Fatal(err)
		}
		var p Properties
		if err := k.StopTrace(h, "", &p); err != nil {
			t.Fatal(err)
		}
		bufs := sink.Buffers()
		if p.BuffersWritten != want || len(bufs) != int(want) {
			t.Fatalf("event on processor %d: BuffersWritten %d, sink got %d; want %d", proc, p.BuffersWritten, len(bufs), want)
		}
		last := bufs[len(bufs)-1]
		if f := binary.LittleEndian.Uint16(last[0x34:]); f&abi.BufferFlagFlushMarker == 0 {
			t.Fatalf("event on processor %d: the last buffer's BufferFlag %#x has no FLUSH_MARKER", proc, f)
		}
		k.Close()
	}
}

// StartTrace takes a LoggerName of 1 to 1,024 characters without a NUL, which Windows
// would end the name at: "a\x00b" would start a session Windows calls "a".
func TestStartTraceNames(t *testing.T) {
	k := newKernel(t, winver.Default)
	p := func() *Properties { return &Properties{LogFileMode: logmode.RealTime, Sink: &session.MemorySink{}} }
	for name, want := range map[string]string{
		"":                        "session name must have 1 to 1024 characters, not 0",
		strings.Repeat("é", 1025): "session name must have 1 to 1024 characters, not 1025",
		"a\x00b":                  `session name "a\x00b" holds a NUL at byte 1`,
	} {
		if _, err := k.StartTrace(name, p()); !errors.Is(err, winerr.ErrInvalidParameter) || !strings.Contains(err.Error(), want) {
			t.Errorf("StartTrace(%q): %v, want %q", name, err, want)
		}
	}
	if _, err := k.StartTrace(strings.Repeat("é", 1024), p()); err != nil {
		t.Errorf("a 1,024-character name: %v", err)
	}
}

// A REAL_TIME session that no consumer ever read holds its buffers for one; stopping it
// loses them, and RealTimeBuffersLost counts them (no consumer can open a stopped
// session). Before, Stop dropped them and every counter said nothing was lost.
func TestRealTimeBacklogCountedAtStop(t *testing.T) {
	k, err := New(Config{Processors: 1, Clock: clock.NewManualSource(1000, 1), Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	h, err := k.StartTrace("unread", &Properties{BufferSize: 4, LogFileMode: logmode.RealTime})
	if err != nil {
		t.Fatal(err)
	}
	r := enabledProvider(t, k, h, "Unread")
	var tally Tally
	for range 100 {
		if err := k.EventWriteEx(r, &EventDescriptor{ID: 1, Level: 4}, &WriteOptions{Processor: 0, Tally: &tally}, make([]byte, 100)); err != nil {
			t.Fatal(err)
		}
	}
	var p Properties
	if err := k.StopTrace(h, "", &p); err != nil {
		t.Fatal(err)
	}
	if tally.Delivered[h.LoggerID()] != 100 || p.EventsLost != 0 || p.BuffersWritten == 0 || p.RealTimeBuffersLost != p.BuffersWritten {
		t.Errorf("100 events accepted: EventsLost %d, BuffersWritten %d, RealTimeBuffersLost %d; want every buffer written lost", p.EventsLost, p.BuffersWritten, p.RealTimeBuffersLost)
	}
}

// UpdateTrace's changes that are not emulated are refused, not ignored: a new log file
// and turning REAL_TIME on; the session's own file and mode, as a query returned them,
// pass, and MaximumBuffers still updates.
func TestUpdateRefusesWhatIsNotEmulated(t *testing.T) {
	dir := t.TempDir()
	k := newKernel(t, winver.V2004)
	path := filepath.Join(dir, "a.etl")
	h, err := k.StartTrace("u", &Properties{LogFileName: path, LogFileMode: logmode.Sequential})
	if err != nil {
		t.Fatal(err)
	}
	defer k.StopTrace(h, "", nil)
	for _, p := range []Properties{
		{LogFileName: filepath.Join(dir, "b.etl")},
		{LogFileMode: logmode.Sequential | logmode.RealTime},
	} {
		if err := k.ControlTrace(h, "", &p, ControlUpdate); !errors.Is(err, winerr.ErrNotSupported) {
			t.Errorf("update %+v: %v, want ERROR_NOT_SUPPORTED", p, err)
		}
	}
	var q Properties
	if err := k.ControlTrace(h, "", &q, ControlQuery); err != nil {
		t.Fatal(err)
	}
	q.MaximumBuffers = 77
	if err := k.ControlTrace(h, "", &q, ControlUpdate); err != nil {
		t.Fatalf("update with the queried properties: %v", err)
	}
	if q.MaximumBuffers != 77 || q.LogFileName != path {
		t.Errorf("after update: MaximumBuffers %d, LogFileName %q", q.MaximumBuffers, q.LogFileName)
	}
	if _, err := os.Stat(filepath.Join(dir, "b.etl")); err == nil {
		t.Errorf("a refused update created b.etl")
	}
}

// reentrantSink calls back into the kernel from its session's logger goroutine, once.
type reentrantSink struct {
	k    *Kernel
	h    TraceHandle
	call func(k *Kernel, h TraceHandle) error
	once sync.Once
	err  chan error
}

func (s *reentrantSink) WriteBuffer([]byte) error {
	s.once.Do(func() { s.err <- s.call(s.k, s.h) })
	return nil
}

// A Sink that flushes or stops its own session gets ERROR_POSSIBLE_DEADLOCK at once: its
// logger goroutine, which would do the work, is the one waiting for the Sink (both hung
// for ever). What runs with the logger paused (a query's LogFileName, an update, an
// INCREMENT_FILE, the checker) runs at once, on the logger goroutine that calls the Sink
// (they hung too). Close from the Sink returns, and the session's stop ends after the
// Sink.
func TestSinkCallingItsOwnSession(t *testing.T) {
	for _, c := range []struct {
		name string
		call func(k *Kernel, h TraceHandle) error
		want error
	}{
		{"flush", func(k *Kernel, h TraceHandle) error { return k.FlushTrace(h, "", nil) }, winerr.ErrPossibleDeadlock},
		{"stop", func(k *Kernel, h TraceHandle) error { return k.StopTrace(h, "", nil) }, winerr.ErrPossibleDeadlock},
		{"query", func(k *Kernel, h TraceHandle) error { return k.QueryTrace(h, "", nil) }, nil},
		{"update", func(k *Kernel, h TraceHandle) error {
			var p Properties
			if err := k.QueryTrace(h, "", &p); err != nil {
				return err
			}
			p.MaximumBuffers++
			return k.ControlTrace(h, "", &p, ControlUpdate)
		}, nil},
		{"increment", func(k *Kernel, h TraceHandle) error { return k.ControlTrace(h, "", nil, ControlIncrementFile) }, nil},
		{"logfilename", func(k *Kernel, h TraceHandle) error {
			if n := k.Session(h).LogFileName(); n == "" {
				return errors.New("no log file name")
			}
			return nil
		}, nil},
		{"check", func(k *Kernel, h TraceHandle) error {
			if vs := NewChecker(k).Check(); len(vs) != 0 {
				return fmt.Errorf("%v", vs)
			}
			return nil
		}, nil},
		{"close", func(k *Kernel, h TraceHandle) error { k.Close(); return nil }, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			k, err := New(Config{Processors: 1, FileSystem: &etl.MemFS{}})
			if err != nil {
				t.Fatal(err)
			}
			defer k.Close()
			s := &reentrantSink{k: k, call: c.call, err: make(chan error, 1)}
			h, err := k.StartTrace("reentrant", &Properties{BufferSize: 4, LogFileMode: logmode.RealTime | logmode.NewFile | logmode.KBytesForSize,
				LogFileName: "r_%d.etl", MaximumFileSize: 64, MaximumBuffers: 16, Sink: s})
			if err != nil {
				t.Fatal(err)
			}
			s.h = h
			r, err := k.EventRegister(provA, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if err := k.EnableTraceEx2(h, provA, 1, 5, 0, 0, nil); err != nil {
				t.Fatal(err)
			}
			if err := k.EventWrite(r, &EventDescriptor{Level: 4}, make([]byte, 100)); err != nil {
				t.Fatal(err)
			}
			go k.FlushTrace(h, "", nil) // the logger hands the buffer to the Sink
			t.Cleanup(func() { k.Close() })
			err = <-s.err
			if c.want == nil && err != nil || c.want != nil && (!errors.Is(err, c.want) || !strings.Contains(err.Error(), "called from its Sink")) {
				t.Fatalf("%s from the Sink: %v, want %v", c.name, err, c.want)
			}
			// The session still stops (Close's stop, or this one) once the Sink returned.
			if err := k.StopTrace(h, "", nil); c.name != "close" && err != nil {
				t.Fatalf("stop after: %v", err)
			}
		})
	}
}
