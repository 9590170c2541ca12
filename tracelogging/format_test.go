package tracelogging

import (
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/etwemu/etwemu/guid"
)

// TestFormatValue: every value kind the decoder yields is formatted as TDH formats its
// in- and out-type, as golang-etw's EventData holds it; Text quotes the strings.
func TestFormatValue(t *testing.T) {
	g := guid.MustParse("73c39589-192e-4c64-9acf-6c5d0aa18528")
	for _, c := range []struct {
		in   InType
		out  OutType
		v    any
		want string
	}{
		{InUnicodeString, OutDefault, "héllo", "héllo"},
		{InAnsiString, OutJSON, `{"a":1}`, `{"a":1}`},
		{InInt8, OutDefault, int8(-8), "-8"},
		{InUInt8, OutDefault, uint8(200), "200"},
		{InUInt8, OutHex, uint8(0x2a), "0x2A"},
		{InUInt8, OutBoolean, true, "true"},
		{InInt8, OutHex, int8(-1), "0xFF"},
		{InInt16, OutDefault, int16(-1600), "-1600"},
		{InUInt16, OutDefault, uint16(65535), "65535"},
		{InUInt16, OutPort, uint16(0x5000), "80"},
		{InUInt16, OutHex, uint16(0xbeef), "0xBEEF"},
		{InInt32, OutDefault, int32(math.MinInt32), "-2147483648"},
		{InInt32, OutHResult, int32(-2147467259), "0x80004005"},
		{InUInt32, OutDefault, uint32(4000000000), "4000000000"},
		{InUInt32, OutPID, uint32(4242), "4242"},
		{InUInt32, OutIPv4, uint32(0x0100007f), "127.0.0.1"},
		{InUInt32, OutWin32Error, uint32(5), "0x5"},
		{InUInt32, OutNTStatus, uint32(0xC0000005), "0xC0000005"},
		{InHexInt32, OutDefault, uint32(0x140), "0x140"},
		{InInt64, OutDefault, int64(math.MinInt64), "-9223372036854775808"},
		{InUInt64, OutDefault, uint64(math.MaxUint64), "18446744073709551615"},
		{InHexInt64, OutDefault, uint64(0xdeadbeef00), "0xDEADBEEF00"},
		{InPointer, OutDefault, uint64(0x7ff000), "0x7FF000"},
		{InFloat, OutDefault, float32(25.5), "25.5"},
		{InDouble, OutDefault, 0.1, "0.1"},
		{InBool32, OutDefault, false, "false"},
		{InBinary, OutDefault, []byte{1, 0xab}, "0x01AB"},
		{InBinary, OutIPv6, []byte{0x20, 0x01, 0x0d, 0xb8, 15: 1}, "2001:db8::1"},
		{InGUID, OutDefault, g, "{73C39589-192E-4C64-9ACF-6C5D0AA18528}"},
		{InFileTime, OutDefault, time.Date(2024, 2, 29, 12, 0, 0, 500, time.UTC), "2024-02-29T12:00:00.0000005Z"},
		{InSystemTime, OutDefault, time.Date(2024, 2, 29, 12, 0, 0, 0, time.UTC), "2024-02-29T12:00:00Z"},
		{InSID, OutDefault, "S-1-5-18", "S-1-5-18"},
		{InCountedString, OutDefault, "counted", "counted"},
		{InNull, OutDefault, nil, ""},
		{InStruct, OutDefault, []Field{{Name: "A", In: InUInt8, Value: uint8(1)}}, "{A=1}"},
	} {
		if got := FormatValue(c.in, c.out, c.v); got != c.want {
			t.Errorf("%v/%v %#v: %q, want %q", c.in, c.out, c.v, got, c.want)
		}
		text := c.want
		switch c.v.(type) {
		case string:
			if c.out != OutJSON {
				text = strconv.Quote(c.want)
			}
		case nil:
			text = "null"
		}
		if got := (Field{In: c.in, Out: c.out, Value: c.v}).Text(); got != text {
			t.Errorf("%v/%v %#v: Text %q, want %q", c.in, c.out, c.v, got, text)
		}
	}
}

// TestFormatCharacters: UInt8 and UInt16 with OutType String, as TraceLoggingChar8 and
// TraceLoggingWChar write them, are one character each, as TdhFormatProperty shows
// them; Text quotes them as it quotes strings.
func TestFormatCharacters(t *testing.T) {
	for _, c := range []struct {
		in   InType
		v    any
		want string
	}{
		{InUInt8, uint8('A'), "A"},
		{InUInt8, uint8(0xE9), "é"}, // ISO 8859-1
		{InUInt8, uint8(0), "\x00"},
		{InUInt16, uint16('Z'), "Z"},
		{InUInt16, uint16(0x20AC), "€"},
		{InUInt16, uint16(0xD83D), "\uFFFD"}, // a surrogate alone
	} {
		if got := FormatValue(c.in, OutString, c.v); got != c.want {
			t.Errorf("%v/String %#v: %q, want %q", c.in, c.v, got, c.want)
		}
		if got := (Field{In: c.in, Out: OutString, Value: c.v}).Text(); got != strconv.Quote(c.want) {
			t.Errorf("%v/String %#v: Text %s, want %q", c.in, c.v, got, c.want)
		}
	}
	s := schema(t, func(m *Builder) {
		m.Field("c", InUInt8, OutString, 0, Scalar, 0)
		m.Field("w", InUInt16, OutString, 0, Ccount, 2)
		m.Field("n", InUInt8, OutDefault, 0, Scalar, 0)
	})
	fields, err := s.Decode([]byte{'A', 'h', 0, 'i', 0, 'A'})
	if want := `c="A" w=["h" "i"] n=65`; err != nil || Text(fields) != want {
		t.Errorf("decoded %s, %v, want %s", Text(fields), err, want)
	}
}
