package main

import (
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/etwemu/etwemu/winver"
)

// versionInfo is what etwemu version prints.
type versionInfo struct {
	Module   string   `json:"module"`
	Version  string   `json:"version"`
	Revision string   `json:"revision,omitempty"`
	Modified bool     `json:"modified,omitempty"`
	Go       string   `json:"go"`
	Platform string   `json:"platform"`
	Windows  []string `json:"windows_versions"`
	Default  string   `json:"default_windows_version"`
}

func runVersion(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print one JSON object")
	about := "Usage: etwemu version [-json]\n       etwemu --version [-json]   (or -v: the same)\n\nPrints etwemu's module version (and VCS revision when built from a checkout), the Go\ntoolchain and platform, and the Windows versions the emulator can be asked for."
	if code := parseFlags(fs, about, "", args, stdout, stderr); code >= 0 {
		return code
	}
	v := versionInfo{Module: "github.com/etwemu/etwemu", Version: "(devel)", Go: runtime.Version(),
		Platform: runtime.GOOS + "/" + runtime.GOARCH, Default: winver.Default.String()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if bi.Main.Version != "" {
			v.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				v.Revision = s.Value
			case "vcs.modified":
				v.Modified = s.Value == "true"
			}
		}
	}
	for _, w := range winver.All() {
		v.Windows = append(v.Windows, w.String())
	}
	if *asJSON {
		return writeJSON("version", stdout, stderr, v)
	}
	fmt.Fprintf(stdout, "etwemu %s", v.Version)
	if v.Revision != "" {
		fmt.Fprintf(stdout, " (revision %.12s", v.Revision)
		if v.Modified {
			fmt.Fprint(stdout, ", modified")
		}
		fmt.Fprint(stdout, ")")
	}
	fmt.Fprintf(stdout, ", %s, %s\n", v.Go, v.Platform)
	fmt.Fprintf(stdout, "emulates Windows %s (default %s)\n", strings.Join(v.Windows, ", "), v.Default)
	return 0
}
