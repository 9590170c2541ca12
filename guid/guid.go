// Package guid is the Windows GUID as ETW uses it: provider ids, session ids, activity ids.
//
// A GUID is kept as its four Windows fields. Bytes and FromBytes use the Windows memory
// order (Data1, Data2 and Data3 little-endian, Data4 as is), which is the order in which a
// GUID appears in trace buffers and ETL files.
//
// The package also has the whole API of go-winio's pkg/guid
// (github.com/Microsoft/go-winio/pkg/guid): FromString, FromArray and ToArray (big-endian),
// FromWindowsArray and ToWindowsArray, NewV4, NewV5, Variant and Version, and text
// marshalling, so code written for it compiles with its import path changed.
package guid

import (
	"crypto/rand"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/etwemu/etwemu/internal/quote"
)

// GUID is a Windows GUID.
type GUID struct {
	Data1 uint32
	Data2 uint16
	Data3 uint16
	Data4 [8]byte
}

// Null is GUID_NULL.
var Null GUID

// IsZero reports whether g is GUID_NULL.
func (g GUID) IsZero() bool { return g == Null }

// String formats g as xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx in lower case.
func (g GUID) String() string {
	var b [36]byte
	return string(g.Append(b[:0]))
}

// Append appends g to dst as String formats it, for writers of many GUIDs (a dump's
// records) that need no string of each.
func (g GUID) Append(dst []byte) []byte {
	var b [36]byte
	raw := g.ToArray()
	hex.Encode(b[0:8], raw[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], raw[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], raw[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], raw[8:10])
	b[23] = '-'
	hex.Encode(b[24:], raw[10:])
	return append(dst, b[:]...)
}

// Parse reads a GUID in the 8-4-4-4-12 form, with or without braces.
func Parse(s string) (GUID, error) {
	t := strings.TrimSpace(s)
	if strings.HasPrefix(t, "{") != strings.HasSuffix(t, "}") {
		return Null, fmt.Errorf("guid: %s has one brace without the other", quote.Short(s))
	}
	t = strings.TrimSuffix(strings.TrimPrefix(t, "{"), "}")
	if len(t) != 36 || t[8] != '-' || t[13] != '-' || t[18] != '-' || t[23] != '-' {
		return Null, fmt.Errorf("guid: %s is not of the form xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", quote.Short(s))
	}
	hex := t[0:8] + t[9:13] + t[14:18] + t[19:23] + t[24:36]
	var raw [16]byte
	for i := range raw {
		hi, ok1 := nibble(hex[2*i])
		lo, ok2 := nibble(hex[2*i+1])
		if !ok1 || !ok2 {
			return Null, fmt.Errorf("guid: %s has a character that is not hexadecimal", quote.Short(s))
		}
		raw[i] = hi<<4 | lo
	}
	var g GUID
	g.Data1 = binary.BigEndian.Uint32(raw[0:4])
	g.Data2 = binary.BigEndian.Uint16(raw[4:6])
	g.Data3 = binary.BigEndian.Uint16(raw[6:8])
	copy(g.Data4[:], raw[8:])
	return g, nil
}

// MustParse is Parse for constants in code; it panics on a malformed string.
func MustParse(s string) GUID {
	g, err := Parse(s)
	if err != nil {
		panic(err)
	}
	return g
}

