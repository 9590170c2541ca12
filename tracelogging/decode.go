package tracelogging

import (
	"encoding/binary"
	"fmt"
	"math"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/guid"
)

// Field is one decoded field of an event.
//
// Value's Go type follows the InType: int8 to uint64 for the integers (UInt8 with
// OutType Boolean, and Bool32, as bool), float32 and float64, string for every string
// type, []byte for binary and custom fields, guid.GUID, time.Time (UTC) for FileTime and
// SystemTime, a "S-1-..." string for a SID, uint32 and uint64 for HexInt32 and HexInt64
// (and Pointer, read as 8 bytes: the emulator writes 64-bit events), []Field for a
// struct. An array's Value is a []any of such values.
type Field struct {
	Name  string
	In    InType
	Out   OutType
	Tags  uint32
	Array bool
	Value any
}

// Decode reads the payload of an event written with schema s. It fails, naming the
// field, when the payload ends early or a struct claims more fields than follow it; bytes
// left after the last field are an error too.
func (s *Schema) Decode(payload []byte) ([]Field, error) {
	d := newDecoder(s.Fields, payload)
	var out []Field
	for d.i < len(d.defs) {
		f, err := d.field()
		if err != nil {
			return out, err
		}
		out = append(out, f)
	}
	if d.p != len(d.b) {
		return out, fmt.Errorf("tracelogging: %d payload bytes after the last field", len(d.b)-d.p)
	}
	return out, nil
}

type decoder struct {
	defs   []FieldDef
	i      int // next definition
	b      []byte
	p      int // next payload byte
	values int // values decoded so far, at most budget
	budget int // valueBudget of the payload and the schema
	names  int // bytes of the names of the fields decoded so far, at most nameBudget and 64 a value
	// nameBudget is nameBudget of the payload and the schema.
	nameBudget int
	// ends[i] is the index after definition i and, for a struct, its members; made by
	// the first after, which counts in steps the definitions it visits.
	ends  []int
	steps int
}

// valueBudget bounds the values one event decodes to. Every value but a Null field and a
// struct takes at least a payload byte, but arrays of those take none and nest: a Ccount
// array of 65,535 structs, each a Ccount array of 65,535 Null fields, described 4.3
// billion values in a 120-byte event, and a 1,000-deep chain of one-member structs in an
// array makes every payload byte 1,000 values. So the values are bounded by the event's
// size: four per payload byte and per field definition, and 4,096 more. An event's
// structs nest that deep only if they are built to, and what it decodes stays in
// proportion to the bytes it takes in a file. An element that is an array of no structs
// skips its members' definitions in one step (after), not in a walk of them.
func valueBudget(payload, fields int) int { return 4*payload + 4*fields + 4096 }

// nameBudget bounds the bytes of field names one event decodes to, each Field carrying
// its name, which every text of the event prints: a struct's members are fields of each
// element of an array of the struct, so an array of 60,000 structs of one Null field
// named with 33 KB printed 2 GB from a 128 KB file. The names are bounded by the event's
// size as the values are: sixteen times the payload and the schema's names, 64 KB more,
// and 64 bytes for each value decoded (which valueBudget bounds), so that an array of
// many small structs with everyday names (20,000 elements of one byte named
// "IsHardwareAccelerated") decodes whole.
func nameBudget(payload []byte, defs []FieldDef) int {
	n := 0
	for _, d := range defs {
		n += len(d.Name)
	}
	return 16*(len(payload)+n) + 65536
}

// newDecoder returns a decoder of payload by the field definitions defs.
func newDecoder(defs []FieldDef, payload []byte) decoder {
	return decoder{defs: defs, b: payload, budget: valueBudget(len(payload), len(defs)), nameBudget: nameBudget(payload, defs)}
}

