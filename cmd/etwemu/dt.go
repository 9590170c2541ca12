package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/etwemu/etwemu/internal/quote"
	"github.com/etwemu/etwemu/layout"
	"github.com/etwemu/etwemu/winver"
)

const dtAbout = `Usage: etwemu dt STRUCT [flags]
       etwemu dt STRUCT -diff V1 V2
       etwemu dt -list

Prints a Windows structure from etwemu's layout catalogue as WinDbg's dt does: each
member's offset, name and type in one version and architecture, then the size. Names
are case-insensitive, with or without nt! and the leading underscore.

  etwemu dt ETW_REG_ENTRY -version 1607 -arch x64
  etwemu dt nt!_ETW_PMC_SUPPORT -versions        one column of offsets per version
  etwemu dt ETW_REG_ENTRY -diff 6.1 6.2          members that moved, appeared, vanished or changed type
  etwemu dt -list                                the structures, their versions and sources`

// dtConflicts are the pairs of dt's flags of which one would do nothing: refused, as
// dump refuses -sort with -summary, rather than ignored.
var dtConflicts = []struct{ flag, with, why string }{
	{"list", "version", "-list lists every structure of every version; drop -version"},
	{"list", "arch", "-list lists every structure of both architectures; drop -arch"},
	{"list", "diff", "choose one"},
	{"list", "versions", "choose one"},
	{"list", "r", "-r expands a structure's members; -list lists the structures"},
	{"diff", "versions", "choose one"},
	{"diff", "version", "-diff names its two versions as arguments (-diff 6.1 6.2); drop -version"},
	{"versions", "version", "-versions shows every version; drop -version"},
	{"r", "diff", "-r expands one version's members; -diff compares two"},
	{"r", "versions", "-r expands one version's members; -versions shows their offsets in all"},
	{"r", "json", "-r expands the text view; the JSON gives each member's type, to look up with dt"},
}

// runDt prints a structure of the layout catalogue.
func runDt(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dt", flag.ContinueOnError)
	version := winver.Default
	fs.Var(&version, "version", "Windows version: 5.0 ... 10.0, 1511 ... 2004")
	arch := fs.String("arch", "x64", "architecture: x86 or x64")
	list := fs.Bool("list", false, "list the catalogue's structures instead")
	diff := fs.Bool("diff", false, "compare two versions, named as arguments: -diff 6.1 6.2")
	versions := fs.Bool("versions", false, "one column of offsets per version the structure exists in")
	asJSON := fs.Bool("json", false, "print JSON instead of text")
	recurse := fs.Bool("r", false, "as WinDbg's dt -r: expand members whose type the catalogue has (WNODE_HEADER in EVENT_TRACE_PROPERTIES, TRACE_ENABLE_INFO in ETW_GUID_ENTRY) and list each arm of a union, indented")
	fs.SetOutput(io.Discard) // the error is printed below, named by the command
	fs.Usage = func() {}     // the help goes to stdout
	// Flags and names may come in any order (dt NAME -version 6.1, as WinDbg writes it, or
	// dt -diff 6.1 6.2 -json): parse up to each name, keep it, and go on after it.
	var rest []string
	for {
		if err := fs.Parse(args); err != nil {
			if err == flag.ErrHelp {
				printUsage(fs, dtAbout, stdout)
				return 0
			}
			fmt.Fprintf(stderr, "etwemu dt: %v\nRun 'etwemu help dt' for its flags.\n", err)
			return 2
		}
		if args = fs.Args(); len(args) == 0 {
			break
		}
		rest, args = append(rest, args[0]), args[1:]
	}
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, c := range dtConflicts {
		if given[c.flag] && given[c.with] {
			fmt.Fprintf(stderr, "etwemu dt: -%s and -%s: %s\n", c.flag, c.with, c.why)
			return 2
		}
	}
	var name string
	if len(rest) > 0 {
		i := 0
		if *diff { // the name is the argument that is not a version: dt -diff 6.1 6.2 NAME
			for i < len(rest)-1 && validVersion(rest[i]) {
				i++
			}
		}
		name, rest = rest[i], append(rest[:i:i], rest[i+1:]...)
	}
	a := layout.X64
	switch *arch {
	case "x64", "amd64":
	case "x86", "386", "i386":
		a = layout.X86
	default:
		fmt.Fprintf(stderr, "etwemu dt: -arch %s: x86 or x64\n", quote.Short(*arch))
		return 2
	}
	if *list {
		if name != "" || len(rest) > 0 {
			fmt.Fprintln(stderr, "etwemu dt: -list takes no structure name")
			return 2
		}
		return dtList(stdout, *asJSON)
	}
	if name == "" {
		fmt.Fprintln(stderr, "etwemu dt: name a structure (etwemu dt -list lists them)")
		return 2
	}
	s, ok := layout.Lookup(name)
	if !ok {
		fmt.Fprintf(stderr, "etwemu dt: no structure %s in the catalogue (etwemu dt -list lists them)\n", quote.Short(name))
		return 1
	}
	switch {
	case *diff:
		if len(rest) != 2 {
			fmt.Fprintln(stderr, "etwemu dt: -diff takes two versions: -diff 6.1 6.2")
			return 2
		}
		var v1, v2 winver.Version
		if err := v1.Set(rest[0]); err != nil {
			fmt.Fprintf(stderr, "etwemu dt: -diff: %v\n", err)
			return 2
		}
		if err := v2.Set(rest[1]); err != nil {
			fmt.Fprintf(stderr, "etwemu dt: -diff: %v\n", err)
			return 2
		}
		for _, v := range []winver.Version{v1, v2} {
			if !s.At(v, a).Exists {
				return dtMissing(stderr, s, v, a)
			}
		}
		return dtDiff(stdout, s, v1, v2, a, *asJSON)
	case len(rest) > 0:
		fmt.Fprintf(stderr, "etwemu dt: unexpected argument %s\n", quote.Short(rest[0]))
		return 2
	case *versions:
		if len(versionsFor(s, a)) == 0 {
			return dtMissing(stderr, s, version, a)
		}
		return dtVersions(stdout, s, a, *asJSON)
	}
	w := s.At(version, a)
	if !w.Exists {
		return dtMissing(stderr, s, version, a)
	}
	if *asJSON {
		return writeJSON("dt", stdout, stderr, jsonView(w))
	}
	title := "_" + s.Name
	if s.Module != "" {
		title = s.Module + "!" + title
	}
	fmt.Fprintf(stdout, "%s (Windows %s, %s; %s)\n", title, version, a, s.Source)
	dtMembers(stdout, w, 0, "   ", *recurse)
	if len(w.Members) == 0 {
		fmt.Fprintf(stdout, "   (the source gives no member offsets for %s; -arch x64 shows them)\n", a)
	}
	fmt.Fprintf(stdout, "   size 0x%x (%d bytes)\n", w.Size, w.Size)
	return 0
}

