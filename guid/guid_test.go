package guid

import (
	"crypto/sha1"
	"strings"
	"testing"
	"unicode/utf16"
)

func TestParseStringRoundTrip(t *testing.T) {
	for _, s := range []string{
		"9e814aad-3204-11d2-9a82-006008a86939",
		"{9E814AAD-3204-11D2-9A82-006008A86939}",
		"00000000-0000-0000-0000-000000000000",
	} {
		g, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		back, err := Parse(g.String())
		if err != nil || back != g {
			t.Fatalf("round trip of %q gave %v, %v", s, back, err)
		}
	}
	g := MustParse("9e814aad-3204-11d2-9a82-006008a86939")
	if g.Data1 != 0x9e814aad || g.Data2 != 0x3204 || g.Data3 != 0x11d2 || g.Data4 != [8]byte{0x9a, 0x82, 0, 0x60, 0x08, 0xa8, 0x69, 0x39} {
		t.Fatalf("fields wrong: %+v", g)
	}
}

func TestParseRejects(t *testing.T) {
	for _, s := range []string{"", "9e814aad-3204-11d2-9a82-006008a8693", "9e814aad_3204-11d2-9a82-006008a86939", "9e814aad-3204-11d2-9a82-006008a8693g"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted a malformed GUID", s)
		}
	}
}

func TestWindowsByteOrder(t *testing.T) {
	g := MustParse("01020304-0506-0708-090a-0b0c0d0e0f10")
	b := g.Bytes()
	want := [16]byte{4, 3, 2, 1, 6, 5, 8, 7, 9, 10, 11, 12, 13, 14, 15, 16}
	if b != want {
		t.Fatalf("Bytes() = %x, want %x", b, want)
	}
	if FromBytes(b[:]) != g {
		t.Fatal("FromBytes did not invert Bytes")
	}
	w := g.Words()
	if w != [4]uint32{0x01020304, 0x07080506, 0x0c0b0a09, 0x100f0e0d} {
		t.Fatalf("Words() = %x", w)
	}
}

// Test vectors are the ones go-winio's provider tests use for EventSource name hashing.
func TestFromName(t *testing.T) {
	for name, want := range map[string]string{
		"wincni":                          "c822b598-f4cc-5a72-7933-ce2a816d033f",
		"Moby":                            "6996f090-c5de-5082-a81e-5841acc3a635",
		"ContainerD":                      "2acb92c0-eb9b-571a-69cf-8f3410f383ad",
		"Microsoft.Virtualization.RunHCS": "0b52781f-b24d-5685-ddf6-69830ed40ec3",
	} {
		if got := FromName(name).String(); got != want {
			t.Errorf("FromName(%q) = %s, want %s", name, got, want)
		}
	}
}

// FromName hashes what the straightforward reading of the rule hashes, for every ASCII
// byte, for names longer than its buffer on the stack, and for names beyond ASCII:
// letters that change length when upper-cased, characters outside the Basic
// Multilingual Plane (two UTF-16 units), bytes that are not UTF-8, and a name that turns
// non-ASCII after an ASCII start.
func TestFromNameBeyondASCII(t *testing.T) {
	reference := func(name string) GUID {
		h := sha1.New()
		nb := eventSourceNamespace.ToArray()
		h.Write(nb[:])
		for _, u := range utf16.Encode([]rune(strings.ToUpper(name))) {
			h.Write([]byte{byte(u >> 8), byte(u)})
		}
		sum := h.Sum(nil)
		sum[7] = sum[7]&0x0F | 0x50
		return FromBytes(sum[:16])
	}
	ascii := make([]byte, 128) // every ASCII byte, the letters' neighbours '@', '[', '`' and '{' among them
	for i := range ascii {
		ascii[i] = byte(i)
	}
	for _, name := range []string{"", "a", "straße", "ǆemal", "Ⱥb", "provider-😀-x", "\xff\xfeok", "日本語のプロバイダー",
		string(ascii), "ascii-first-then-straße", strings.Repeat("Long.Provider.Name.", 8)} {
		if got, want := FromName(name), reference(name); got != want {
			t.Errorf("FromName(%q) = %v, want %v", name, got, want)
		}
	}
}

// Append appends what String returns, after what dst holds.
func TestAppend(t *testing.T) {
	g := MustParse("0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9")
	if got := string(g.Append([]byte("id="))); got != "id=0a1b2c3d-4e5f-6071-8293-a4b5c6d7e8f9" || g.String() != got[3:] {
		t.Fatalf("Append gave %q, String %q", got, g.String())
	}
}

// Braces come in pairs, and an error quotes at most 64 bytes of the input however long
// it is.
func TestParseBracesAndLongInput(t *testing.T) {
	for _, s := range []string{"{9e814aad-3204-11d2-9a82-006008a86939", "9e814aad-3204-11d2-9a82-006008a86939}"} {
		if _, err := Parse(s); err == nil || !strings.Contains(err.Error(), "brace") {
			t.Errorf("%s: %v, want a brace refused", s, err)
		}
	}
	if _, err := Parse(strings.Repeat("x", 1<<20)); err == nil || len(err.Error()) > 200 {
		t.Errorf("a 1 MiB string: an error of %d bytes", len(err.Error()))
	}
}