// field decodes the field of definition d.i (and, for a struct, of its members).
func (d *decoder) field() (Field, error) {
	def := d.defs[d.i]
	d.i++
	f := Field{Name: def.Name, In: def.In, Out: def.Out, Tags: def.Tags}
	if d.names += len(def.Name); d.names > d.nameBudget+64*d.values {
		return f, fmt.Errorf("tracelogging: field %s: more than %d bytes of field names in an event of %d payload bytes (the names of a struct's fields, repeated in an array of the struct)", QuoteName(def.Name), d.nameBudget, len(d.b))
	}
	if def.In == InStruct {
		f.Out = OutDefault
	}
	members := d.i
	n := 1
	switch def.Arity {
	case Ccount:
		n = int(def.Count)
		f.Array = true
	case Vcount:
		if len(d.b)-d.p < 2 {
			return f, fmt.Errorf("tracelogging: field %s: no element count", QuoteName(def.Name))
		}
		n = int(binary.LittleEndian.Uint16(d.b[d.p:]))
		d.p += 2
		f.Array = true
	case Custom:
		v, err := d.counted(def.Name)
		f.Value = v
		return f, err
	}
	if !f.Array {
		v, err := d.one(def, members)
		f.Value = v
		return f, err
	}
	elems := make([]any, 0, min(n, 64)) // n is the schema's word, not the payload's
	for e := 0; e < n; e++ {
		v, err := d.one(def, members)
		if err != nil {
			return f, err
		}
		elems = append(elems, v)
	}
	if n == 0 && def.In == InStruct {
		d.i = d.after(members - 1) // no element read the members' definitions
	}
	f.Value = elems
	return f, nil
}

// one decodes one value of definition def, whose struct members (if any) start at
// definition members.
func (d *decoder) one(def FieldDef, members int) (any, error) {
	if d.values++; d.values > d.budget {
		return nil, fmt.Errorf("tracelogging: field %s: more than %d values in an event of %d payload bytes and %d field definitions (arrays of Null fields or of nested structs)", QuoteName(def.Name), d.budget, len(d.b), len(d.defs))
	}
	if def.In == InStruct {
		d.i = members
		return d.structValue(def)
	}
	return d.value(def)
}

// after returns the index of the definition after definition i and, for a struct, its
// members. The first call finds the end of every definition in one pass from the last,
// each struct stepping over its members' ends: at most 128 steps a definition, however
// many times arrays of structs of no elements skip them afterwards.
func (d *decoder) after(i int) int {
	if d.ends == nil {
		d.ends = make([]int, len(d.defs))
		for j := len(d.defs) - 1; j >= 0; j-- {
			end := j + 1
			d.steps++
			if d.defs[j].In == InStruct {
				for m := 0; m < int(d.defs[j].Out) && end < len(d.defs); m++ {
					end = d.ends[end]
					d.steps++
				}
			}
			d.ends[j] = end
		}
	}
	return d.ends[i]
}

// structValue decodes the members of struct definition def, which start at d.i.
func (d *decoder) structValue(def FieldDef) (any, error) {
	members := make([]Field, 0, int(def.Out))
	for m := 0; m < int(def.Out); m++ {
		if d.i >= len(d.defs) {
			return nil, fmt.Errorf("tracelogging: struct %s claims %d fields, the metadata has %d after it", QuoteName(def.Name), def.Out, m)
		}
		f, err := d.field()
		if err != nil {
			return nil, err
		}
		members = append(members, f)
	}
	return members, nil
}

// take returns the next n payload bytes.
func (d *decoder) take(name string, n int) ([]byte, error) {
	if len(d.b)-d.p < n {
		return nil, fmt.Errorf("tracelogging: field %s: %d bytes wanted, %d left", QuoteName(name), n, len(d.b)-d.p)
	}
	b := d.b[d.p : d.p+n]
	d.p += n
	return b, nil
}

// counted returns the bytes of a u16-counted value.
func (d *decoder) counted(name string) ([]byte, error) {
	c, err := d.take(name, 2)
	if err != nil {
		return nil, err
	}
	return d.take(name, int(binary.LittleEndian.Uint16(c)))
}