// dtMembers prints a view's members, each offset from the start of its own structure,
// with indent before each line. With recurse, a member whose type the catalogue has is
// followed by that structure's members, indented further, as dt -r shows them, and a
// union's arms each get a line at the union's offset.
func dtMembers(w io.Writer, v layout.View, depth int, indent string, recurse bool) {
	a := v.Arch
	for _, m := range v.Members {
		line := fmt.Sprintf("%s+0x%03x %-*s : %s", indent, m.Off[a], nameWidth(v.Members), m.Name, dtType(m.Type, a))
		if m.Remark != "" {
			line += "  (" + m.Remark + ")"
		}
		fmt.Fprintln(w, line)
		if !recurse {
			continue
		}
		if m.Type == "union" {
			for _, arm := range strings.Split(m.Name, " / ") {
				fmt.Fprintf(w, "%s   +0x%03x %s\n", indent, m.Off[a], arm)
			}
			continue
		}
		base, _, _ := strings.Cut(m.Type, " [") // an array: its element's structure
		if sub, ok := layout.Lookup(base); ok && depth < 4 {
			if sv := sub.At(v.Version, a); sv.Exists {
				dtMembers(w, sv, depth+1, indent+"   ", recurse)
			}
		}
	}
}

// validVersion reports whether s names a Windows version.
func validVersion(s string) bool {
	var v winver.Version
	return v.Set(s) == nil
}

