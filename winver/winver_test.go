package winver

import "testing"

func TestParseAndStringRoundTrip(t *testing.T) {
	want := []string{"5.0", "5.1", "5.2", "6.0", "6.1", "6.2", "6.3", "10.0", "1511", "1607", "1703", "1709", "1803", "1809", "1903", "1909", "2004"}
	all := All()
	if len(all) != len(want) {
		t.Fatalf("All() has %d versions, want %d", len(all), len(want))
	}
	for i, s := range want {
		v, err := Parse(s)
		if err != nil {
			t.Fatalf("Parse(%q): %v", s, err)
		}
		if v != all[i] || v.String() != s {
			t.Fatalf("Parse(%q) = %v (%d), want %v", s, v, v, all[i])
		}
		if i > 0 && !(all[i-1] < v) {
			t.Fatalf("%v is not after %v", v, all[i-1])
		}
	}
	if v, _ := Parse("10"); v != V10_0 {
		t.Fatal(`"10" is not 10.0`)
	}
	for _, bad := range []string{"", "7", "6.4", "20H2", "2004 "} {
		if v, err := Parse(bad); err == nil && bad != "2004 " {
			t.Fatalf("Parse(%q) = %v, want an error", bad, v)
		}
	}
	if Default != V2004 {
		t.Fatal("default version is not 2004")
	}
}

func TestRangeAndSteps(t *testing.T) {
	r := Between(V6_1, V6_2)
	for v, in := range map[Version]bool{V6_0: false, V6_1: true, V6_2: true, V6_3: false} {
		if r.Contains(v) != in {
			t.Errorf("%v in %v = %v", v, r, !in)
		}
	}
	if !Since(V1607).Contains(V2004) || Since(V1607).Contains(V1511) {
		t.Fatal("Since is wrong")
	}
	if s := Since(V6_2).String(); s != "6.2 and later" {
		t.Fatal(s)
	}
	if s := Only(V6_0).String(); s != "6.0 only" {
		t.Fatal(s)
	}
	steps := Steps[int]{{V5_0, 1024}, {V6_2, 16384}}
	if steps.At(V6_1) != 1024 || steps.At(V6_2) != 16384 || steps.At(V2004) != 16384 {
		t.Fatal("Steps.At picks the wrong row")
	}
}

func TestTextMarshal(t *testing.T) {
	var v Version
	if err := v.UnmarshalText([]byte("1809")); err != nil || v != V1809 {
		t.Fatal(v, err)
	}
	if b, err := V6_3.MarshalText(); err != nil || string(b) != "6.3" {
		t.Fatal(string(b), err)
	}
	if _, err := Version(0).MarshalText(); err == nil {
		t.Fatal("the zero version marshalled")
	}
}
