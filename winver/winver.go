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

	"github.com/etwemu/etwemu/internal/quote"
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

// builds are the build numbers of the released versions (ProviderVersion in an ETL file's
// TRACE_LOGFILE_HEADER): the RTM build of each, service packs aside (5.1 is SP0's 2600,
// 6.0 is SP2's 6002 and 6.1 is SP1's 7601, the builds most traces come from).
var builds = [...]uint32{
	V5_0: 2195, V5_1: 2600, V5_2: 3790, V6_0: 6002, V6_1: 7601, V6_2: 9200, V6_3: 9600,
	V10_0: 10240, V1511: 10586, V1607: 14393, V1703: 15063, V1709: 16299, V1803: 17134,
	V1809: 17763, V1903: 18362, V1909: 18363, V2004: 19041,
}

// Build returns the version's build number, or 0 for an invalid version.
func (v Version) Build() uint32 {
	if !v.Valid() {
		return 0
	}
	return builds[v]
}

// Numbers returns the major and minor version numbers Windows reports (10.0 for every
// Windows 10 release).
func (v Version) Numbers() (major, minor uint8) {
	switch {
	case !v.Valid():
		return 0, 0
	case v >= V10_0:
		return 10, 0
	}
	n := names[v] // "6.1"
	return n[0] - '0', n[2] - '0'
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
	return 0, fmt.Errorf("winver: unknown Windows version %s (want one of %s)", quote.Short(s), strings.Join(names[1:], ", "))
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