// dtType writes a C type the way WinDbg's dt names it: Uint4B, UChar, Ptr64 _X, [4] Uint2B.
// The catalogue's "[8 bytes]" (bytes a source leaves unaccounted) is a byte array, and
// "[4 or 8 bytes]" one pointer's worth of them.
func dtType(t string, a layout.Arch) string {
	t = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(t), " volatile"))
	ptr := "Ptr64"
	if a == layout.X86 {
		ptr = "Ptr32"
	}
	switch t {
	case "[4 or 8 bytes]":
		if a == layout.X86 {
			return "[4] UChar"
		}
		return "[8] UChar"
	}
	if n, ok := strings.CutSuffix(t, " bytes]"); ok && strings.HasPrefix(t, "[") {
		return n + "] UChar"
	}
	if i := strings.Index(t, "["); i > 0 {
		return strings.Replace(t[i:], "ANYSIZE_ARRAY", "1", 1) + " " + dtType(t[:i], a)
	}
	if strings.HasSuffix(t, "*") {
		return ptr + " " + dtType(strings.TrimSpace(strings.TrimSuffix(t, "*")), a)
	}
	switch t {
	case "HANDLE", "PVOID":
		return ptr + " Void"
	case "VOID":
		return "Void"
	case "DWORD":
		return "Uint4B"
	case "CRITICAL_SECTION", "CONDITION_VARIABLE":
		return "_RTL_" + t
	case "UCHAR", "BOOLEAN":
		return "UChar"
	case "USHORT":
		return "Uint2B"
	case "ULONG":
		return "Uint4B"
	case "ULONGLONG", "ULONG64":
		return "Uint8B"
	case "LONG":
		return "Int4B"
	case "LONGLONG", "LARGE_INTEGER":
		return "Int8B"
	case "union":
		return "<unnamed-tag> (union)"
	}
	return "_" + t
}

func nameWidth(ms []layout.Member) int {
	n := 0
	for _, m := range ms {
		n = max(n, len(m.Name))
	}
	return min(n, 40)
}

func versionSpan(s *layout.Struct) string { return spanOf(s.Versions()) }

// versionsFor returns the versions whose layout of s the catalogue has for a.
func versionsFor(s *layout.Struct, a layout.Arch) []winver.Version {
	var out []winver.Version
	for _, v := range s.Versions() {
		if s.At(v, a).Exists {
			out = append(out, v)
		}
	}
	return out
}

// dtMissing says that s has no layout for version v and architecture a, and where it has
// one; it returns dt's exit code for that, 1.
func dtMissing(stderr io.Writer, s *layout.Struct, v winver.Version, a layout.Arch) int {
	if vs := versionsFor(s, a); len(vs) == 0 {
		fmt.Fprintf(stderr, "etwemu dt: the catalogue has no %s layout of %s (its source gives %s only)\n", a, s.Name, otherArch(a))
	} else {
		fmt.Fprintf(stderr, "etwemu dt: %s does not exist in Windows %s (it exists in %s for %s)\n", s.Name, v, spanOf(vs), a)
	}
	return 1
}

// otherArch is the architecture that is not a.
func otherArch(a layout.Arch) layout.Arch {
	if a == layout.X86 {
		return layout.X64
	}
	return layout.X86
}

// spanOf says which versions vs are, oldest first: "6.0 to 2004", "2004 only".
func spanOf(vs []winver.Version) string {
	if len(vs) == 0 {
		return "no version"
	}
	if len(vs) == 1 {
		return vs[0].String() + " only"
	}
	return vs[0].String() + " to " + vs[len(vs)-1].String()
}

// dtList lists the catalogue.
func dtList(stdout io.Writer, asJSON bool) int {
	type entry struct {
		Name     string `json:"name"`
		Versions string `json:"versions"`
		Source   string `json:"source"`
	}
	var es []entry
	for _, s := range layout.All() {
		es = append(es, entry{s.Name, versionSpan(s), s.Source})
	}
	if asJSON {
		return writeJSON("dt", stdout, io.Discard, es)
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "structure\tversions\tsource")
	for _, e := range es {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", e.Name, e.Versions, e.Source)
	}
	tw.Flush()
	return 0
}

// dtVersions prints one row per member name and one column per version the structure
// exists in, each cell the member's offset there.
func dtVersions(stdout io.Writer, s *layout.Struct, a layout.Arch, asJSON bool) int {
	vs := s.Versions()
	var names []string
	offs := map[string]map[winver.Version]int{}
	sizes := map[winver.Version]int{}
	for _, v := range vs {
		w := s.At(v, a)
		sizes[v] = w.Size
		for _, m := range w.Members {
			if offs[m.Name] == nil {
				offs[m.Name] = map[winver.Version]int{}
				names = append(names, m.Name)
			}
			offs[m.Name][v] = m.Off[a]
		}
	}
	if asJSON {
		type row struct {
			Member  string         `json:"member"`
			Offsets map[string]int `json:"offsets"`
		}
		var rows []row
		for _, n := range names {
			r := row{n, map[string]int{}}
			for v, o := range offs[n] {
				r.Offsets[v.String()] = o
			}
			rows = append(rows, r)
		}
		sz := map[string]int{}
		for v, n := range sizes {
			sz[v.String()] = n
		}
		return writeJSON("dt", stdout, io.Discard, map[string]any{"structure": s.Name, "arch": a.String(), "members": rows, "sizes": sz})
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 1, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "%s (%s)\t", s.Name, a)
	for _, v := range vs {
		fmt.Fprintf(tw, "%s\t", v)
	}
	fmt.Fprintln(tw)
	for _, n := range names {
		fmt.Fprintf(tw, "%s\t", n)
		for _, v := range vs {
			if o, ok := offs[n][v]; ok {
				fmt.Fprintf(tw, "%#x\t", o)
			} else {
				fmt.Fprint(tw, "-\t")
			}
		}
		fmt.Fprintln(tw)
	}
	fmt.Fprint(tw, "size\t")
	for _, v := range vs {
		fmt.Fprintf(tw, "%#x\t", sizes[v])
	}
	fmt.Fprintln(tw)
	tw.Flush()
	return 0
}

