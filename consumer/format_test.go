package consumer

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/etwemu/etwemu/guid"
	tl "github.com/etwemu/etwemu/tracelogging"
)

// TestFormatValue: every value kind the TraceLogging decoder yields is formatted as TDH
// formats its in- and out-type, as golang-etw's EventData holds it.
func TestFormatValue(t *testing.T) {
	g := guid.MustParse("73c39589-192e-4c64-9acf-6c5d0aa18528")
	for _, c := range []struct {
		in   tl.InType
		out  tl.OutType
		v    any
		want string
	}{
		{tl.InUnicodeString, tl.OutDefault, "héllo", "héllo"},
		{tl.InAnsiString, tl.OutJSON, `{"a":1}`, `{"a":1}`},
		{tl.InInt8, tl.OutDefault, int8(-8), "-8"},
		{tl.InUInt8, tl.OutDefault, uint8(200), "200"},
		{tl.InUInt8, tl.OutHex, uint8(0x2a), "0x2A"},
		{tl.InUInt8, tl.OutBoolean, true, "true"},
		{tl.InInt16, tl.OutDefault, int16(-1600), "-1600"},
		{tl.InUInt16, tl.OutDefault, uint16(65535), "65535"},
		{tl.InUInt16, tl.OutPort, uint16(0x5000), "80"},
		{tl.InUInt16, tl.OutHex, uint16(0xbeef), "0xBEEF"},
		{tl.InInt32, tl.OutDefault, int32(math.MinInt32), "-2147483648"},
		{tl.InInt32, tl.OutHResult, int32(-2147467259), "0x80004005"},
		{tl.InUInt32, tl.OutDefault, uint32(4000000000), "4000000000"},
		{tl.InUInt32, tl.OutPID, uint32(4242), "4242"},
		{tl.InUInt32, tl.OutIPv4, uint32(0x0100007f), "127.0.0.1"},
		{tl.InUInt32, tl.OutWin32Error, uint32(5), "0x5"},
		{tl.InUInt32, tl.OutNTStatus, uint32(0xC0000005), "0xC0000005"},
		{tl.InHexInt32, tl.OutDefault, uint32(0x140), "0x140"},
		{tl.InInt64, tl.OutDefault, int64(math.MinInt64), "-9223372036854775808"},
		{tl.InUInt64, tl.OutDefault, uint64(math.MaxUint64), "18446744073709551615"},
		{tl.InHexInt64, tl.OutDefault, uint64(0xdeadbeef00), "0xDEADBEEF00"},
		{tl.InPointer, tl.OutDefault, uint64(0x7ff000), "0x7FF000"},
		{tl.InFloat, tl.OutDefault, float32(25.5), "25.5"},
		{tl.InDouble, tl.OutDefault, 0.1, "0.1"},
		{tl.InBool32, tl.OutDefault, false, "false"},
		{tl.InBinary, tl.OutDefault, []byte{1, 0xab}, "0x01AB"},
		{tl.InBinary, tl.OutIPv6, []byte{0x20, 0x01, 0x0d, 0xb8, 15: 1}, "2001:db8::1"},
		{tl.InGUID, tl.OutDefault, g, "{73C39589-192E-4C64-9ACF-6C5D0AA18528}"},
		{tl.InFileTime, tl.OutDefault, time.Date(2024, 2, 29, 12, 0, 0, 500, time.UTC), "2024-02-29T12:00:00.0000005Z"},
		{tl.InSystemTime, tl.OutDefault, time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC), "2024-02-29T12:00:00Z"},
		{tl.InSID, tl.OutDefault, "S-1-5-18", "S-1-5-18"},
		{tl.InCountedString, tl.OutDefault, "counted", "counted"},
		{tl.InNull, tl.OutDefault, nil, ""},
		{tl.InStruct, tl.OutDefault, []tl.Field{{Name: "A", In: tl.InUInt8, Value: uint8(1)}}, "{A=1}"},
	} {
		if got := formatValue(c.in, c.out, c.v); got != c.want {
			t.Errorf("%v/%v %#v: %q, want %q", c.in, c.out, c.v, got, c.want)
		}
	}
}

// TestSetEventData: scalars become strings, arrays []string, and structs (top-level, or
// the elements of an array of structs) go to "Structures" in order, as golang-etw's
// EventData has them.
func TestSetEventData(t *testing.T) {
	data := map[string]any{}
	member := func(name, v string) tl.Field { return tl.Field{Name: name, In: tl.InAnsiString, Value: v} }
	setEventData(data, []tl.Field{
		{Name: "N", In: tl.InUInt32, Value: uint32(7)},
		{Name: "List", In: tl.InUInt16, Array: true, Value: []any{uint16(1), uint16(2)}},
		{Name: "S", In: tl.InStruct, Value: []tl.Field{member("a", "x"), {Name: "In", In: tl.InStruct, Value: []tl.Field{member("b", "y")}}}},
		{Name: "Many", In: tl.InStruct, Array: true, Value: []any{[]tl.Field{member("c", "z")}}},
	})
	if got := fmt.Sprint(data); got != "map[List:[1 2] N:7 Structures:[map[In:{b=\"y\"} a:x] map[c:z]]]" {
		t.Fatalf("EventData %s", got)
	}
	if _, ok := data["S"]; ok {
		t.Fatal("a struct under its own name, not golang-etw's Structures")
	}
}
