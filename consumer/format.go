package consumer

import (
	"encoding/hex"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/tracelogging"
)

// StructurePropertyName is the EventData key golang-etw puts an event's structs under,
// in order, each a map from member name to value.
const StructurePropertyName = "Structures"

// setEventData fills data with fields formatted as golang-etw's EventData holds them:
// each scalar a string, each array a []string, and each struct (top-level, or an element
// of an array of structs) a map[string]string appended to data["Structures"].
func setEventData(data map[string]any, fields []tracelogging.Field) {
	var structs []map[string]string
	for _, f := range fields {
		switch {
		case f.In == tracelogging.InStruct && f.Array:
			elems, _ := f.Value.([]any)
			for _, v := range elems {
				structs = append(structs, structMap(v))
			}
		case f.In == tracelogging.InStruct:
			structs = append(structs, structMap(f.Value))
		case f.Array:
			elems, _ := f.Value.([]any)
			out := make([]string, len(elems))
			for i, v := range elems {
				out[i] = formatValue(f.In, f.Out, v)
			}
			data[f.Name] = out
		default:
			data[f.Name] = formatValue(f.In, f.Out, f.Value)
		}
	}
	if structs != nil {
		data[StructurePropertyName] = structs
	}
}

// structMap formats a struct's members; a member that is itself a struct or an array is
// written in tracelogging's text form ({name=value ...}, [v1 v2 ...]).
func structMap(v any) map[string]string {
	members, _ := v.([]tracelogging.Field)
	m := make(map[string]string, len(members))
	for _, f := range members {
		if f.In == tracelogging.InStruct || f.Array {
			m[f.Name] = f.Text()
			continue
		}
		m[f.Name] = formatValue(f.In, f.Out, f.Value)
	}
	return m
}

// formatValue formats one decoded value as TdhFormatProperty does for its in- and
// out-type: integers in decimal; HexInt32, HexInt64, Pointer, OutHex and the status
// codes (Win32Error, NTStatus, HResult, which TDH would turn into their message text) as
// 0x and upper-case hexadecimal without leading zeros; booleans as true or false; GUIDs
// as {XXXXXXXX-...}; FILETIME and SYSTEMTIME as RFC 3339 in UTC (TDH writes the
// locale's form); binary as 0x and upper-case hex pairs; IPv4 and IPv6 addresses and
// ports as addresses and port numbers; floating point in the shortest form that reads
// back the same; strings as they are.
func formatValue(in tracelogging.InType, out tracelogging.OutType, v any) string {
	hexOut := in == tracelogging.InHexInt32 || in == tracelogging.InHexInt64 || in == tracelogging.InPointer ||
		out == tracelogging.OutHex || out == tracelogging.OutWin32Error || out == tracelogging.OutNTStatus || out == tracelogging.OutHResult
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		if out == tracelogging.OutIPv6 && len(x) == 16 {
			return netip.AddrFrom16([16]byte(x)).String()
		}
		return "0x" + strings.ToUpper(hex.EncodeToString(x))
	case bool:
		return strconv.FormatBool(x)
	case guid.GUID:
		return bracedGUID(x)
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case uint8:
		if hexOut {
			return fmt.Sprintf("0x%X", x)
		}
		return strconv.FormatUint(uint64(x), 10)
	case uint16:
		if out == tracelogging.OutPort { // network byte order
			x = x<<8 | x>>8
		}
		if hexOut {
			return fmt.Sprintf("0x%X", x)
		}
		return strconv.FormatUint(uint64(x), 10)
	case uint32:
		if out == tracelogging.OutIPv4 {
			return netip.AddrFrom4([4]byte{byte(x), byte(x >> 8), byte(x >> 16), byte(x >> 24)}).String()
		}
		if hexOut {
			return fmt.Sprintf("0x%X", x)
		}
		return strconv.FormatUint(uint64(x), 10)
	case uint64:
		if hexOut {
			return fmt.Sprintf("0x%X", x)
		}
		return strconv.FormatUint(x, 10)
	case int8:
		return strconv.FormatInt(int64(x), 10)
	case int16:
		return strconv.FormatInt(int64(x), 10)
	case int32:
		if hexOut {
			return fmt.Sprintf("0x%X", uint32(x))
		}
		return strconv.FormatInt(int64(x), 10)
	case int64:
		return strconv.FormatInt(x, 10)
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case nil:
		return ""
	case []tracelogging.Field:
		return tracelogging.Field{In: tracelogging.InStruct, Value: x}.Text()
	}
	return fmt.Sprint(v)
}
