package main

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/layout"
)

// dt prints the catalogue's rows in WinDbg's format, finds names however they are
// written, compares versions and refuses what it cannot show, with the exit codes of the
// other commands (1 for a failed lookup, 2 for a usage error).
func TestDt(t *testing.T) {
	cases := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"ETW_REG_ENTRY", "-version", "1607", "-arch", "x64"}, 0, []string{"nt!_ETW_REG_ENTRY (Windows 1607, x64", "+0x064 EnableMask", ": UChar", "+0x020 GuidEntry", ": Ptr64 _ETW_GUID_ENTRY", "size 0x70"}},
		{[]string{"nt!_etw_reg_entry", "-version", "6.1", "-arch", "x86"}, 0, []string{"+0x010 EnableMask", ": Ptr32 _ETW_GUID_ENTRY", "size 0x2c"}},
		{[]string{"_ETW_PMC_SUPPORT", "-version", "1903"}, 0, []string{"+0x000 Source", ": Ptr64 _KPROFILE_SOURCE", "+0x00c HookId", ": [4] Uint2B", "size 0x20"}},
		{[]string{"ETW_REG_ENTRY", "-diff", "6.1", "6.2"}, 0, []string{"moved", "EnableMask", "+0x1c UChar", "+0x4b UChar", "retyped", "Flags", "+0x1a Uint2B", "+0x4a UChar"}},
		{[]string{"ETW_REG_ENTRY", "-diff", "1709", "1709"}, 0, []string{"no member moved"}},
		{[]string{"-diff", "6.1", "6.2", "-json", "etw_reg_entry"}, 0, []string{`"change": "moved"`, `"from": "6.1"`, `"from": "+0x1c UCHAR"`}},
		{[]string{"ETW_PMC_SUPPORT", "-versions"}, 0, []string{"1703", "HookIdCount", "0x20", "size"}},
		{[]string{"-list"}, 0, []string{"ETW_REG_ENTRY", "6.0 to 2004", "ETW_PMC_SUPPORT", "6.2 to 2004", "WMI_BUFFER_HEADER", "EVENT_HEADER"}},
		{[]string{"wmi_buffer_header", "-version", "6.1"}, 0, []string{"+0x030 Offset", "(filled bytes, the header included)", "size 0x48"}},
		{[]string{"ETW_PMC_SUPPORT", "-version", "6.1"}, 1, []string{"does not exist in Windows 6.1", "6.2 to 2004"}},
		// -diff and -versions refuse what -version refuses: a version or an architecture
		// without the structure.
		{[]string{"ETW_REG_ENTRY", "-diff", "5.0", "5.1"}, 1, []string{"does not exist in Windows 5.0", "6.0 to 2004"}},
		{[]string{"ETW_REG_ENTRY", "-diff", "2004", "5.0"}, 1, []string{"does not exist in Windows 5.0"}},
		{[]string{"WMI_LOGGER_CONTEXT", "-arch", "x86"}, 1, []string{"no x86 layout of WMI_LOGGER_CONTEXT", "x64 only"}},
		{[]string{"WMI_LOGGER_CONTEXT", "-versions", "-arch", "x86"}, 1, []string{"no x86 layout of WMI_LOGGER_CONTEXT"}},
		{[]string{"ETW_GUID_ENTRY", "-diff", "6.1", "2004", "-arch", "x86"}, 0, []string{"gives no member offsets for x86; -arch x64 compares them"}},
		{[]string{"ETW_GUID_ENTRY", "-version", "2004"}, 0, []string{"+0x080 EnableInfo", ": [8] _TRACE_ENABLE_INFO", "+0x190 HostEntry", "size 0x1a8"}},
		{[]string{"ETW_GUID_ENTRY", "-version", "6.1", "-arch", "x86"}, 0, []string{"gives no member offsets for x86", "size 0x178"}},
		// A user-mode structure known from binaries, and an SDK one, are no nt! symbols.
		{[]string{"ETW_UM_LOGGER_CONTEXT"}, 0, []string{"\n_ETW_UM_LOGGER_CONTEXT (Windows 2004"}},
		{[]string{"EVENT_TRACE_PROPERTIES"}, 0, []string{"\n_EVENT_TRACE_PROPERTIES (Windows 2004"}},
		{[]string{"ETW_NOTHING"}, 1, []string{"no structure"}},
		{[]string{}, 2, []string{"name a structure"}},
		{[]string{"ETW_REG_ENTRY", "-arch", "arm"}, 2, []string{"x86 or x64"}},
		{[]string{"ETW_REG_ENTRY", "-diff", "6.1"}, 2, []string{"two versions"}},
		{[]string{"ETW_REG_ENTRY", "-diff", "6.1", "7.7"}, 2, []string{"-diff"}},
		{[]string{"ETW_REG_ENTRY", "-version", "9"}, 2, []string{"Run 'etwemu help dt'"}},
		{[]string{"-h"}, 0, []string{"Usage: etwemu dt STRUCT", "-versions"}},
		{[]string{"EVENT_TRACE_PROPERTIES", "-r"}, 0, []string{"+0x000 Wnode", ": _WNODE_HEADER\n      +0x000 BufferSize", "      +0x028 ClientContext", "   +0x030 BufferSize"}},
		{[]string{"ETW_REG_ENTRY", "-r", "-version", "6.1"}, 0, []string{": <unnamed-tag> (union)\n      +0x020 ReplyQueue\n      +0x020 ReplySlot[4]\n      +0x020 SessionId"}},
		{[]string{"ETW_UM_LOGGER_CONTEXT", "-version", "5.0", "-arch", "x86"}, 0, []string{"+0x00c <unaccounted four or eight bytes>", ": [4] UChar", "+0x0c8 <unknown pointer to trace buffers>", ": Ptr32 Void", "size 0xd0"}},
		{[]string{"ETW_UM_LOGGER_CONTEXT", "-version", "10.0"}, 0, []string{"+0x090 LogFileHandle", "x64 offset rebuilt: the published table's cell reads 0x80", "+0x218 ProcessorBuffers", ": [1] Ptr64 _WMI_BUFFER_HEADER", "size 0x220"}},
	}
	for _, c := range cases {
		var out, errb bytes.Buffer
		code := run(append([]string{"dt"}, c.args...), &out, &errb)
		all := "\n" + out.String() + errb.String() // a title starts a line
		if code != c.code {
			t.Errorf("dt %v: exit %d, want %d\n%s", c.args, code, c.code, all)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(all, w) {
				t.Errorf("dt %v: no %q in\n%s", c.args, w, all)
			}
		}
	}
	var out, errb bytes.Buffer
	if code := run([]string{"dt", "ETW_REG_ENTRY", "-version", "2004", "-json"}, &out, &errb); code != 0 {
		t.Fatalf("dt -json: exit %d: %s", code, errb.String())
	}
	var v struct {
		Size    int `json:"size"`
		Members []struct {
			Offset int    `json:"offset"`
			Name   string `json:"name"`
		} `json:"members"`
	}
	if err := json.Unmarshal(out.Bytes(), &v); err != nil || v.Size != 0x70 || len(v.Members) == 0 || v.Members[len(v.Members)-1].Name != "Traits" || v.Members[len(v.Members)-1].Offset != 0x68 {
		t.Fatalf("dt -json: %+v, %v\n%s", v, err, out.String())
	}
}