// fixedSizes are the payload sizes of the fixed-size in-types.
var fixedSizes = [...]int{InInt8: 1, InUInt8: 1, InInt16: 2, InUInt16: 2, InInt32: 4, InUInt32: 4, InInt64: 8, InUInt64: 8,
	InFloat: 4, InDouble: 8, InBool32: 4, InGUID: 16, InPointer: 8, InFileTime: 8, InSystemTime: 16, InHexInt32: 4, InHexInt64: 8}

// value decodes one value of a non-struct definition.
func (d *decoder) value(def FieldDef) (any, error) {
	le := binary.LittleEndian
	switch def.In {
	case InNull:
		return nil, nil
	case InAnsiString:
		s, p, err := cstring(d.b, d.p)
		if err != nil {
			return nil, fmt.Errorf("tracelogging: field %s: string %w", QuoteName(def.Name), err)
		}
		d.p = p
		return s, nil
	case InUnicodeString:
		for q := d.p; q+1 < len(d.b); q += 2 {
			if d.b[q] == 0 && d.b[q+1] == 0 {
				s := utf16String(d.b[d.p:q])
				d.p = q + 2
				return s, nil
			}
		}
		return nil, fmt.Errorf("tracelogging: field %s: UTF-16 string without a NUL", QuoteName(def.Name))
	case InBinary, InCountedBinary:
		b, err := d.counted(def.Name)
		return b, err
	case InCountedString:
		b, err := d.counted(def.Name)
		return utf16String(b), err
	case InCountedAnsiString:
		b, err := d.counted(def.Name)
		return string(b), err
	case InSID:
		head, err := d.take(def.Name, 8)
		if err != nil {
			return nil, err
		}
		subs, err := d.take(def.Name, 4*int(head[1]))
		if err != nil {
			return nil, err
		}
		return sidString(head, subs), nil
	}
	if int(def.In) >= len(fixedSizes) || fixedSizes[def.In] == 0 {
		return nil, fmt.Errorf("tracelogging: field %s: in-type %d is not known", QuoteName(def.Name), def.In)
	}
	b, err := d.take(def.Name, fixedSizes[def.In])
	if err != nil {
		return nil, err
	}
	switch def.In {
	case InInt8:
		return int8(b[0]), nil
	case InUInt8:
		if def.Out == OutBoolean {
			return b[0] != 0, nil
		}
		return b[0], nil
	case InInt16:
		return int16(le.Uint16(b)), nil
	case InUInt16:
		return le.Uint16(b), nil
	case InInt32:
		return int32(le.Uint32(b)), nil
	case InUInt32, InHexInt32:
		return le.Uint32(b), nil
	case InInt64:
		return int64(le.Uint64(b)), nil
	case InUInt64, InHexInt64, InPointer:
		return le.Uint64(b), nil
	case InFloat:
		return math.Float32frombits(le.Uint32(b)), nil
	case InDouble:
		return math.Float64frombits(le.Uint64(b)), nil
	case InBool32:
		return le.Uint32(b) != 0, nil
	case InGUID:
		return guid.FromBytes(b), nil
	case InFileTime:
		return clock.FromFileTime(int64(le.Uint64(b))), nil
	default: // InSystemTime
		w := func(i int) int { return int(le.Uint16(b[2*i:])) }
		return time.Date(w(0), time.Month(w(1)), w(3), w(4), w(5), w(6), w(7)*int(time.Millisecond), time.UTC), nil
	}
}

func utf16String(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

// sidString formats a SID: head is Revision, SubAuthorityCount and the 6-byte
// big-endian IdentifierAuthority; subs the little-endian sub-authorities.
func sidString(head, subs []byte) string {
	var auth uint64
	for _, c := range head[2:8] {
		auth = auth<<8 | uint64(c)
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "S-%d-%d", head[0], auth)
	for i := 0; i+4 <= len(subs); i += 4 {
		fmt.Fprintf(&sb, "-%d", binary.LittleEndian.Uint32(subs[i:]))
	}
	return sb.String()
}
