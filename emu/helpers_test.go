package emu

import (
	"strconv"
	"sync"
	"testing"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winver"
)

func newKernel(t testing.TB, v winver.Version) *Kernel {
	t.Helper()
	// Files go to memory, never into the package's directory.
	k, err := New(Config{Version: v, Processors: 2, Clock: clock.NewManualSource(1000, 1), FileSystem: &etl.MemFS{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// enabledProvider registers the provider of GUID guid.FromName(name), without a
// callback, and enables it on session h at level 5.
func enabledProvider(t testing.TB, k *Kernel, h TraceHandle, name string) *Registration {
	t.Helper()
	prov := guid.FromName(name)
	r, err := k.EventRegister(prov, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := k.EnableTraceEx2(h, prov, regentry.ControlEnable, 5, 0, 0, nil); err != nil {
		t.Fatal(err)
	}
	return r
}

// startMem starts a real-time session (the memory sink stands for its consumer) with the
// extra mode bits given.
func startMem(t testing.TB, k *Kernel, name string, mode uint32) (TraceHandle, *session.MemorySink) {
	t.Helper()
	sink := &session.MemorySink{}
	h, err := k.StartTrace(name, &Properties{BufferSize: 4, LogFileMode: logmode.RealTime | mode, Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	return h, sink
}

// call is one enable callback as the provider saw it.
type call struct {
	source   guid.GUID
	code     regentry.ControlCode
	level    uint8
	any, all uint64
	context  any
}

type recorder struct {
	mu    sync.Mutex
	calls []call
}

func (r *recorder) cb(source guid.GUID, code regentry.ControlCode, level uint8, any, all uint64, _ []byte, ctx any) {
	r.mu.Lock()
	r.calls = append(r.calls, call{source, code, level, any, all, ctx})
	r.mu.Unlock()
}

func (r *recorder) take() []call {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.calls
	r.calls = nil
	return out
}

// records decodes every EVENT_HEADER record a sink received.
func records(t testing.TB, s *session.MemorySink) []abi.EventHeader {
	t.Helper()
	var out []abi.EventHeader
	if err := s.Events(func(_ []byte, r etl.Record) error {
		h, _ := abi.DecodeEventHeader(r.Bytes)
		out = append(out, h)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }
