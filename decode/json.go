package decode

import (
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"unicode/utf8"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/tracelogging"
)

// The event's JSON, one object, the same wherever etwemu prints a record (dump -json,
// the scenario views' logdump): keys in camelCase; a key whose value is zero or empty is
// left out, except buffer, processor, offset, kind, size, threadId, processId, timeStamp
// and payloadBytes; 64-bit keywords and markers as hexadecimal strings, which JSON
// numbers cannot hold exactly.
//
//	{"buffer":1,"sequence":1,"processor":0,"offset":72,"kind":"event","size":104,
//	 "provider":"…","providerName":"…","id":1,"version":0,"level":4,"opcode":0,"task":0,
//	 "keyword":"0x0","hookId":…,"hookName":"…","detail":"…","threadId":0,"processId":42,
//	 "timeStamp":…,"time":"2024-…Z","activityId":"…","ext":["PROV_TRAITS(12 bytes)"],
//	 "pmc":[…],"payloadBytes":24,"payload":"…","marker":"0x…","event":"…",
//	 "fields":[{"name":"…","type":"UInt32","value":7}],"decodeError":"…"}
//
// id, version, level, opcode, task and keyword are an EVENT_HEADER record's (id is there
// even when 0); hookId and hookName a kernel record's; marker an unknown kind's.

// MarshalJSON writes the event's JSON without its payload bytes.
func (e *Event) MarshalJSON() ([]byte, error) {
	return appendJSON(nil, e, 0, e.timeText()), nil
}

// AppendJSON appends the event's JSON and a newline, with at most payload bytes of its
// payload in hexadecimal, its time formatted once for records that share a tick.
func (d *Decoder) AppendJSON(l []byte, e *Event, payload int) []byte {
	return append(appendJSON(l, e, payload, d.TimeText(e)), '\n')
}

func (e *Event) timeText() string {
	if e.Time.IsZero() {
		return ""
	}
	return e.Time.UTC().Format(TimeLayout)
}

// ExtText names an extended item with its size, as the JSON's ext list and dump's text
// show it: "PROV_TRAITS(12 bytes)".
func ExtText(x etl.ExtItem) string {
	return abi.ExtTypeName(x.Type) + "(" + strconv.Itoa(len(x.Data)) + " bytes)"
}