// privateCitation matches the project's own names for its sources, which a reader cannot
// look up: the numbers of its specification files, its own digest of ETW internals and
// that digest's numbered sections.
var privateCitation = regexp.MustCompile(`(?i)seed|digest|section [0-9]|etw-internals`)

// publicCitation matches what a source line must name: an author and title, a header of
// the Windows SDK or phnt, or Microsoft's public symbols.
var publicCitation = regexp.MustCompile(`Geoff Chappell, "|\(Windows SDK\)|phnt ntwmi\.h|Microsoft's public symbols`)

// dt -list, and every structure's dt in every version and architecture (members, remarks,
// unions expanded, the -versions table and JSON), cite only public works that a reader can
// look up, and -list names one for every structure.
func TestDtCitesPublicSources(t *testing.T) {
	dt := func(args ...string) string {
		var out, errb bytes.Buffer
		// 1: a structure absent from one architecture in a version (x64 before 5.2).
		if code := run(append([]string{"dt"}, args...), &out, &errb); code != 0 && code != 1 {
			t.Fatalf("dt %v: exit %d: %s", args, code, errb.String())
		}
		if m := privateCitation.FindString(out.String() + errb.String()); m != "" {
			t.Errorf("dt %v says %q, which no reader can look up:\n%s", args, m, out.String())
		}
		return out.String()
	}
	list := dt("-list")
	dt("-list", "-json")
	for _, s := range layout.All() {
		line := ""
		for _, l := range strings.Split(list, "\n") {
			if strings.HasPrefix(l, s.Name+" ") {
				line = l
			}
		}
		if !publicCitation.MatchString(line) {
			t.Errorf("dt -list: %s cites no public source: %q", s.Name, line)
		}
		vs := s.Versions()
		for _, a := range []string{"x86", "x64"} {
			dt(s.Name, "-versions", "-arch", a)
			for i, v := range vs {
				dt(s.Name, "-version", v.String(), "-arch", a, "-r")
				dt(s.Name, "-version", v.String(), "-arch", a, "-json")
				if i > 0 {
					dt(s.Name, "-diff", vs[i-1].String(), v.String(), "-arch", a)
				}
			}
		}
	}
}

// A flag that another makes do nothing is refused with the pair named and exit 2, and
// each flag alone still works.
func TestDtConflictingFlags(t *testing.T) {
	for _, c := range dtConflicts {
		var args []string
		for _, f := range []string{c.flag, c.with} {
			switch f {
			case "version":
				args = append(args, "-version", "6.1")
			case "arch":
				args = append(args, "-arch", "x86")
			default:
				args = append(args, "-"+f)
			}
		}
		if c.flag != "list" && c.with != "list" {
			args = append([]string{"ETW_REG_ENTRY"}, args...)
		}
		if c.flag == "diff" || c.with == "diff" {
			args = append(args, "6.1", "6.2")
		}
		var out, errb bytes.Buffer
		if code := runDt(args, &out, &errb); code != 2 || !strings.Contains(errb.String(), "-"+c.flag+" and -"+c.with+": ") {
			t.Errorf("dt %q: exit %d, stderr %q", args, code, errb.String())
		}
	}
	for _, args := range [][]string{{"-list"}, {"ETW_REG_ENTRY", "-r", "-version", "6.1", "-arch", "x86"}, {"ETW_REG_ENTRY", "-diff", "6.1", "6.2", "-json"}, {"ETW_REG_ENTRY", "-versions", "-arch", "x86"}} {
		var out, errb bytes.Buffer
		if code := runDt(args, &out, &errb); code != 0 {
			t.Errorf("dt %q: exit %d, stderr %q", args, code, errb.String())
		}
	}
}
