package tracelogging

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"
)

func TestTags(t *testing.T) {
	for _, c := range []struct {
		tags uint32
		enc  []byte
	}{
		{0, []byte{0}},
		{1 << 21, []byte{1}},
		{1, []byte{0x80, 0x80, 0x80, 1}},
		{0x0FE00000, []byte{0x7F}},
		{MaxTags, []byte{0xFF, 0xFF, 0xFF, 0x7F}},
		{0x0ABCDEF, []byte{0x85, 0xAF, 0x9B, 0x6F}},
	} {
		got := appendTags(nil, c.tags)
		if !bytes.Equal(got, c.enc) {
			t.Errorf("appendTags(%#x) = % x, want % x", c.tags, got, c.enc)
		}
		back, n, err := readTags(got, 0)
		if err != nil || back != c.tags || n != len(got) {
			t.Errorf("readTags(% x) = %#x, %d, %v", got, back, n, err)
		}
	}
	// Real files carry a zero written as two bytes.
	if v, n, err := readTags([]byte{0x80, 0x00}, 0); v != 0 || n != 2 || err != nil {
		t.Errorf("readTags(80 00) = %#x, %d, %v", v, n, err)
	}
	if _, _, err := readTags([]byte{0x80}, 0); err == nil {
		t.Error("readTags accepted tags cut short")
	}
}

func schema(t *testing.T, build func(m *Builder)) Schema {
	t.Helper()
	var m Builder
	m.Event("E", 0)
	build(&m)
	b, err := m.Bytes()
	if err != nil {
		t.Fatal(err)
	}
	s, err := ParseSchema(b)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDecodeKinds(t *testing.T) {
	le := binary.LittleEndian
	s := schema(t, func(m *Builder) {
		m.Field("u", InUnicodeString, OutDefault, 0, Scalar, 0)
		m.Field("cs", InCountedString, OutDefault, 0, Scalar, 0)
		m.Field("cas", InCountedAnsiString, OutDefault, 0, Scalar, 0)
		m.Field("sid", InSID, OutDefault, 0, Scalar, 0)
		m.Field("st", InSystemTime, OutDefault, 0, Scalar, 0)
		m.Field("fixed", InUInt16, OutHex, 0x1234, Ccount, 2)
		m.Field("ip", InUInt32, OutIPv4, 0, Scalar, 0)
		m.Field("b32", InBool32, OutDefault, 0, Scalar, 0)
		m.Struct("none", 1, 0)
		m.Field("inner", InUInt8, OutDefault, 0, Scalar, 0)
	})
	if f := s.Fields[5]; f.Tags != 0x1234 || f.Arity != Ccount || f.Count != 2 || f.Out != OutHex {
		t.Errorf("fixed-count field read back as %+v", f)
	}
	var p []byte
	p = append(p, 'h', 0, 'i', 0, 0, 0)              // UTF-16 "hi"
	p = append(p, 4, 0, 'o', 0, 'k', 0)              // counted UTF-16 "ok"
	p = append(p, 2, 0, 'g', 'o')                    // counted ANSI "go"
	p = append(p, 1, 2, 0, 0, 0, 0, 0, 5)            // S-1-5
	p = le.AppendUint32(le.AppendUint32(p, 32), 544) // -32-544
	for _, w := range []uint16{2024, 2, 4, 29, 13, 14, 15, 500} {
		p = le.AppendUint16(p, w)
	}
	p = le.AppendUint16(le.AppendUint16(p, 0xAB), 0xCD) // no count in the payload
	p = append(p, 192, 168, 0, 1)
	p = le.AppendUint32(p, 7)
	p = append(p, 9)
	fields, err := s.Decode(p)
	if err != nil {
		t.Fatal(err)
	}
	want := `u="hi" cs="ok" cas="go" sid="S-1-5-32-544" st=2024-02-29T13:14:15.5Z fixed=[0xAB 0xCD] ip=192.168.0.1 b32=true none={inner=9}`
	if got := Text(fields); got != want {
		t.Errorf("decoded\n%s\nwant\n%s", got, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	s := schema(t, func(m *Builder) {
		m.Field("a", InUInt32, OutDefault, 0, Scalar, 0)
		m.Field("arr", InUInt8, OutDefault, 0, Vcount, 0)
	})
	for _, c := range []struct {
		payload []byte
		want    string
	}{
		{[]byte{1, 2}, `field "a": 4 bytes wanted, 2 left`},
		{[]byte{1, 2, 3, 4}, `field "arr": no element count`},
		{[]byte{1, 2, 3, 4, 3, 0, 1}, `field "arr": 1 bytes wanted, 0 left`},
		{[]byte{1, 2, 3, 4, 0, 0, 9}, `1 payload bytes after the last field`},
	} {
		if _, err := s.Decode(c.payload); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Decode(% x) = %v, want %q", c.payload, err, c.want)
		}
	}
	bad := schema(t, func(m *Builder) { m.Struct("s", 3, 0); m.Field("x", InUInt8, OutDefault, 0, Scalar, 0) })
	if _, err := bad.Decode([]byte{1}); err == nil || !strings.Contains(err.Error(), `struct "s" claims 3 fields`) {
		t.Errorf("a struct claiming more fields than follow: %v", err)
	}
	for _, b := range [][]byte{nil, {4, 0, 0}, {9, 0, 0, 'E', 0}, {6, 0, 0, 'E', 0, 'f'}, {7, 0, 0, 'E', 0, 'f', 0}} {
		if _, err := ParseSchema(b); err == nil {
			t.Errorf("ParseSchema(% x) accepted a malformed blob", b)
		}
	}
}

// FuzzDecode holds ParseSchema and Decode to never panic, whatever the bytes: the input
// is an event metadata blob, whose own size says where it ends, then the payload.
func FuzzDecode(f *testing.F) {
	var m Builder
	m.Event("E", 5)
	m.Struct("s", 2, 0)
	m.Field("a", InUInt16, OutDefault, 0, Vcount, 0)
	m.Field("b", InAnsiString, OutUTF8, 3, Scalar, 0)
	b, _ := m.Bytes()
	f.Add(append(append([]byte(nil), b...), 1, 0, 7, 0, 'x', 0))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSchema(data)
		if err != nil {
			return
		}
		fields, _ := s.Decode(data[binary.LittleEndian.Uint16(data):])
		_ = Text(fields)
	})
}

