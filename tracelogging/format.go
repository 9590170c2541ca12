package tracelogging

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/internal/quote"
)

// FormatValue formats one decoded scalar value as TdhFormatProperty does for its in- and
// out-type, the one formatter of field values: integers in decimal; HexInt32, HexInt64,
// Pointer and the out-types Hex, Win32Error, NTStatus and HResult (which TDH would turn
// into their message text) as 0x and upper-case hexadecimal without leading zeros;
// booleans as true or false; GUIDs as {XXXXXXXX-...} in upper case; FILETIME and
// SYSTEMTIME as RFC 3339 in UTC (TDH writes the locale's form); binary as 0x and
// upper-case hex pairs; IPv4 and IPv6 addresses and ports (network byte order) as
// addresses and port numbers; floating point in the shortest form that reads back the
// same; strings as they are; no value as "". A struct's members (a []Field) are written
// as Text writes them. UInt8 and UInt16 with OutType String (TraceLoggingChar8 and
// TraceLoggingWChar) are one character: a UInt8 the character of its value in ISO 8859-1
// (TDH uses the system's ANSI code page, whose first 128 are the same), a UInt16 the
// UTF-16 code unit, and a surrogate, which is no character alone, U+FFFD.
func FormatValue(in InType, out OutType, v any) string {
	hexOut := in == InHexInt32 || in == InHexInt64 || in == InPointer ||
		out == OutHex || out == OutWin32Error || out == OutNTStatus || out == OutHResult
	unsigned := func(x uint64) string {
		if hexOut {
			return "0x" + strings.ToUpper(strconv.FormatUint(x, 16))
		}
		return strconv.FormatUint(x, 10)
	}
	// signed writes a signed value in decimal, or its bits (bits, the value as unsigned
	// at its own width) in hexadecimal.
	signed := func(x int64, bits uint64) string {
		if hexOut {
			return unsigned(bits)
		}
		return strconv.FormatInt(x, 10)
	}
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		if out == OutIPv6 && len(x) == 16 {
			return netip.AddrFrom16([16]byte(x)).String()
		}
		return "0x" + strings.ToUpper(hex.EncodeToString(x))
	case bool:
		return strconv.FormatBool(x)
	case guid.GUID:
		return "{" + strings.ToUpper(x.String()) + "}"
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case uint8:
		if out == OutString {
			return string(rune(x))
		}
		return unsigned(uint64(x))
	case uint16:
		if out == OutString {
			return string(utf16.Decode([]uint16{x}))
		}
		if out == OutPort {
			x = x<<8 | x>>8
		}
		return unsigned(uint64(x))
	case uint32:
		if out == OutIPv4 {
			return netip.AddrFrom4([4]byte{byte(x), byte(x >> 8), byte(x >> 16), byte(x >> 24)}).String()
		}
		return unsigned(uint64(x))
	case uint64:
		return unsigned(x)
	case int8:
		return signed(int64(x), uint64(uint8(x)))
	case int16:
		return signed(int64(x), uint64(uint16(x)))
	case int32:
		return signed(int64(x), uint64(uint32(x)))
	case int64:
		return signed(x, uint64(x))
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case nil:
		return ""
	case []Field:
		return Field{In: InStruct, Value: x}.Text()
	}
	return fmt.Sprint(v)
}

// Text formats the field's value for a line of text: FormatValue's form, with strings
// and characters quoted (except JSON and XML text), a struct as {name=value ...}, an
// array as [v1 v2 ...] and no value as null.
func (f Field) Text() string {
	var sb strings.Builder
	f.writeText(&sb)
	return sb.String()
}

func (f Field) writeText(sb *strings.Builder) {
	if elems, ok := f.Value.([]any); ok && f.Array {
		sb.WriteByte('[')
		for i, v := range elems {
			if i > 0 {
				sb.WriteByte(' ')
			}
			writeValue(sb, f.In, f.Out, v)
		}
		sb.WriteByte(']')
		return
	}
	writeValue(sb, f.In, f.Out, f.Value)
}

func writeValue(sb *strings.Builder, in InType, out OutType, v any) {
	switch x := v.(type) {
	case []Field:
		sb.WriteByte('{')
		for i, m := range x {
			if i > 0 {
				sb.WriteByte(' ')
			}
			sb.WriteString(m.Name)
			sb.WriteByte('=')
			m.writeText(sb)
		}
		sb.WriteByte('}')
	case string:
		if out == OutJSON || out == OutXML {
			sb.WriteString(x)
			return
		}
		sb.WriteString(strconv.Quote(x))
	case uint8, uint16:
		if out == OutString {
			sb.WriteString(strconv.Quote(FormatValue(in, out, v)))
			return
		}
		sb.WriteString(FormatValue(in, out, v))
	case nil:
		sb.WriteString("null")
	default:
		sb.WriteString(FormatValue(in, out, v))
	}
}

// Text formats fields as name=value pairs separated by spaces.
func Text(fields []Field) string {
	var sb strings.Builder
	for i, f := range fields {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(quote.Printable(f.Name)) // a name from a file or a caller: one line, no escape sequence
		sb.WriteByte('=')
		f.writeText(&sb)
	}
	return sb.String()
}