// appendJSON appends e as one JSON object without reflection (dump -json prints millions);
// the TraceLogging fields, whose values are of any type, go through encoding/json.
func appendJSON(l []byte, e *Event, payload int, when string) []byte {
	num := func(l []byte, key string, v int64) []byte {
		return strconv.AppendInt(append(append(append(l, ",\""...), key...), "\":"...), v, 10)
	}
	str := func(l []byte, key, v string) []byte {
		if v == "" {
			return l
		}
		return appendString(append(append(append(l, ",\""...), key...), "\":"...), v)
	}
	l = strconv.AppendInt(append(l, `{"buffer":`...), int64(e.Buffer), 10)
	if e.Sequence != 0 {
		l = num(l, "sequence", e.Sequence)
	}
	l = num(l, "processor", int64(e.Processor))
	l = num(l, "offset", int64(e.Offset))
	l = str(l, "kind", e.Kind.String())
	l = num(l, "size", int64(e.Size))
	switch e.Kind {
	case etl.KindEventHeader, etl.KindFullHeader, etl.KindInstance:
		l = append(e.Provider.Append(append(l, `,"provider":"`...)), '"') // hex and dashes: nothing to escape
		l = str(l, "providerName", e.ProviderName)
	}
	if e.Kind == etl.KindEventHeader {
		d := e.Event.Descriptor
		l = num(l, "id", int64(d.ID))
		for _, f := range []struct {
			key string
			v   int64
		}{{"version", int64(d.Version)}, {"level", int64(d.Level)}, {"opcode", int64(d.Opcode)}, {"task", int64(d.Task)}} {
			if f.v != 0 {
				l = num(l, f.key, f.v)
			}
		}
		l = append(strconv.AppendUint(append(l, `,"keyword":"0x`...), d.Keyword, 16), '"')
	}
	switch e.Kind {
	case etl.KindSystem, etl.KindCompact, etl.KindPerfInfo:
		l = num(l, "hookId", int64(e.HookID))
		l = str(l, "hookName", e.HookName)
		l = str(l, "detail", e.Detail)
	}
	l = num(l, "threadId", int64(e.ThreadID))
	l = num(l, "processId", int64(e.ProcessID))
	l = num(l, "timeStamp", e.TimeStamp)
	l = str(l, "time", when)
	if e.Kind == etl.KindEventHeader && !e.Event.ActivityID.IsZero() {
		l = str(l, "activityId", e.Event.ActivityID.String())
	}
	if len(e.Ext) > 0 {
		l = append(l, `,"ext":[`...)
		for i, x := range e.Ext {
			if i > 0 {
				l = append(l, ',')
			}
			l = appendString(l, ExtText(x))
		}
		l = append(l, ']')
	}
	if len(e.PMC) > 0 {
		l = append(l, `,"pmc":[`...)
		for i, v := range e.PMC {
			if i > 0 {
				l = append(l, ',')
			}
			l = strconv.AppendUint(l, v, 10)
		}
		l = append(l, ']')
	}
	l = num(l, "payloadBytes", int64(len(e.Payload)))
	if p := e.Payload[:min(len(e.Payload), max(payload, 0))]; len(p) > 0 {
		l = hex.AppendEncode(append(l, `,"payload":"`...), p)
		l = append(l, '"')
	}
	if e.Kind == etl.KindUnknown {
		l = str(l, "marker", fmt.Sprintf("%#08x", e.Marker))
	}
	l = str(l, "event", e.Name)
	if len(e.Fields) > 0 {
		fields := make([]jsonField, len(e.Fields))
		for i, f := range e.Fields {
			fields[i] = jsonField{Name: f.Name, Type: f.In.String(), Value: FieldValue(f)}
			if f.Array {
				fields[i].Type += "[]"
			}
		}
		b, err := json.Marshal(fields)
		if err == nil {
			l = append(append(l, `,"fields":`...), b...)
		} else if e.DecodeError == "" { // never dropped without a word
			l = str(l, "decodeError", "the fields have no JSON form: "+err.Error())
		}
	}
	l = str(l, "decodeError", e.DecodeError)
	return append(l, '}')
}

// jsonField is one TraceLogging field in the event's JSON.
type jsonField struct {
	Name  string `json:"name"`
	Type  string `json:"type"` // the in-type, "[]" after an array's
	Value any    `json:"value"`
}

// FieldValue is a field's value for JSON: numbers, booleans and strings as JSON values (an
// array as a JSON array of them) where the field's types ask for no other reading;
// hexadecimal types, addresses, JSON and XML text, structs, times, GUIDs and binary as
// tracelogging.FormatValue writes them, and so NaN and the infinities, which JSON has no
// numbers for ("NaN", "+Inf", "-Inf").
func FieldValue(f tracelogging.Field) any {
	one := func(v any) any {
		switch x := v.(type) {
		case float32:
			if f64 := float64(x); math.IsNaN(f64) || math.IsInf(f64, 0) {
				return tracelogging.FormatValue(f.In, f.Out, v)
			}
		case float64:
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return tracelogging.FormatValue(f.In, f.Out, v)
			}
		}
		switch v.(type) {
		case string, bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64:
			plain := f.Out == tracelogging.OutDefault || f.Out == tracelogging.OutUTF8 || f.Out == tracelogging.OutBoolean
			if plain && f.In != tracelogging.InHexInt32 && f.In != tracelogging.InHexInt64 {
				return v
			}
		}
		return tracelogging.FormatValue(f.In, f.Out, v)
	}
	if elems, ok := f.Value.([]any); ok && f.Array {
		out := make([]any, len(elems))
		for i, v := range elems {
			out[i] = one(v)
		}
		return out
	}
	return one(f.Value)
}

// appendString appends s as a JSON string: quotes, backslashes and control characters
// escaped, invalid UTF-8 replaced by U+FFFD, as encoding/json writes strings.
func appendString(l []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	l = append(l, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				l = append(l, '\\', c)
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				l = append(l, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			default:
				l = append(l, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			l = append(l, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			l = append(l, '\\', 'u', '2', '0', '2', hexDigits[r&15])
		default:
			l = append(l, s[i:i+n]...)
		}
		i += n
	}
	return append(l, '"')
}
