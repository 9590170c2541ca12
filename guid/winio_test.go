package guid

import (
	"encoding/json"
	"testing"
)

// The vectors in this file are go-winio's pkg/guid test data.

func mustFromString(t *testing.T, s string) GUID {
	t.Helper()
	g, err := FromString(s)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestVariant(t *testing.T) {
	for s, want := range map[string]Variant{
		"f5cbc1a9-4cba-45a0-0fdd-b6761fc7dcc0": VariantNCS,
		"f5cbc1a9-4cba-45a0-7fdd-b6761fc7dcc0": VariantNCS,
		"f5cbc1a9-4cba-45a0-bfdd-b6761fc7dcc0": VariantRFC4122,
		"f5cbc1a9-4cba-45a0-9fdd-b6761fc7dcc0": VariantRFC4122,
		"f5cbc1a9-4cba-45a0-cfdd-b6761fc7dcc0": VariantMicrosoft,
		"f5cbc1a9-4cba-45a0-dfdd-b6761fc7dcc0": VariantMicrosoft,
		"f5cbc1a9-4cba-45a0-efdd-b6761fc7dcc0": VariantFuture,
		"f5cbc1a9-4cba-45a0-ffdd-b6761fc7dcc0": VariantFuture,
	} {
		if got := mustFromString(t, s).Variant(); got != want {
			t.Errorf("%s: Variant() = %v, want %v", s, got, want)
		}
	}
	g := mustFromString(t, "f5cbc1a9-4cba-45a0-bfdd-b6761fc7dcc0")
	for _, v := range []Variant{VariantNCS, VariantRFC4122, VariantMicrosoft, VariantFuture} {
		g.setVariant(v)
		if g.Variant() != v {
			t.Errorf("setVariant(%v) then Variant() = %v", v, g.Variant())
		}
	}
	before := g
	g.setVariant(VariantUnknown)
	if g != before {
		t.Errorf("setVariant(VariantUnknown) changed %v to %v", before, g)
	}
	if VariantRFC4122.String() != "RFC 4122" || Variant(9).String() != "Variant(9)" {
		t.Errorf("Variant names: %q, %q", VariantRFC4122, Variant(9))
	}
}

func TestVersion(t *testing.T) {
	for s, want := range map[string]Version{
		"f5cbc1a9-4cba-15a0-0fdd-b6761fc7dcc0": 1,
		"f5cbc1a9-4cba-25a0-0fdd-b6761fc7dcc0": 2,
		"f5cbc1a9-4cba-35a0-0fdd-b6761fc7dcc0": 3,
		"f5cbc1a9-4cba-45a0-0fdd-b6761fc7dcc0": 4,
		"f5cbc1a9-4cba-55a0-0fdd-b6761fc7dcc0": 5,
	} {
		if got := mustFromString(t, s).Version(); got != want {
			t.Errorf("%s: Version() = %v, want %v", s, got, want)
		}
	}
	g := mustFromString(t, "f5cbc1a9-4cba-45a0-bfdd-b6761fc7dcc0")
	for v := Version(0); v < 16; v++ {
		g.setVersion(v)
		if g.Version() != v || g.Data3&0x0fff != 0x5a0 {
			t.Errorf("setVersion(%d) gave %v", v, g)
		}
	}
}

func TestNewV4(t *testing.T) {
	a, err := NewV4()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewV4()
	if err != nil {
		t.Fatal(err)
	}
	if a == b {
		t.Fatalf("two NewV4 GUIDs are equal: %v", a)
	}
	if a.Version() != 4 || a.Variant() != VariantRFC4122 {
		t.Fatalf("NewV4 gave version %v, variant %v", a.Version(), a.Variant())
	}
}

func TestNewV5(t *testing.T) {
	for _, c := range []struct{ ns, name, want string }{
		{"6ba7b810-9dad-11d1-80b4-00c04fd430c8", "www.sample.com", "4e4463eb-b0e8-54fa-8c28-12d1ab1d45b3"},
		{"6ba7b811-9dad-11d1-80b4-00c04fd430c8", "https://www.sample.com/test", "9e44625a-0d85-5e0a-99bc-8e8a77df5ea2"},
		{"6ba7b812-9dad-11d1-80b4-00c04fd430c8", "1.3.6.1.4.1.343", "6aab0456-7392-582a-b92a-ba5a7096945d"},
		{"6ba7b814-9dad-11d1-80b4-00c04fd430c8", "CN=John Smith, ou=People, o=FakeCorp, L=Seattle, S=Washington, C=US", "badff8dd-c869-5b64-a260-00092e66be00"},
	} {
		g, err := NewV5(mustFromString(t, c.ns), []byte(c.name))
		if err != nil {
			t.Fatal(err)
		}
		if g.String() != c.want {
			t.Errorf("NewV5(%s, %q) = %v, want %s", c.ns, c.name, g, c.want)
		}
		if g.Version() != 5 || g.Variant() != VariantRFC4122 {
			t.Errorf("NewV5 gave version %v, variant %v", g.Version(), g.Variant())
		}
	}
}

func TestArrays(t *testing.T) {
	g := mustFromString(t, "73c39589-192e-4c64-9acf-6c5d0aa18528")
	big := [16]byte{0x73, 0xc3, 0x95, 0x89, 0x19, 0x2e, 0x4c, 0x64, 0x9a, 0xcf, 0x6c, 0x5d, 0x0a, 0xa1, 0x85, 0x28}
	win := [16]byte{0x89, 0x95, 0xc3, 0x73, 0x2e, 0x19, 0x64, 0x4c, 0x9a, 0xcf, 0x6c, 0x5d, 0x0a, 0xa1, 0x85, 0x28}
	if g.ToArray() != big {
		t.Errorf("ToArray() = %x, want %x", g.ToArray(), big)
	}
	if g.ToWindowsArray() != win {
		t.Errorf("ToWindowsArray() = %x, want %x", g.ToWindowsArray(), win)
	}
	if FromArray(big) != g || FromWindowsArray(win) != g {
		t.Errorf("FromArray/FromWindowsArray do not invert: %v, %v", FromArray(big), FromWindowsArray(win))
	}
	if FromArray(big).ToArray() != big || FromWindowsArray(big).ToWindowsArray() != big {
		t.Error("array round trips differ")
	}
}

func TestFromString(t *testing.T) {
	const s = "8e35239e-2084-490e-a3db-ab18ee0744cb"
	if got := mustFromString(t, s).String(); got != s {
		t.Fatalf("FromString(%s).String() = %s", s, got)
	}
	for _, bad := range []string{"{8e35239e-2084-490e-a3db-ab18ee0744cb}", " 8e35239e-2084-490e-a3db-ab18ee0744cb", "8e35239e-2084-490e-a3db-ab18ee0744c", "8e35239e+2084-490e-a3db-ab18ee0744cb", "8e35239e-2084-490e-a3db-ab18ee0744cx", ""} {
		if g, err := FromString(bad); err == nil {
			t.Errorf("FromString(%q) = %v, want an error", bad, g)
		}
	}
}

func TestJSON(t *testing.T) {
	g, err := NewV4()
	if err != nil {
		t.Fatal(err)
	}
	type nested struct{ G GUID }
	j, err := json.Marshal(nested{g})
	if err != nil {
		t.Fatal(err)
	}
	if string(j) != `{"G":"`+g.String()+`"}` {
		t.Fatalf("json.Marshal = %s", j)
	}
	var back nested
	if err := json.Unmarshal(j, &back); err != nil || back.G != g {
		t.Fatalf("json.Unmarshal gave %v, %v", back.G, err)
	}
	if err := json.Unmarshal([]byte(`{"G":"nope"}`), &back); err == nil {
		t.Fatal("json.Unmarshal accepted a malformed GUID")
	}
}
