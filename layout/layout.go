// Package layout is the catalogue of the Windows structures etwemu models: each
// structure's members, with their offsets on x86 and x64, types and the versions each row
// holds for, its size by version, and where the rows come from. It is the one copy of
// those tables: the packages that model a structure (regentry, pmc) read their offsets
// here, and `etwemu dt` prints them as WinDbg's dt does.
package layout

import (
	"slices"
	"strings"

	"github.com/etwemu/etwemu/winver"
)

// Arch is a processor architecture, the index into a member's offsets.
type Arch int

const (
	X86 Arch = iota
	X64
)

func (a Arch) String() string {
	if a == X86 {
		return "x86"
	}
	return "x64"
}

// Member is one row of a structure's table: a member as the versions in Versions lay it
// out. A member that moved has one row per span of versions.
type Member struct {
	Name     string
	Type     string // as the source declares it: "UCHAR", "LIST_ENTRY", "ETW_GUID_ENTRY *"
	Off      [2]int // x86, x64
	Versions winver.Range
	// Union names the union this member belongs to; members of one union share an
	// offset, and no other members may overlap.
	Union string
	// Remark is the source's note on the row (previously at, next at, last member in).
	Remark string
}

// Struct is one structure's catalogue entry.
type Struct struct {
	Name string // as in the symbol files: ETW_REG_ENTRY
	// Module is the module whose public symbols carry the type, as a debugger names it
	// (nt!_ETW_REG_ENTRY): "nt", or "" for a type of the SDK headers or one known only
	// from binaries, without symbols.
	Module string
	Source string // where the rows and sizes come from
	// Build names the one build whose symbols gave the offsets, where the catalogue shows
	// that build's layout for a version it is not ("ntoskrnl.exe build 19569"); "" where
	// the rows are the versions' own.
	Build   string
	Sizes   winver.Steps[[2]int]
	Members []Member
}

// since gives every member written without versions the versions from v on, for the
// tables whose rows (all, or all but a few that say otherwise) hold in every version of
// the structure.
func since(v winver.Version, ms []Member) []Member {
	for i := range ms {
		if ms[i].Versions == (winver.Range{}) {
			ms[i].Versions = winver.Since(v)
		}
	}
	return ms
}

// View is a structure as one version and architecture lay it out: the members present,
// sorted by offset, and its size. Exists is false for a version without the structure.
type View struct {
	Struct  *Struct
	Version winver.Version
	Arch    Arch
	Size    int
	Members []Member
	Exists  bool
}

// At returns s as version v and architecture a lay it out. A version the emulator does
// not know, or an architecture other than X86 and X64, has no such structure (Exists
// false).
func (s *Struct) At(v winver.Version, a Arch) View {
	if !v.Valid() || a != X86 && a != X64 {
		return View{Struct: s, Version: v, Arch: a}
	}
	sz := s.Sizes.At(v)[a]
	w := View{Struct: s, Version: v, Arch: a, Size: sz, Exists: sz != 0}
	if !w.Exists {
		return w
	}
	for _, m := range s.Members {
		if m.Versions.Contains(v) && m.Off[a] >= 0 { // x86Unknown: the source gives no offset
			w.Members = append(w.Members, m)
		}
	}
	slices.SortStableFunc(w.Members, func(x, y Member) int { return x.Off[a] - y.Off[a] })
	return w
}

// Member returns the member named name (case-insensitive), or false.
func (w View) Member(name string) (Member, bool) {
	for _, m := range w.Members {
		if strings.EqualFold(m.Name, name) {
			return m, true
		}
	}
	return Member{}, false
}

// Offset returns the offset of member name in this view's architecture, or -1.
func (w View) Offset(name string) int {
	if m, ok := w.Member(name); ok {
		return m.Off[w.Arch]
	}
	return -1
}

// Versions returns the versions in which s exists, oldest first.
func (s *Struct) Versions() []winver.Version {
	var out []winver.Version
	for _, v := range winver.All() {
		if s.Sizes.At(v) != [2]int{} {
			out = append(out, v)
		}
	}
	return out
}

// catalogue lists every structure, in the order `etwemu dt -list` prints them.
var catalogue = []*Struct{&BufferHeader, &EventHeader, &LogfileHeader, &GuidEntry, &EnableInfo, &RegEntry, &PMCSupport, &UMLoggerContext, &LoggerContext, &WnodeHeader, &TraceProperties}

// All returns the catalogue.
func All() []*Struct { return catalogue }

// Lookup finds a structure by name: case-insensitive, with or without a leading "nt!"
// and underscore, as WinDbg accepts them.
func Lookup(name string) (*Struct, bool) {
	n := strings.TrimPrefix(strings.ToLower(name), "nt!")
	n = strings.TrimLeft(n, "_")
	for _, s := range catalogue {
		if strings.ToLower(s.Name) == n {
			return s, true
		}
	}
	return nil, false
}