// TestDecodeBounded: arrays of values that take no payload (Null fields, structs) nest
// and multiply; what one event decodes is bounded by its payload and its schema, so a
// crafted schema is refused after a number of values in proportion to the event's size,
// and an event built as real providers build them decodes whole.
func TestDecodeBounded(t *testing.T) {
	nulls := schema(t, func(m *Builder) { // 65,535 structs of 65,535 Null fields
		m.Struct("outer", 1, 0)
		m.Field("inner", InNull, OutDefault, 0, Ccount, 0xFFFF)
	})
	nulls.Fields[0].Arity, nulls.Fields[0].Count = Ccount, 0xFFFF
	chain := schema(t, func(m *Builder) { // 65,535 elements of a 1,000-deep chain of structs, a byte at the end
		for range 1000 {
			m.Struct("s", 1, 0)
		}
		m.Field("leaf", InUInt8, OutDefault, 0, Scalar, 0)
	})
	chain.Fields[0].Arity, chain.Fields[0].Count = Ccount, 0xFFFF
	for _, c := range []struct {
		name    string
		s       Schema
		payload []byte
	}{
		{"Null fields", nulls, nil},
		{"a chain of structs", chain, make([]byte, 0xFFFF)},
	} {
		d := newDecoder(c.s.Fields, c.payload)
		var err error
		for d.i < len(d.defs) && err == nil {
			_, err = d.field()
		}
		if err == nil || !strings.Contains(err.Error(), "values in an event of") {
			t.Errorf("%s: %v", c.name, err)
		}
		if d.values > d.budget+1 || d.budget > 4*len(c.payload)+4*len(c.s.Fields)+4096 {
			t.Errorf("%s: %d values decoded, budget %d for %d payload bytes and %d fields", c.name, d.values, d.budget, len(c.payload), len(c.s.Fields))
		}
		if _, err := c.s.Decode(c.payload); err == nil {
			t.Errorf("%s: Decode accepted it", c.name)
		}
	}

	// 16,000 elements of a struct of a struct of a byte and a Null field: four values a
	// payload byte, within the budget.
	nested := schema(t, func(m *Builder) {
		m.Struct("outer", 1, 0)
		m.Struct("inner", 2, 0)
		m.Field("b", InUInt8, OutDefault, 0, Scalar, 0)
		m.Field("none", InNull, OutDefault, 0, Scalar, 0)
	})
	nested.Fields[0].Arity, nested.Fields[0].Count = Ccount, 16000
	payload := make([]byte, 16000)
	for i := range payload {
		payload[i] = byte(i)
	}
	fields, err := nested.Decode(payload)
	if err != nil || len(fields) != 1 {
		t.Fatalf("nested structs: %d fields, %v", len(fields), err)
	}
	elems := fields[0].Value.([]any)
	last := elems[len(elems)-1].([]Field)[0].Value.([]Field)[0].Value
	if len(elems) != 16000 || last != uint8(15999%256) {
		t.Errorf("nested structs: %d elements, the last byte %v", len(elems), last)
	}
}

