package decode

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/tracelogging"
)

// buffer builds a buffer holding one EVENT_HEADER record of provider g with the given
// extended items and payload.
func buffer(t *testing.T, h abi.BufferHeader, g guid.GUID, ext []etl.ExtItem, payload []byte) *etl.Buffer {
	t.Helper()
	data := make([]byte, 0x400)
	off := abi.BufferHeaderSize
	p := off + abi.EventHeaderSize
	for i, x := range ext {
		p += abi.PutExtItem(data[p:], x.Type, i < len(ext)-1, x.Data)
	}
	p += copy(data[p:], payload)
	eh := abi.EventHeader{Size: uint16(p - off), HeaderType: abi.EventHeaderEvent64, ProviderID: g, ProcessID: 42, ThreadID: 7, TimeStamp: 1_000_000}
	eh.Descriptor.ID, eh.Descriptor.Level, eh.Descriptor.Keyword = 9, 4, 1<<63
	if len(ext) > 0 {
		eh.Flags |= abi.EventFlagExtendedInfo
	}
	eh.Encode(data[off:])
	h.Offset = uint32(off + abi.Align(p-off))
	return &etl.Buffer{Header: h, Data: data[:h.Offset]}
}

func one(t *testing.T, d *Decoder, b *etl.Buffer) Event {
	t.Helper()
	var got []Event
	if err := d.Buffer(b, 5, func(e *Event) error { got = append(got, *e); return nil }); err != nil || len(got) != 1 {
		t.Fatalf("%d events, %v", len(got), err)
	}
	return got[0]
}

// Provider names come from a record's PROV_TRAITS item, which names the provider's later
// records too, or from a kernel event class, or from the decoder's Names.
func TestProviderNames(t *testing.T) {
	d := New()
	g := guid.FromName("Contoso.Widgets")
	if n := d.providerName(g, nil); n != "" {
		t.Fatalf("unknown provider named %q", n)
	}
	traits := etl.ExtItem{Type: abi.ExtTypeProvTraits, Data: regentry.BuildTraits("Contoso.Widgets")}
	if n := d.providerName(g, []etl.ExtItem{traits}); n != "Contoso.Widgets" {
		t.Fatalf("traits gave %q", n)
	}
	if n := d.providerName(g, nil); n != "Contoso.Widgets" {
		t.Fatalf("a later record of the provider is named %q", n)
	}
	if n := d.providerName(pmc.ThreadGUID, nil); n != "Thread" {
		t.Fatalf("the Thread class is named %q", n)
	}
	other := guid.FromName("Other")
	d.Names = func(x guid.GUID) string {
		if x == other {
			return "Named.Elsewhere"
		}
		return ""
	}
	if n := d.providerName(other, nil); n != "Named.Elsewhere" {
		t.Fatalf("Names gave %q", n)
	}
}

// The processor is ETW_BUFFER_CONTEXT's ProcessorIndex, all sixteen bits with
// ETW_BUFFER_FLAG_PROC_INDEX and ProcessorNumber alone without; the time comes from the
// buffer's reference clock, else from the decoder's.
func TestProcessorAndTime(t *testing.T) {
	start := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	ft := clock.FileTime(start)
	h := abi.BufferHeader{ProcessorNumber: 0x34, Alignment: 0x12, BufferFlag: abi.BufferFlagProcIndex, SequenceNumber: 3,
		ClockFrequency: abi.ClockFrequency(uint32(clock.QPC), 10_000_000), StartTime: ft, StartPerfClock: 0}
	d := New()
	e := one(t, d, buffer(t, h, guid.FromName("P"), nil, nil))
	if e.Processor != 0x1234 || e.Buffer != 5 || e.Sequence != 3 {
		t.Errorf("processor %#x buffer %d sequence %d; want 0x1234, 5, 3", e.Processor, e.Buffer, e.Sequence)
	}
	if want := start.Add(100 * time.Millisecond); !e.Time.Equal(want) {
		t.Errorf("time by the buffer's clock %v, want %v", e.Time, want)
	}
	h = abi.BufferHeader{ProcessorNumber: 0x34, Alignment: 8}
	if e := one(t, d, buffer(t, h, guid.FromName("P"), nil, nil)); e.Processor != 0x34 || !e.Time.IsZero() {
		t.Errorf("a buffer without PROC_INDEX or a clock: processor %#x time %v; want 0x34 and none", e.Processor, e.Time)
	}
	d.Clock = etl.Clock{Type: clock.QPC, Frequency: 1000, StartTime: ft, StartPerf: 999_000}
	if e := one(t, d, buffer(t, h, guid.FromName("P"), nil, nil)); !e.Time.Equal(start.Add(time.Second)) {
		t.Errorf("time by the decoder's clock %v, want %v", e.Time, start.Add(time.Second))
	}
}