func nibble(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// Bytes returns g in Windows memory order.
func (g GUID) Bytes() [16]byte {
	var b [16]byte
	g.Put(b[:])
	return b
}

// Put writes g in Windows memory order into the first 16 bytes of b.
func (g GUID) Put(b []byte) {
	_ = b[15]
	binary.LittleEndian.PutUint32(b[0:], g.Data1)
	binary.LittleEndian.PutUint16(b[4:], g.Data2)
	binary.LittleEndian.PutUint16(b[6:], g.Data3)
	copy(b[8:16], g.Data4[:])
}

// FromBytes reads a GUID stored in Windows memory order.
func FromBytes(b []byte) GUID {
	_ = b[15]
	var g GUID
	g.Data1 = binary.LittleEndian.Uint32(b[0:])
	g.Data2 = binary.LittleEndian.Uint16(b[4:])
	g.Data3 = binary.LittleEndian.Uint16(b[6:])
	copy(g.Data4[:], b[8:16])
	return g
}

// Words returns the GUID's 16 bytes, in Windows memory order, read as four
// little-endian 32-bit words. The kernel's GUID hash is the XOR of these words.
func (g GUID) Words() [4]uint32 {
	return [4]uint32{
		g.Data1,
		uint32(g.Data2) | uint32(g.Data3)<<16,
		binary.LittleEndian.Uint32(g.Data4[0:4]),
		binary.LittleEndian.Uint32(g.Data4[4:8]),
	}
}

// MarshalText implements encoding.TextMarshaler.
func (g GUID) MarshalText() ([]byte, error) { return []byte(g.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (g *GUID) UnmarshalText(b []byte) error {
	p, err := Parse(string(b))
	if err != nil {
		return err
	}
	*g = p
	return nil
}

// eventSourceNamespace is the namespace GUID that EventSource and TraceLogging use to
// turn a provider name into a provider GUID.
var eventSourceNamespace = GUID{0x482C2DB2, 0xC390, 0x47C8, [8]byte{0x87, 0xF8, 0x1A, 0x15, 0xBF, 0xC1, 0x30, 0xFB}}

// FromName derives a provider GUID from a provider name the way EventSource and
// TraceLogging do (and go-winio's etw.NewProvider): SHA-1 over the namespace GUID in
// big-endian order followed by the upper-cased name in UTF-16 big-endian, the first 16
// bytes read as a big-endian GUID with the version nibble set to 5.
// The hashed bytes are built in one slice and hashed in one call: a session start
// derives its session's GUID so, and a write of two bytes at a time to the hash was most
// of its cost. An ASCII name is upper-cased as it is copied, a byte at a time; only a
// name with other characters goes through strings.ToUpper and UTF-16.
func FromName(name string) GUID {
	nb := eventSourceNamespace.ToArray()
	var room [len(nb) + 2*48]byte // a name of up to 48 ASCII characters hashes without an allocation
	b := append(room[:0], nb[:]...)
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c >= utf8.RuneSelf {
			b = appendUpperUTF16(b[:len(nb)], name)
			break
		}
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		b = append(b, 0, c)
	}
	sum := sha1.Sum(b)
	sum[7] = sum[7]&0x0F | 0x50
	// The hash bytes are taken in Windows memory order (little-endian fields).
	return FromBytes(sum[:16])
}

// appendUpperUTF16 appends name, upper-cased, to b in UTF-16 big-endian units.
func appendUpperUTF16(b []byte, name string) []byte {
	var units [2]uint16
	for _, r := range strings.ToUpper(name) { // an invalid byte is U+FFFD, as []rune makes it
		for _, u := range utf16.AppendRune(units[:0], r) {
			b = append(b, byte(u>>8), byte(u))
		}
	}
	return b
}

// The rest of this file is go-winio's pkg/guid API (github.com/Microsoft/go-winio/pkg/guid),
// so that code written against it compiles with its import path changed.

// Variant is a GUID's variant (RFC 4122, section 4.1.1): how the rest of its bits read.
type Variant uint8

// The variants of RFC 4122, section 4.1.1.
const (
	VariantUnknown   Variant = iota // not one of the encodings RFC 4122 names
	VariantNCS                      // reserved, NCS backward compatibility
	VariantRFC4122                  // RFC 4122
	VariantMicrosoft                // reserved, Microsoft backward compatibility
	VariantFuture                   // reserved for future definition
)

var variantNames = [...]string{"Unknown", "NCS", "RFC 4122", "Microsoft", "Future"}

// String names the variant as go-winio does ("RFC 4122", ...).
func (v Variant) String() string {
	if int(v) < len(variantNames) {
		return variantNames[v]
	}
	return fmt.Sprintf("Variant(%d)", uint8(v))
}

// Version is a GUID's version (RFC 4122, section 4.1.3): 4 random, 5 from a SHA-1 name
// hash, and so on.
type Version uint8

// String is the version in decimal.
func (v Version) String() string { return strconv.FormatUint(uint64(v), 10) }

// NewV4 returns a random (version 4, RFC 4122 variant) GUID, from crypto/rand.
func NewV4() (GUID, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return Null, fmt.Errorf("guid: NewV4: %w", err)
	}
	g := FromArray(b)
	g.setVersion(4)
	g.setVariant(VariantRFC4122)
	return g, nil
}

// NewV5 returns the version 5 GUID of name in namespace (RFC 4122, section 4.3): SHA-1
// over the namespace in big-endian order and the name's bytes as given. FromName is the
// EventSource form, which hashes the upper-cased name in UTF-16 big-endian and reads the
// hash in Windows order.
func NewV5(namespace GUID, name []byte) (GUID, error) {
	h := sha1.New()
	ns := namespace.ToArray()
	h.Write(ns[:])
	h.Write(name)
	var a [16]byte
	copy(a[:], h.Sum(nil))
	g := FromArray(a)
	g.setVersion(5)
	g.setVariant(VariantRFC4122)
	return g, nil
}

// FromArray reads a GUID from its big-endian (RFC 4122) encoding.
func FromArray(b [16]byte) GUID {
	var g GUID
	g.Data1 = binary.BigEndian.Uint32(b[0:4])
	g.Data2 = binary.BigEndian.Uint16(b[4:6])
	g.Data3 = binary.BigEndian.Uint16(b[6:8])
	copy(g.Data4[:], b[8:16])
	return g
}

// ToArray returns g's big-endian (RFC 4122) encoding.
func (g GUID) ToArray() [16]byte {
	var b [16]byte
	binary.BigEndian.PutUint32(b[0:4], g.Data1)
	binary.BigEndian.PutUint16(b[4:6], g.Data2)
	binary.BigEndian.PutUint16(b[6:8], g.Data3)
	copy(b[8:16], g.Data4[:])
	return b
}

// FromWindowsArray reads a GUID from its Windows (memory order) encoding: FromBytes for
// an array.
func FromWindowsArray(b [16]byte) GUID { return FromBytes(b[:]) }

// ToWindowsArray returns g's Windows (memory order) encoding: Bytes.
func (g GUID) ToWindowsArray() [16]byte { return g.Bytes() }

// FromString reads a GUID in the xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx form only, as
// go-winio does (Parse also takes braces and surrounding space).
func FromString(s string) (GUID, error) {
	if len(s) != 36 {
		return Null, fmt.Errorf("guid: invalid GUID %s: want xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx", quote.Short(s))
	}
	return Parse(s)
}

// Variant returns g's variant, from the high bits of Data4[0].
func (g GUID) Variant() Variant {
	b := g.Data4[0]
	switch {
	case b&0x80 == 0:
		return VariantNCS
	case b&0xc0 == 0x80:
		return VariantRFC4122
	case b&0xe0 == 0xc0:
		return VariantMicrosoft
	case b&0xe0 == 0xe0:
		return VariantFuture
	}
	return VariantUnknown
}

// setVariant writes v into the high bits of Data4[0]; VariantUnknown, which has no
// encoding, leaves g as it is.
func (g *GUID) setVariant(v Variant) {
	d := g.Data4[0]
	switch v {
	case VariantNCS:
		d &= 0x7f
	case VariantRFC4122:
		d = d&0x3f | 0x80
	case VariantMicrosoft:
		d = d&0x1f | 0xc0
	case VariantFuture:
		d = d&0x0f | 0xe0
	}
	g.Data4[0] = d
}

// Version returns g's version, the high nibble of Data3.
func (g GUID) Version() Version { return Version(g.Data3 >> 12) }

func (g *GUID) setVersion(v Version) { g.Data3 = g.Data3&0x0fff | uint16(v&0xf)<<12 }