// dtChange is one difference between two versions' layouts.
type dtChange struct {
	Member string `json:"member"`
	Change string `json:"change"` // moved, appeared, vanished, retyped
	From   string `json:"from,omitempty"`
	To     string `json:"to,omitempty"`
}

// dtDiff lists the members that moved, appeared, vanished or changed type between two
// versions. The text names types as dt's view does (Uint2B); the JSON, as every JSON view
// of the catalogue, in C (USHORT).
func dtDiff(stdout io.Writer, s *layout.Struct, v1, v2 winver.Version, a layout.Arch, asJSON bool) int {
	w1, w2 := s.At(v1, a), s.At(v2, a)
	var cs []dtChange
	at := func(m layout.Member) string {
		if asJSON {
			return fmt.Sprintf("+%#x %s", m.Off[a], m.Type)
		}
		return fmt.Sprintf("+%#x %s", m.Off[a], dtType(m.Type, a))
	}
	for _, m := range w1.Members {
		n, ok := w2.Member(m.Name)
		switch {
		case !ok:
			cs = append(cs, dtChange{m.Name, "vanished", at(m), ""})
		case n.Type != m.Type:
			cs = append(cs, dtChange{m.Name, "retyped", at(m), at(n)})
		case n.Off[a] != m.Off[a]:
			cs = append(cs, dtChange{m.Name, "moved", at(m), at(n)})
		}
	}
	for _, n := range w2.Members {
		if _, ok := w1.Member(n.Name); !ok {
			cs = append(cs, dtChange{n.Name, "appeared", "", at(n)})
		}
	}
	noOffsets := len(w1.Members) == 0 && len(w2.Members) == 0
	if asJSON {
		out := map[string]any{"structure": s.Name, "arch": a.String(), "from": v1.String(), "to": v2.String(),
			"size_from": w1.Size, "size_to": w2.Size, "changes": cs}
		if noOffsets {
			out["note"] = fmt.Sprintf("the source gives no member offsets for %s; -arch %s compares them", a, otherArch(a))
		}
		return writeJSON("dt", stdout, io.Discard, out)
	}
	fmt.Fprintf(stdout, "%s, %s: Windows %s (size %#x) to %s (size %#x)\n", s.Name, a, v1, w1.Size, v2, w2.Size)
	if noOffsets {
		fmt.Fprintf(stdout, "  (the source gives no member offsets for %s; -arch %s compares them)\n", a, otherArch(a))
		return 0
	}
	if len(cs) == 0 {
		fmt.Fprintln(stdout, "  no member moved, appeared, vanished or changed type")
		return 0
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	for _, c := range cs {
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", c.Change, c.Member, c.From, c.To)
	}
	tw.Flush()
	return 0
}

// jsonView is a View as JSON.
func jsonView(w layout.View) any {
	type member struct {
		Offset int    `json:"offset"`
		Name   string `json:"name"`
		Type   string `json:"type"`
		Remark string `json:"remark,omitempty"`
	}
	ms := []member{}
	for _, m := range w.Members {
		ms = append(ms, member{m.Off[w.Arch], m.Name, m.Type, m.Remark})
	}
	return map[string]any{"structure": w.Struct.Name, "version": w.Version.String(), "arch": w.Arch.String(),
		"size": w.Size, "members": ms, "source": w.Struct.Source}
}

// writeJSON prints v as indented JSON for command cmd; an encoding error is printed on
// stderr and makes exit status 1.
func writeJSON(cmd string, stdout, stderr io.Writer, v any) int {
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // a terminal's or a script's JSON: "<<" as it is, not \u003c\u003c
	if err := enc.Encode(v); err != nil {
		fmt.Fprintf(stderr, "etwemu %s: %v\n", cmd, err)
		return 1
	}
	return 0
}
