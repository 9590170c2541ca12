package etw

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/winerr"
)

func testKernel(t *testing.T) *emu.Kernel {
	t.Helper()
	k, err := emu.New(emu.Config{Processors: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k
}

// testProvider registers provider name on k, closed when the test ends.
func testProvider(t *testing.T, k *emu.Kernel, name string) *Provider {
	t.Helper()
	p, err := NewProviderWithOptions(name, WithKernel(k))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// liveSession starts a real-time session name on k whose sink keeps its buffers, and
// enables p on it at level 5.
func liveSession(t *testing.T, k *emu.Kernel, name string, p *Provider) (emu.TraceHandle, *emu.MemorySink) {
	t.Helper()
	sink := &emu.MemorySink{}
	h, err := k.StartTrace(name, &emu.Properties{LogFileMode: emu.RealTimeMode, Sink: sink})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.EnableTraceEx2(h, p.ID, emu.EnableProvider, 5, 0, 0, nil); err != nil {
		t.Fatal(err)
	}
	return h, sink
}

// TestCloseWinsAgainstCallback: an enable callback the kernel had begun to deliver when
// Close ran, reaching the provider after Close returned, neither enables it nor calls the
// user's callback.
func TestCloseWinsAgainstCallback(t *testing.T) {
	k := testKernel(t)
	calls := 0
	p, err := NewProviderWithOptions("Etwemu.Test.CloseWins", WithKernel(k),
		WithCallback(func(guid.GUID, ProviderState, Level, uint64, uint64, uintptr) { calls++ }))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	p.enableCallback(guid.GUID{}, emu.EnableProvider, 5, 0, 0, nil, nil) // the late delivery
	if p.IsEnabled() || calls != 0 {
		t.Errorf("after Close: IsEnabled %v, %d user callbacks; want false, 0", p.IsEnabled(), calls)
	}
}

// TestCloseRacesEnable: sessions enabling the provider on another goroutine while it
// closes never leave it enabled after Close returned (run with -race).
func TestCloseRacesEnable(t *testing.T) {
	k := testKernel(t)
	h, err := k.StartTrace("races", &emu.Properties{LogFileMode: emu.RealTimeMode, Sink: &emu.MemorySink{}})
	if err != nil {
		t.Fatal(err)
	}
	defer k.StopTrace(h, "", nil)
	for i := 0; i < 100; i++ {
		p, err := NewProviderWithOptions("Etwemu.Test.Races", WithKernel(k))
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			k.EnableTraceEx2(h, p.ID, emu.EnableProvider, 5, 0, 0, nil)
		}()
		p.Close()
		if p.IsEnabled() {
			t.Fatalf("round %d: enabled after Close", i)
		}
		wg.Wait()
		if p.IsEnabled() {
			t.Fatalf("round %d: enabled after Close, once the enable returned", i)
		}
		k.EnableTraceEx2(h, p.ID, emu.DisableProvider, 0, 0, 0, nil)
	}
}

// TestCloseFromCallback: the user's callback may close its own provider.
func TestCloseFromCallback(t *testing.T) {
	k := testKernel(t)
	var p *Provider
	var closeErr error
	closed := false
	p, err := NewProviderWithOptions("Etwemu.Test.SelfClose", WithKernel(k),
		WithCallback(func(_ guid.GUID, s ProviderState, _ Level, _, _ uint64, _ uintptr) {
			if s == ProviderStateEnable && !closed {
				closed = true
				closeErr = p.Close()
			}
		}))
	if err != nil {
		t.Fatal(err)
	}
	h, err := k.StartTrace("self", &emu.Properties{LogFileMode: emu.RealTimeMode, Sink: &emu.MemorySink{}})
	if err != nil {
		t.Fatal(err)
	}
	defer k.StopTrace(h, "", nil)
	if err := k.EnableTraceEx2(h, p.ID, emu.EnableProvider, 5, 0, 0, nil); err != nil {
		t.Fatal(err)
	}
	if !closed || closeErr != nil || p.IsEnabled() {
		t.Errorf("Close from the callback: ran %v, %v, enabled %v", closed, closeErr, p.IsEnabled())
	}
}

// TestNilOptions: nil options of every kind are errors, never a panic.
func TestNilOptions(t *testing.T) {
	k := testKernel(t)
	if _, err := NewProviderWithOptions("Etwemu.Test.Nil", WithKernel(k), nil); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("a nil provider option: %v, want ERROR_INVALID_PARAMETER", err)
	}
	p := testProvider(t, k, "Etwemu.Test.Nil")
	h, sink := liveSession(t, k, "nil", p)
	for name, c := range map[string]struct {
		e []EventOpt
		f []FieldOpt
	}{
		"event option":   {e: []EventOpt{WithLevel(LevelInfo), nil}},
		"field option":   {f: []FieldOpt{IntField("a", 1), nil}},
		"struct's field": {f: []FieldOpt{Struct("s", IntField("a", 1), nil)}},
	} {
		if err := p.WriteEvent("E", c.e, c.f); !errors.Is(err, winerr.ErrInvalidParameter) {
			t.Errorf("a nil %s: %v, want ERROR_INVALID_PARAMETER", name, err)
		}
	}
	if err := p.WriteEvent("E", nil, []FieldOpt{Struct("s", IntField("a", 1))}); err != nil {
		t.Errorf("a whole event after the refused ones: %v", err)
	}
	if err := k.StopTrace(h, "", nil); err != nil {
		t.Fatal(err)
	}
	if n, err := sink.CountEvents(); err != nil || n != 1 {
		t.Errorf("the session holds %d events (%v), want the 1 whole one", n, err)
	}
}

// An event its TraceLogging encoding cannot say is refused with ERROR_INVALID_PARAMETER
// and the reason, and nothing is written: a string value, field name or event name
// holding a NUL (the encoding ends each at its first NUL, so the fields after it were
// read from the string's rest), and a struct of more than 127 fields (its OutType's 7
// bits count them: 128 members read back as an empty struct and 128 top-level fields).
func TestUnencodableEventsRefused(t *testing.T) {
	k := testKernel(t)
	p := testProvider(t, k, "Etwemu.Test.Unencodable")
	h, sink := liveSession(t, k, "unencodable", p)
	members := func(n int) []FieldOpt {
		m := make([]FieldOpt, n)
		for i := range m {
			m[i] = Uint8Field("m", uint8(i))
		}
		return m
	}
	for _, c := range []struct {
		event string
		f     []FieldOpt
		want  string
	}{
		{"E", []FieldOpt{StringField("s", "a\x00b"), Uint32Field("after", 7)}, `string field "s" holds a NUL at byte 1`},
		{"E", []FieldOpt{JSONStringField("j", "{}\x00")}, `string field "j" holds a NUL at byte 2`},
		{"E", []FieldOpt{StringArray("a", []string{"x", "y\x00"})}, `element 1 of string array "a" holds a NUL at byte 1`},
		{"E", []FieldOpt{Uint8Field("na\x00me", 1)}, `field name "na\x00me" holds a NUL at byte 2`},
		{"E\x00v", nil, `event name "E\x00v" holds a NUL at byte 1`},
		{"E", []FieldOpt{Struct("s", members(128)...), Uint32Field("after", 7)}, `struct "s" has 128 fields: a struct holds at most 127`},
		{"E", []FieldOpt{Struct("s", members(300)...)}, `struct "s" has 300 fields`},
	} {
		if err := p.WriteEvent(c.event, nil, c.f); !errors.Is(err, winerr.ErrInvalidParameter) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: %v, want ERROR_INVALID_PARAMETER and %q", c.event, err, c.want)
		}
	}
	if err := p.WriteEvent("E", nil, []FieldOpt{Struct("s", members(127)...), StringField("s", "no NUL")}); err != nil {
		t.Errorf("127 fields and a plain string: %v", err)
	}
	if err := k.StopTrace(h, "", nil); err != nil {
		t.Fatal(err)
	}
	if n, err := sink.CountEvents(); err != nil || n != 1 {
		t.Errorf("the session holds %d events (%v), want the 1 encodable one", n, err)
	}
}

