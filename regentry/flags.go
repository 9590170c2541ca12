package regentry

import (
	"strings"

	"github.com/etwemu/etwemu/winver"
)

// Flags is the set of registration flags, independent of version. Value encodes it as the
// Flags member of a given Windows version.
type Flags uint16

// Registration flags (the Dbg* bit fields of ETW_REG_ENTRY.Flags).
const (
	FlagKernel             Flags = 1 << iota // DbgKernelRegistration
	FlagUser                                 // DbgUserRegistration
	FlagReply                                // DbgReplyRegistration
	FlagClassic                              // DbgClassicRegistration
	FlagSessionSpace                         // DbgSessionSpaceRegistration (6.1+)
	FlagModern                               // DbgModernRegistration (6.2+)
	FlagClosed                               // DbgClosed
	FlagInserted                             // DbgInserted
	FlagWow64                                // DbgWow64 (1607+)
	FlagUseDescriptorType                    // DbgUseDescriptorType (1709+; a BOOLEAN before)
	FlagDropProviderTraits                   // DbgDropProviderTraits (1709+)
	numFlags               = iota
)

// flagRule is one row of the flags rule table: from which version a flag exists and
// which bit it has, before and from 6.2.
type flagRule struct {
	name   string
	since  winver.Version
	value  uint16 // from 6.2 on (or from since, if later)
	valueV uint16 // 6.0 to 6.1, when different
}

// flagRules is the per-version encoding of ETW_REG_ENTRY.Flags (Geoff Chappell,
// "ETW_REG_ENTRY": Flags).
var flagRules = [numFlags]flagRule{
	{"DbgKernelRegistration", winver.V6_0, 0x0001, 0x0001},
	{"DbgUserRegistration", winver.V6_0, 0x0002, 0x0002},
	{"DbgReplyRegistration", winver.V6_0, 0x0004, 0x0004},
	{"DbgClassicRegistration", winver.V6_0, 0x0008, 0x0008},
	{"DbgSessionSpaceRegistration", winver.V6_1, 0x0010, 0x0010},
	{"DbgModernRegistration", winver.V6_2, 0x0020, 0},
	{"DbgClosed", winver.V6_0, 0x0040, 0x1000},
	{"DbgInserted", winver.V6_0, 0x0080, 0x2000},
	{"DbgWow64", winver.V1607, 0x0100, 0},
	{"DbgUseDescriptorType", winver.V1709, 0x0200, 0},
	{"DbgDropProviderTraits", winver.V1709, 0x0400, 0},
}

// Known reports whether flag f exists in version v.
func (f Flags) Known(v winver.Version) bool {
	for i := range flagRules {
		if f&(1<<i) != 0 && v < flagRules[i].since {
			return false
		}
	}
	return true
}

// Value encodes f as the Flags member of version v: a USHORT in 6.0-6.1 (closed and
// inserted at 0x1000 and 0x2000), a UCHAR in 6.2-1511, a USHORT from 1607. Flags the
// version does not have are left out.
func (f Flags) Value(v winver.Version) uint16 {
	var out uint16
	for i, r := range flagRules {
		if f&(1<<i) == 0 || v < r.since {
			continue
		}
		if v < winver.V6_2 {
			out |= r.valueV
		} else {
			out |= r.value
		}
	}
	return out
}

// String lists the flags by their Windows names.
func (f Flags) String() string {
	var names []string
	for i, r := range flagRules {
		if f&(1<<i) != 0 {
			names = append(names, r.name)
		}
	}
	if len(names) == 0 {
		return "0"
	}
	return strings.Join(names, "|")
}