// TestDecodeNamesBounded: a struct's field names are printed with each element of an
// array of the struct, so the bytes of names one event decodes to are bounded by its
// size too: 60,000 elements of a struct whose one Null field has a 33,000-byte name (2 GB
// of text from a 33 KB schema) are refused, and arrays of structs with everyday names
// decode whole, one of 20,000 single bytes named "IsHardwareAccelerated" too.
func TestDecodeNamesBounded(t *testing.T) {
	long := strings.Repeat("n", 33000)
	amplified := schema(t, func(m *Builder) {
		m.Struct("s", 1, 0)
		m.Field(long, InNull, OutDefault, 0, Scalar, 0)
	})
	amplified.Fields[0].Arity, amplified.Fields[0].Count = Ccount, 60000
	payload := make([]byte, 31000) // the values budget alone lets 128,000 values through
	d := newDecoder(amplified.Fields, payload)
	var err error
	for d.i < len(d.defs) && err == nil {
		_, err = d.field()
	}
	if err == nil || !strings.Contains(err.Error(), "bytes of field names") {
		t.Fatalf("60,000 elements of a 33,000-byte name: %v", err)
	}
	if d.names > d.nameBudget+64*d.values+len(long) || d.nameBudget > 16*(len(payload)+len(long)+1)+65536 {
		t.Errorf("%d bytes of names decoded, budget %d", d.names, d.nameBudget)
	}

	everyday := schema(t, func(m *Builder) { // 5,000 elements of {ProcessId, ThreadId}
		m.Struct("Threads", 2, 0)
		m.Field("ProcessId", InUInt32, OutDefault, 0, Scalar, 0)
		m.Field("ThreadId", InUInt32, OutDefault, 0, Scalar, 0)
	})
	everyday.Fields[0].Arity, everyday.Fields[0].Count = Ccount, 5000
	fields, err := everyday.Decode(make([]byte, 5000*8))
	if err != nil || len(fields) != 1 || len(fields[0].Value.([]any)) != 5000 {
		t.Fatalf("5,000 elements of two fields: %d fields, %v", len(fields), err)
	}
	long1 := schema(t, func(m *Builder) { // 20,000 elements of one byte with a 21-byte name: 420 KB of names from 20 KB
		m.Struct("Devices", 1, 0)
		m.Field("IsHardwareAccelerated", InUInt8, OutDefault, 0, Scalar, 0)
	})
	long1.Fields[0].Arity, long1.Fields[0].Count = Ccount, 20000
	if fields, err := long1.Decode(make([]byte, 20000)); err != nil || len(fields[0].Value.([]any)) != 20000 {
		t.Fatalf("20,000 elements of a one-byte field with a 21-byte name: %v", err)
	}
}

// zeroStructsMeta is an event whose field A is a Ccount array of 65,535 one-member
// structs, the member B a Ccount array of no structs whose member is a depth-deep chain
// of one-member structs ending in a byte: each element of A skips B's member definitions.
func zeroStructsMeta(depth int) []byte {
	b := []byte{0, 0, 0, 'E', 0}
	b = append(b, 'A', 0, byte(InStruct)|flagCcount|chain, 1, 0xFF, 0xFF)
	b = append(b, 'B', 0, byte(InStruct)|flagCcount|chain, 1, 0, 0)
	for range depth {
		b = append(b, 0, byte(InStruct)|chain, 1)
	}
	b = append(b, 0, byte(InUInt8))
	binary.LittleEndian.PutUint16(b, uint16(len(b)))
	return b
}

// TestDecodeZeroCountStructs: skipping the members of an array of no structs costs a
// number of steps in proportion to the schema, not to the schema times the elements that
// skip them, and the event decodes as before.
func TestDecodeZeroCountStructs(t *testing.T) {
	s, err := ParseSchema(zeroStructsMeta(21000))
	if err != nil {
		t.Fatal(err)
	}
	d := newDecoder(s.Fields, nil)
	var fields []Field
	for d.i < len(d.defs) && err == nil {
		var f Field
		f, err = d.field()
		fields = append(fields, f)
	}
	if err != nil || len(fields) != 1 {
		t.Fatalf("%d fields, %v", len(fields), err)
	}
	if max := 128 * len(d.defs); d.steps > max {
		t.Errorf("%d steps over %d definitions to skip members, more than %d", d.steps, len(d.defs), max)
	}
	elems := fields[0].Value.([]any)
	b := elems[len(elems)-1].([]Field)[0]
	if len(elems) != 0xFFFF || b.Name != "B" || !b.Array || len(b.Value.([]any)) != 0 {
		t.Errorf("%d elements, the last %+v", len(elems), b)
	}
	if got, err := s.Decode(nil); err != nil || len(got) != 1 {
		t.Errorf("Decode: %d fields, %v", len(got), err)
	}
}