// TestProviderNameRefused: a provider name holding a NUL would end the name in the
// provider metadata and make the bytes after it traits (here a group the caller never
// asked for), and a name too long for the metadata's 16-bit size would wrap it: both are
// ERROR_INVALID_PARAMETER and register nothing.
func TestProviderNameRefused(t *testing.T) {
	k := testKernel(t)
	group := guid.MustParse("0badf00d-0000-4000-8000-000000000003")
	g := regentry.GroupTrait(group)
	smuggled := "X\x00" + string([]byte{19, 0, 1}) + string(g.Data) + string([]byte{4, 0, 9})
	for _, c := range []struct {
		name string
		opts []ProviderOpt
		want string
	}{
		{smuggled, nil, "provider name of 24 bytes holds a NUL at byte 1"},
		{"\x00", []ProviderOpt{WithGroup(group)}, "holds a NUL at byte 0"},
		{strings.Repeat("n", 0xFFFF-21), []ProviderOpt{WithGroup(group)}, "TotalSize, a 16-bit count"},
		{strings.Repeat("n", 0xFFFF-2), nil, "TotalSize, a 16-bit count"},
	} {
		p, err := NewProviderWithOptions(c.name, append(c.opts, WithKernel(k))...)
		if !errors.Is(err, winerr.ErrInvalidParameter) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("a name of %d bytes: %v, want ERROR_INVALID_PARAMETER and %q", len(c.name), err, c.want)
		}
		if p != nil {
			if gr, ok := p.Registration().Group(); ok {
				t.Errorf("a name of %d bytes put the provider in group %s", len(c.name), gr)
			}
			p.Close()
		}
	}
}