// A TraceLogging event is named and its fields decoded once, with its schema cached; a
// malformed schema is a DecodeError, and the event's JSON is valid JSON whatever its
// strings hold.
func TestTraceLoggingAndJSON(t *testing.T) {
	var m tracelogging.Builder
	m.Event("Hello\"<&>\u2028", 0)
	m.Field("n", tracelogging.InUInt32, tracelogging.OutHex, 0, tracelogging.Scalar, 0)
	m.Field("s", tracelogging.InAnsiString, tracelogging.OutDefault, 0, tracelogging.Scalar, 0)
	schema, err := m.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	payload := binary.LittleEndian.AppendUint32(nil, 0xBEEF)
	payload = append(payload, "x\xff\ty\x00"...)
	ext := []etl.ExtItem{
		{Type: abi.ExtTypeProvTraits, Data: regentry.BuildTraits("Demo.<Network>")},
		{Type: abi.ExtTypeEventSchemaTL, Data: schema},
	}
	d := New()
	b := buffer(t, abi.BufferHeader{}, guid.FromName("Demo.<Network>"), ext, payload)
	e := one(t, d, b)
	if e.Name != "Hello\"<&>\u2028" || len(e.Fields) != 2 || e.DecodeError != "" || e.ProviderName != "Demo.<Network>" {
		t.Fatalf("event %q fields %v error %q provider %q", e.Name, e.Fields, e.DecodeError, e.ProviderName)
	}
	if len(d.schemas.m) != 1 {
		t.Errorf("%d schemas cached, want 1", len(d.schemas.m))
	}
	line := d.AppendJSON(nil, &e, 4)
	var j map[string]any
	if err := json.Unmarshal(line, &j); err != nil {
		t.Fatalf("%v in %s", err, line)
	}
	fields, _ := j["fields"].([]any)
	n, _ := fields[0].(map[string]any)
	for key, want := range map[string]any{"buffer": 5.0, "kind": "event", "providerName": "Demo.<Network>", "id": 9.0, "level": 4.0,
		"keyword": "0x8000000000000000", "processId": 42.0, "threadId": 7.0, "timeStamp": 1e6, "payload": "efbe0000",
		"payloadBytes": float64(len(payload)), "event": "Hello\"<&>\u2028"} {
		if j[key] != want {
			t.Errorf("%s = %#v, want %#v", key, j[key], want)
		}
	}
	if n["value"] != "0xBEEF" || n["type"] != "UInt32" {
		t.Errorf("hex field %v, want 0xBEEF as tracelogging.FormatValue writes it", n)
	}
	if m, err := e.MarshalJSON(); err != nil || string(m) != strings.Replace(strings.TrimSuffix(string(line), "\n"), `,"payload":"efbe0000"`, "", 1) {
		t.Errorf("MarshalJSON\n%s\nAppendJSON\n%s", m, line)
	}

	ext[1].Data = []byte{1}
	e = one(t, d, buffer(t, abi.BufferHeader{}, guid.FromName("Demo.<Network>"), ext, payload))
	if e.DecodeError == "" || e.Fields != nil {
		t.Errorf("a malformed schema: error %q fields %v", e.DecodeError, e.Fields)
	}
}

// A blob cache parses each distinct blob once and starts again empty past maxCached
// entries or maxBlobBytes of keys, so a file of distinct blobs holds it bounded.
func TestBlobCacheBounded(t *testing.T) {
	var c blobCache[int]
	parses := 0
	parse := func(b []byte) int { parses++; return len(b) }
	c.get([]byte("a"), parse)
	c.get([]byte("a"), parse)
	if parses != 1 {
		t.Fatalf("one blob parsed %d times", parses)
	}
	big := make([]byte, 0x10000)
	for i := range maxBlobBytes/len(big) + 2 {
		big[0] = byte(i)
		c.get(big, parse)
		if c.bytes > maxBlobBytes || len(c.m) > maxCached {
			t.Fatalf("cache at %d bytes, %d entries", c.bytes, len(c.m))
		}
	}
	for i := range maxCached + 10 {
		c.get([]byte{byte(i), byte(i >> 8), 1}, parse)
		if len(c.m) > maxCached {
			t.Fatalf("cache at %d entries", len(c.m))
		}
	}
}

// JSON has no numbers for NaN and the infinities: a float field holding one is written
// as its text ("NaN", "+Inf", "-Inf"), and the event's other fields with it. Before, the
// encoder's error dropped every field of the event without a word.
func TestJSONNonFiniteFloats(t *testing.T) {
	var m tracelogging.Builder
	m.Event("Floats", 0)
	m.Field("f", tracelogging.InDouble, tracelogging.OutDefault, 0, tracelogging.Scalar, 0)
	m.Field("g", tracelogging.InFloat, tracelogging.OutDefault, 0, tracelogging.Ccount, 3)
	m.Field("n", tracelogging.InUInt32, tracelogging.OutDefault, 0, tracelogging.Scalar, 0)
	schema, err := m.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	payload := binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.NaN()))
	for _, f := range []float32{float32(math.Inf(1)), float32(math.Inf(-1)), 1.5} {
		payload = binary.LittleEndian.AppendUint32(payload, math.Float32bits(f))
	}
	payload = binary.LittleEndian.AppendUint32(payload, 7)
	d := New()
	e := one(t, d, buffer(t, abi.BufferHeader{}, guid.FromName("P"), []etl.ExtItem{{Type: abi.ExtTypeEventSchemaTL, Data: schema}}, payload))
	var j struct {
		Fields []struct {
			Name  string `json:"name"`
			Value any    `json:"value"`
		} `json:"fields"`
		DecodeError string `json:"decodeError"`
	}
	line := d.AppendJSON(nil, &e, 0)
	if err := json.Unmarshal(line, &j); err != nil {
		t.Fatalf("%v in %s", err, line)
	}
	if got := fmt.Sprint(j.Fields); got != "[{f NaN} {g [+Inf -Inf 1.5]} {n 7}]" || j.DecodeError != "" {
		t.Errorf("fields %s, decodeError %q, in %s", got, j.DecodeError, line)
	}
}

// A negative payload limit shows no payload bytes, as 0 does (it panicked).
func TestAppendJSONNegativeLimit(t *testing.T) {
	d := New()
	e := one(t, d, buffer(t, abi.BufferHeader{}, guid.FromName("Neg"), nil, []byte("abc")))
	for _, n := range []int{-1, math.MinInt} {
		if l := string(d.AppendJSON(nil, &e, n)); strings.Contains(l, `"payload":`) || !strings.Contains(l, `"payloadBytes":3`) {
			t.Errorf("limit %d: %s", n, l)
		}
	}
}