// TestBuilderRefuses: what the metadata cannot say, or what ParseSchema would not read
// back as written, is Bytes' error rather than a blob: a custom field without its schema,
// an InType over 5 bits, an Arity none of the four, a field before the event.
func TestBuilderRefuses(t *testing.T) {
	for _, c := range []struct {
		what  string
		build func(m *Builder)
		want  string
	}{
		{"a custom field through Field", func(m *Builder) {
			m.Event("E", 0)
			m.Field("c", InBinary, OutDefault, 0, Custom, 0)
		}, `field "c": a custom field carries its schema`},
		{"InType 33", func(m *Builder) {
			m.Event("E", 0)
			m.Field("i", InType(33), OutDefault, 0, Scalar, 0)
		}, `field "i": InType 33 does not fit its 5 bits`},
		{"Arity 7", func(m *Builder) {
			m.Event("E", 0)
			m.Field("a", InUInt8, OutDefault, 0, Arity(7), 0)
		}, `field "a": Arity 7 is none of`},
		{"a field on a zero Builder", func(m *Builder) {
			m.Field("f", InUInt8, OutDefault, 0, Scalar, 0)
		}, `field "f" before Event`},
		{"a field after Reset", func(m *Builder) {
			m.Event("E", 0)
			m.Reset()
			m.Field("f", InUInt8, OutDefault, 0, Scalar, 0)
		}, `field "f" before Event`},
		{"a custom schema over 64 KB", func(m *Builder) {
			m.Event("E", 0)
			m.CustomField("c", InBinary, OutDefault, 0, make([]byte, 0x10000))
		}, `a schema of 65536 bytes`},
	} {
		var m Builder
		c.build(&m)
		if b, err := m.Bytes(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: % x, %v, want %q", c.what, b, err, c.want)
		}
	}
}

// TestCustomField: a custom field's schema is in the metadata and reads back; its value
// is a u16-counted run of bytes.
func TestCustomField(t *testing.T) {
	s := schema(t, func(m *Builder) {
		m.CustomField("c", InBinary, OutDefault, 0x5, []byte{1, 2, 3})
		m.Field("after", InUInt8, OutDefault, 0, Scalar, 0)
	})
	if len(s.Fields) != 2 || s.Fields[0].Arity != Custom || !bytes.Equal(s.Fields[0].Schema, []byte{1, 2, 3}) || s.Fields[0].Tags != 5 {
		t.Fatalf("read back as %+v", s.Fields)
	}
	fields, err := s.Decode([]byte{2, 0, 0xAB, 0xCD, 9})
	if err != nil || Text(fields) != "c=0xABCD after=9" {
		t.Errorf("decoded %s, %v", Text(fields), err)
	}
}

// TestQuoteName: names up to 64 bytes are quoted whole; longer ones by their first 64
// bytes, cut where a character starts, and their length.
func TestQuoteName(t *testing.T) {
	for _, c := range []struct{ name, want string }{
		{"E", `"E"`},
		{"a\x00b", `"a\x00b"`},
		{strings.Repeat("n", 64), `"` + strings.Repeat("n", 64) + `"`},
		{strings.Repeat("n", 70000), `"` + strings.Repeat("n", 64) + `"… (70000 bytes)`},
		{"a" + strings.Repeat("é", 40), `"a` + strings.Repeat("é", 31) + `"… (81 bytes)`},
	} {
		if got := QuoteName(c.name); got != c.want {
			t.Errorf("QuoteName of %d bytes: %s, want %s", len(c.name), got, c.want)
		}
	}
	var m Builder
	m.Event("E", 0)
	m.Field(strings.Repeat("f", 70000)+"\x00", InUInt8, OutDefault, 0, Scalar, 0)
	if _, err := m.Bytes(); err == nil || len(err.Error()) > 200 || !strings.Contains(err.Error(), "(70001 bytes) holds a NUL at byte 70000") {
		t.Errorf("a long field name with a NUL: %.300v", err)
	}
}
