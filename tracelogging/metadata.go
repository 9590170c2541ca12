package tracelogging

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"

	"github.com/etwemu/etwemu/internal/quote"
)

// Builder writes an event metadata blob (the EVENT_SCHEMA_TL item): Event once, then a
// Field or Struct per field in payload order. The zero Builder is ready; Reset makes it
// ready for another event and keeps its memory. What the blob cannot say (a name with a
// NUL, which ends it; a struct of more than 127 fields; an InType over 5 bits or an
// OutType over 7; an Arity that is none of the four; a field before Event) is Bytes'
// error.
type Builder struct {
	b   []byte
	err error // the first thing the blob cannot say, since Event or Reset
}

// QuoteName quotes an event or field name for a message as %q does, cut after its first
// 64 bytes (at the start of a character) with "… (N bytes)" after the quote when it is
// longer: a name can fill most of 64 KB of metadata.
func QuoteName(s string) string { return quote.Short(s) }

// Reset empties the builder.
func (m *Builder) Reset() { m.b, m.err = m.b[:0], nil }

// name appends a NUL-terminated name, noting the error of one that holds a NUL.
func (m *Builder) name(what, s string) {
	if i := strings.IndexByte(s, 0); i >= 0 && m.err == nil {
		m.err = fmt.Errorf("tracelogging: %s name %s holds a NUL at byte %d, where the metadata would end it", what, QuoteName(s), i)
	}
	m.b = append(append(m.b, s...), 0)
}

// Event starts the blob: the size placeholder, the event's tags and its name.
func (m *Builder) Event(name string, tags uint32) {
	m.b, m.err = append(m.b[:0], 0, 0), nil
	m.b = appendTags(m.b, tags)
	m.name("event", name)
}

// Field adds a field: a scalar, or an array of in whose count is in the payload (Vcount)
// or fixed here (Ccount, count elements). The OutType and tags are written only when
// they are not the defaults, as TraceLoggingProvider.h does. A custom field, whose
// schema the metadata carries, is CustomField's: Field with Arity Custom is Bytes' error.
func (m *Builder) Field(name string, in InType, out OutType, tags uint32, arity Arity, count uint16) {
	if arity == Custom {
		m.fail("tracelogging: field %s: a custom field carries its schema: add it with CustomField", QuoteName(name))
	} else if arity > Custom {
		m.fail("tracelogging: field %s: Arity %d is none of Scalar, Ccount, Vcount and Custom", QuoteName(name), arity)
	}
	m.field(name, in, out, tags, arity)
	if arity == Ccount {
		m.b = binary.LittleEndian.AppendUint16(m.b, count)
	}
}

// CustomField adds a custom-schema field (Arity Custom): schema is the field's schema,
// which the metadata carries after a u16 size; its values in the payload are a u16 size
// and that many bytes. A schema over 65,535 bytes is Bytes' error.
func (m *Builder) CustomField(name string, in InType, out OutType, tags uint32, schema []byte) {
	if len(schema) > 0xFFFF {
		m.fail("tracelogging: custom field %s: a schema of %d bytes is over the 65535 its u16 size counts", QuoteName(name), len(schema))
	}
	m.field(name, in, out, tags, Custom)
	m.b = binary.LittleEndian.AppendUint16(m.b, uint16(len(schema)))
	m.b = append(m.b, schema...)
}

// fail notes the first thing the blob cannot say.
func (m *Builder) fail(format string, args ...any) {
	if m.err == nil {
		m.err = fmt.Errorf(format, args...)
	}
}

// field writes a field's name, InMeta and, when they are not the defaults, its OutMeta
// and tags.
func (m *Builder) field(name string, in InType, out OutType, tags uint32, arity Arity) {
	if len(m.b) == 0 {
		m.fail("tracelogging: field %s before Event: the metadata starts with the event", QuoteName(name))
	}
	m.name("field", name)
	if in > inTypeMask {
		m.fail("tracelogging: field %s: InType %d does not fit its 5 bits", QuoteName(name), in)
	}
	if out > 0x7F {
		m.fail("tracelogging: field %s: OutType %d does not fit its 7 bits", QuoteName(name), out)
	}
	meta := byte(in)&inTypeMask | byte(arity&3)<<5
	switch {
	case out == OutDefault && tags == 0:
		m.b = append(m.b, meta)
	case tags == 0:
		m.b = append(m.b, meta|chain, byte(out)&0x7F)
	default:
		m.b = append(m.b, meta|chain, byte(out)&0x7F|chain)
		m.b = appendTags(m.b, tags)
	}
}

// Struct adds a struct field whose members are the next fields fields added: at most
// MaxStructFields, which its OutType's 7 bits count.
func (m *Builder) Struct(name string, fields int, tags uint32) {
	if (fields < 0 || fields > MaxStructFields) && m.err == nil {
		m.err = fmt.Errorf("tracelogging: struct %s has %d fields: a struct holds at most %d (its OutType's 7 bits count them)", QuoteName(name), fields, MaxStructFields)
	}
	m.Field(name, InStruct, OutType(min(max(fields, 0), MaxStructFields)), tags, Scalar, 0)
}