// TestLongNamesInMessages: an error quotes an event or field name of up to 64 KB by its
// first 64 bytes and its length, and the name of an event holding a NUL once.
func TestLongNamesInMessages(t *testing.T) {
	k := testKernel(t)
	p := testProvider(t, k, "Etwemu.Test.LongNames")
	liveSession(t, k, "longnames", p)
	long := strings.Repeat("n", 70000)
	short := `"` + strings.Repeat("n", 64) + `"… (`
	for _, c := range []struct {
		what  string
		event string
		e     []EventOpt
		f     []FieldOpt
		want  string
	}{
		{"a 70,000-byte event name", long, nil, nil, short + "70000 bytes): "},
		{"a nil option", long, []EventOpt{nil}, nil, short + "70000 bytes): event option 0 is nil"},
		{"a NUL after 70,000 bytes", long + "\x00", nil, nil, "event name " + short + "70001 bytes) holds a NUL at byte 70000"},
		{"a long field name with a NUL", "E", nil, []FieldOpt{Uint8Field(long+"\x00", 1)}, "field name " + short + "70001 bytes) holds a NUL"},
		{"a long string field with a NUL", "E", nil, []FieldOpt{StringField(long, "\x00")}, "string field " + short + "70000 bytes) holds a NUL"},
	} {
		err := p.WriteEvent(c.event, c.e, c.f)
		if !errors.Is(err, winerr.ErrInvalidParameter) || !strings.Contains(err.Error(), c.want) || len(err.Error()) > 300 {
			msg := fmt.Sprint(err)
			t.Errorf("%s: a message of %d bytes, %.300s, want %q", c.what, len(msg), msg, c.want)
		}
	}
	err := p.WriteEvent("E\x00v", nil, nil)
	if err == nil || strings.Count(err.Error(), `"E\x00v"`) != 1 {
		t.Errorf("an event name with a NUL: %v, want the name once", err)
	}
}

// An event the kernel refuses for its size says which event and how large: over ETW's
// 64 KB limit (ERROR_ARITHMETIC_OVERFLOW), or larger than a session's buffers
// (ERROR_MORE_DATA); the codes stay what errors.Is looks for.
func TestSizeRefusalsNameTheEvent(t *testing.T) {
	k := testKernel(t)
	p := testProvider(t, k, "Etwemu.Test.Size")
	h, err := k.StartTrace("small", &emu.Properties{LogFileMode: emu.RealTimeMode, BufferSize: 4, Sink: &emu.MemorySink{}})
	if err != nil {
		t.Fatal(err)
	}
	defer k.StopTrace(h, "", nil)
	if err := k.EnableTraceEx2(h, p.ID, emu.EnableProvider, 5, 0, 0, nil); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		n    int
		code error
		want string
	}{{65535, winerr.ErrArithmeticOverflow, "over ETW's 64 KB limit"}, {8000, winerr.ErrMoreData, "do not fit the buffers"}} {
		err := p.WriteEvent("Big", nil, []FieldOpt{BinaryField("b", make([]byte, c.n))})
		if !errors.Is(err, c.code) || !strings.Contains(err.Error(), `event "Big"`) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("a %d-byte field: %v, want %v saying %q", c.n, err, c.code, c.want)
		}
	}
}
