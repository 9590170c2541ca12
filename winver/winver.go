// Package winver names the Windows versions whose ETW behaviour etwemu emulates and
// provides the rule tables that key version-dependent behaviour by an explicit version.
//
// Versions follow the numbering of the reverse-engineering notes the project implements:
// 5.0 (Windows 2000), 5.1 (XP), 5.2 (Server 2003), 6.0 (Vista), 6.1 (7), 6.2 (8),
// 6.3 (8.1), 10.0 (the original Windows 10 release), then Windows 10 releases by name.
package winver

import (
	"fmt"
	"strings"
)

// Version is one Windows version. Versions are ordered: a later release compares greater.
// The zero Version is invalid; use Default or Parse.
type Version uint8

// The emulated versions, oldest first.
const (
	V5_0  Version = iota + 1 // Windows 2000
	V5_1                     // Windows XP
	V5_2                     // Windows Server 2003 (and XP x64)
	V6_0                     // Windows Vista
	V6_1                     // Windows 7
	V6_2                     // Windows 8
	V6_3                     // Windows 8.1
	V10_0                    // Windows 10, original release (1507)
	V1511                    // Windows 10 version 1511
	V1607                    // Windows 10 version 1607
	V1703                    // Windows 10 version 1703
	V1709                    // Windows 10 version 1709
	V1803                    // Windows 10 version 1803
	V1809                    // Windows 10 version 1809
	V1903                    // Windows 10 version 1903
	V1909                    // Windows 10 version 1909
	V2004                    // Windows 10 version 2004
)

// Default is the version an emulator is created for when none is named.
const Default = V2004

// Oldest and Newest bound the emulated range.
const (
	Oldest = V5_0
	Newest = V2004
)

var names = [...]string{
	V5_0: "5.0", V5_1: "5.1", V5_2: "5.2", V6_0: "6.0", V6_1: "6.1", V6_2: "6.2", V6_3: "6.3",
	V10_0: "10.0", V1511: "1511", V1607: "1607", V1703: "1703", V1709: "1709", V1803: "1803",
	V1809: "1809", V1903: "1903", V1909: "1909", V2004: "2004",
}

var marketing = [...]string{
	V5_0: "Windows 2000", V5_1: "Windows XP", V5_2: "Windows Server 2003", V6_0: "Windows Vista",
	V6_1: "Windows 7", V6_2: "Windows 8", V6_3: "Windows 8.1", V10_0: "Windows 10 (1507)",
	V1511: "Windows 10 1511", V1607: "Windows 10 1607", V1703: "Windows 10 1703",
	V1709: "Windows 10 1709", V1803: "Windows 10 1803", V1809: "Windows 10 1809",
	V1903: "Windows 10 1903", V1909: "Windows 10 1909", V2004: "Windows 10 2004",
}

// All returns every emulated version, oldest first.
func All() []Version {
	out := make([]Version, 0, int(Newest))
	for v := Oldest; v <= Newest; v++ {
		out = append(out, v)
	}
	return out
}

// Valid reports whether v is one of the emulated versions.
func (v Version) Valid() bool { return v >= Oldest && v <= Newest }

// String returns the version as the notes write it: "6.1", "10.0", "1607".
func (v Version) String() string {
	if !v.Valid() {
		return fmt.Sprintf("Version(%d)", uint8(v))
	}
	return names[v]
}

// Marketing returns the product name, for example "Windows 7" for 6.1.
func (v Version) Marketing() string {
	if !v.Valid() {
		return v.String()
	}
	return marketing[v]
}

// AtLeast reports whether v is w or later.
func (v Version) AtLeast(w Version) bool { return v >= w }

// Parse reads a version written as the notes write it ("5.0" … "6.3", "10.0", "1511" …
// "2004"). "10" is accepted for "10.0". Anything else is an error that lists the choices.
func Parse(s string) (Version, error) {
	t := strings.TrimSpace(s)
	if t == "10" {
		t = "10.0"
	}
	for v := Oldest; v <= Newest; v++ {
		if names[v] == t {
			return v, nil
		}
	}
	return 0, fmt.Errorf("winver: unknown Windows version %q (want one of %s)", s, strings.Join(names[1:], ", "))
}

// MarshalText implements encoding.TextMarshaler.
func (v Version) MarshalText() ([]byte, error) {
	if !v.Valid() {
		return nil, fmt.Errorf("winver: invalid version %d", uint8(v))
	}
	return []byte(v.String()), nil
}

// UnmarshalText implements encoding.TextUnmarshaler.
func (v *Version) UnmarshalText(b []byte) error {
	p, err := Parse(string(b))
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// Set implements flag.Value, so a Version can be a command-line flag.
func (v *Version) Set(s string) error { return v.UnmarshalText([]byte(s)) }