// MaxStructFields is the most fields a struct holds.
const MaxStructFields = 0x7F

// Bytes returns the blob with its size filled in. It stays valid until the next Event
// or Reset. A blob over 64 KB cannot be described (the size is a u16): Bytes reports it
// as an error.
func (m *Builder) Bytes() ([]byte, error) {
	if len(m.b) < 2 {
		return nil, errors.New("tracelogging: event metadata without an event")
	}
	if m.err != nil {
		return nil, m.err
	}
	if len(m.b) > 0xFFFF {
		return nil, fmt.Errorf("tracelogging: event metadata of %d bytes is over 65535", len(m.b))
	}
	binary.LittleEndian.PutUint16(m.b, uint16(len(m.b)))
	return m.b, nil
}

// appendTags writes a 28-bit tags value 7 bits a byte, most significant group first, the
// high bit of each byte but the last set; 0 is one 0 byte.
func appendTags(b []byte, tags uint32) []byte {
	tags &= MaxTags
	for {
		v := byte(tags >> 21)
		if tags&0x1FFFFF == 0 {
			return append(b, v&0x7F)
		}
		b = append(b, v|0x80)
		tags <<= 7
	}
}

// readTags reads tags written by appendTags, looping on the high bit as long as it is
// set (real files carry a zero written as two bytes, 0x80 0x00).
func readTags(b []byte, p int) (uint32, int, error) {
	var tags uint32
	for shift := 21; ; shift -= 7 {
		if p >= len(b) {
			return 0, 0, errors.New("tags run past the metadata")
		}
		c := b[p]
		p++
		if shift >= 0 {
			tags |= uint32(c&0x7F) << shift
		}
		if c&0x80 == 0 {
			return tags, p, nil
		}
	}
}

// FieldDef is one field of an event schema.
type FieldDef struct {
	Name  string
	In    InType
	Out   OutType // for a struct, the number of member fields
	Tags  uint32
	Arity Arity
	Count uint16 // the element count of a Ccount array
	// Schema is a custom field's schema bytes.
	Schema []byte
}

// Schema is a decoded event metadata blob.
type Schema struct {
	Name   string
	Tags   uint32
	Fields []FieldDef
}

// ParseSchema decodes an event metadata blob.
func ParseSchema(b []byte) (Schema, error) {
	var s Schema
	if len(b) < 4 {
		return s, fmt.Errorf("tracelogging: event metadata of %d bytes (at least 4)", len(b))
	}
	size := int(binary.LittleEndian.Uint16(b))
	if size < 4 || size > len(b) {
		return s, fmt.Errorf("tracelogging: event metadata size %d, blob %d bytes", size, len(b))
	}
	b = b[:size]
	tags, p, err := readTags(b, 2)
	if err != nil {
		return s, fmt.Errorf("tracelogging: event tags: %w", err)
	}
	s.Tags = tags
	if s.Name, p, err = cstring(b, p); err != nil {
		return s, fmt.Errorf("tracelogging: event name: %w", err)
	}
	for p < size {
		var f FieldDef
		at := p
		if f.Name, p, err = cstring(b, p); err != nil {
			return s, fmt.Errorf("tracelogging: field at %d: %w", at, err)
		}
		if p >= size {
			return s, fmt.Errorf("tracelogging: field %s at %d: no InMeta", QuoteName(f.Name), at)
		}
		in := b[p]
		p++
		f.In = InType(in & inTypeMask)
		f.Arity = Arity((in & countMask) >> 5)
		if in&chain != 0 {
			if p >= size {
				return s, fmt.Errorf("tracelogging: field %s at %d: no OutMeta", QuoteName(f.Name), at)
			}
			out := b[p]
			p++
			f.Out = OutType(out & 0x7F)
			if out&chain != 0 {
				if f.Tags, p, err = readTags(b, p); err != nil {
					return s, fmt.Errorf("tracelogging: field %s tags: %w", QuoteName(f.Name), err)
				}
			}
		}
		switch f.Arity {
		case Ccount:
			if size-p < 2 {
				return s, fmt.Errorf("tracelogging: field %s at %d: no count", QuoteName(f.Name), at)
			}
			f.Count = binary.LittleEndian.Uint16(b[p:])
			p += 2
		case Custom:
			if size-p < 2 {
				return s, fmt.Errorf("tracelogging: field %s at %d: no schema size", QuoteName(f.Name), at)
			}
			n := int(binary.LittleEndian.Uint16(b[p:]))
			p += 2
			if size-p < n {
				return s, fmt.Errorf("tracelogging: field %s at %d: schema of %d bytes runs past the metadata", QuoteName(f.Name), at, n)
			}
			f.Schema = b[p : p+n]
			p += n
		}
		s.Fields = append(s.Fields, f)
	}
	return s, nil
}

// cstring reads a NUL-terminated string at p and returns it and the offset after the NUL.
func cstring(b []byte, p int) (string, int, error) {
	for i := p; i < len(b); i++ {
		if b[i] == 0 {
			return string(b[p:i]), i + 1, nil
		}
	}
	return "", 0, errors.New("no NUL before the end")
}
