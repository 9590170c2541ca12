package tracelogging

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Text formats the field's value as a decoder shows it: by its OutType where that
// changes the reading (Hex, IPv4, IPv6, Port, Win32Error, NTStatus, HResult, Json, Xml,
// times), strings quoted, binary in hex, a struct as {name=value ...}, an array as
// [v1 v2 ...].
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
	case []byte:
		if out == OutIPv6 && len(x) == 16 {
			sb.WriteString(netip.AddrFrom16([16]byte(x)).String())
			return
		}
		sb.WriteString("0x")
		sb.WriteString(strings.ToUpper(hex.EncodeToString(x)))
	case time.Time:
		sb.WriteString(x.Format(time.RFC3339Nano))
	case uint32:
		switch {
		case out == OutIPv4:
			sb.WriteString(netip.AddrFrom4([4]byte{byte(x), byte(x >> 8), byte(x >> 16), byte(x >> 24)}).String())
		case in == InHexInt32 || out == OutHex || out == OutWin32Error || out == OutNTStatus || out == OutHResult:
			fmt.Fprintf(sb, "0x%08X", x)
		default:
			sb.WriteString(strconv.FormatUint(uint64(x), 10))
		}
	case uint64:
		if in == InHexInt64 || in == InPointer || out == OutHex {
			fmt.Fprintf(sb, "0x%X", x)
			return
		}
		sb.WriteString(strconv.FormatUint(x, 10))
	case uint16:
		if out == OutPort { // network byte order
			x = x<<8 | x>>8
		}
		if out == OutHex {
			fmt.Fprintf(sb, "0x%04X", x)
			return
		}
		sb.WriteString(strconv.FormatUint(uint64(x), 10))
	case nil:
		sb.WriteString("null")
	default:
		fmt.Fprint(sb, x)
	}
}

// Text formats fields as name=value pairs separated by spaces.
func Text(fields []Field) string {
	var sb strings.Builder
	for i, f := range fields {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(f.Name)
		sb.WriteByte('=')
		f.writeText(&sb)
	}
	return sb.String()
}
