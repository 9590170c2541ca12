package main

import (
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"github.com/etwemu/etwemu/internal/quote"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/winver"
)

const pmcAbout = `Usage: etwemu pmc [flags]

Says which processor performance counter source this machine gives the emulator and
why the better ones cannot be used (no PMU, perf_event_paranoid, rdpmc disabled), reads
the chosen source's counters to show what a read costs, and prints the layout of
ETW_PMC_SUPPORT, the logger's PMC configuration, by Windows version (6.2 and later) with
the sources one logger may nominate.

Example: etwemu pmc -version 1809 -counters 8`

func runPMC(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("pmc", flag.ContinueOnError)
	var version winver.Version
	fs.Var(&version, "version", "show one Windows version's layout (default: all versions with PMC support)")
	source := fs.String("source", pmc.NameAuto, "counter source to read: auto, perf-rdpmc, perf-read, tsc, synthetic")
	counters := fs.Int("counters", pmc.DefaultPlatformCounters, fmt.Sprintf("counters per processor of the emulated HAL (1 to %d)", pmc.MaxPlatformCounters))
	reads := fs.Int("reads", 100000, "reads to time (1 to 100000000)")
	asJSON := fs.Bool("json", false, "print one JSON object: the sources and the chosen one, the reads, the layouts")
	if code := parseFlags(fs, pmcAbout, "", args, stdout, stderr); code >= 0 {
		return code
	}
	b := bounds{fs: fs}
	b.int("counters", int64(*counters), 1, pmc.MaxPlatformCounters, "the emulated HAL's limit")
	b.int("reads", int64(*reads), 1, 100_000_000, "")
	if !pmc.KnownSource(*source) {
		b.fail("-source %s: not a counter source (auto, %s, %s, %s, %s)", quote.Short(*source), pmc.NamePerfRDPMC, pmc.NamePerfRead, pmc.NameTSC, pmc.NameSynthetic)
	}
	if code := b.done(stderr); code >= 0 {
		return code
	}
	hal, err := pmc.NewHAL(pmc.Synthetic{}, *counters)
	if err != nil {
		fmt.Fprintf(stderr, "etwemu pmc: %v\n", err)
		return 2
	}

	d := pmc.Detect()
	out := stdout
	if *asJSON {
		out = io.Discard // the text goes nowhere; the object is printed at the end
	}
	fmt.Fprintf(out, "Counter sources on this machine, best first (-> chosen):\n%s\n", d)
	src, _, err := pmc.Choose(*source)
	if err != nil {
		fmt.Fprintf(stderr, "etwemu pmc: %v\n", err)
		return 1
	}
	var srcs []pmc.ProfileSource
	for s := pmc.ProfileSource(0); s < pmc.ProfileMaximum && len(srcs) < *counters; s++ {
		if src.Counts(s) == nil {
			srcs = append(srcs, s)
		}
	}
	set, err := src.Open(srcs, 1)
	if err != nil {
		fmt.Fprintf(stderr, "etwemu pmc: opening %s counters %v: %v\n", src.Name(), srcs, err)
		return 1
	}
	defer set.Close()
	first := make([]uint64, len(srcs))
	last := make([]uint64, len(srcs))
	set.Read(0, 1, first)
	start := time.Now()
	for i := 0; i < *reads; i++ {
		set.Read(0, uint64(i+2), last)
	}
	per := time.Since(start) / time.Duration(*reads)
	view := pmcView{Sources: []pmcSource{}, Source: src.Name(), Reads: *reads, NsPerRead: float64(per.Nanoseconds()), Counters: []pmcCounter{}, Layouts: []pmcLayout{}}
	for _, c := range d.Candidates {
		view.Sources = append(view.Sources, pmcSource{Name: c.Name, Usable: c.OK, Chosen: c.Name == d.Chosen, Why: c.Why})
	}
	fmt.Fprintf(out, "%s: %d reads of processor 0's %d counters, %v per read\n", src.Name(), *reads, len(srcs), per)
	for i, s := range srcs {
		fmt.Fprintf(out, "  %-20v first %d, last %d\n", s, first[i], last[i])
		view.Counters = append(view.Counters, pmcCounter{Source: s.String(), First: first[i], Last: last[i]})
	}

	fmt.Fprintf(out, "\nETW_PMC_SUPPORT (offsets x86/x64; sizes with one ProcessorCtrs element), HAL with %d counters per processor:\n", *counters)
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "versions\tSource\tHookIdCount\tHookId[4]\tCountersCount\tProcessorCtrs\tsize\tmax sources")
	seen := map[winver.Range]bool{}
	for _, v := range winver.All() {
		l, ok := pmc.LayoutFor(v)
		if !ok || seen[l.Versions] || (version != 0 && !l.Versions.Contains(version)) {
			continue
		}
		seen[l.Versions] = true
		kind := "KPROFILE_SOURCE *"
		if l.SourceSlots > 0 {
			kind = fmt.Sprintf("KPROFILE_SOURCE [%d]", l.SourceSlots)
		}
		fmt.Fprintf(tw, "%v\t%s\t%s\t%s\t%s\t%s\t%s\t%d\n", l.Versions, kind, pair(l.HookIDCount), pair(l.HookID),
			pair(l.CountersCount), pair(l.ProcessorCtrs), pair(l.Size), hal.MaxCounters(v))
		view.Layouts = append(view.Layouts, pmcLayout{Versions: l.Versions.String(), Source: kind, HookIDCount: l.HookIDCount, HookID: l.HookID,
			CountersCount: l.CountersCount, ProcessorCtrs: l.ProcessorCtrs, Size: l.Size, MaxSources: hal.MaxCounters(v)})
	}
	tw.Flush()
	if version != 0 {
		if _, ok := pmc.LayoutFor(version); !ok {
			fmt.Fprintf(out, "Windows %s has no PMC support for loggers (6.2 and later).\n", version)
		}
	}
	if *asJSON {
		return writeJSON("pmc", stdout, stderr, view)
	}
	return 0
}

// pmcView is what pmc prints, for -json.
type pmcView struct {
	Sources   []pmcSource  `json:"sources"` // best first
	Source    string       `json:"source"`  // the one read
	Reads     int          `json:"reads"`
	NsPerRead float64      `json:"nsPerRead"`
	Counters  []pmcCounter `json:"counters"`
	Layouts   []pmcLayout  `json:"layouts"` // ETW_PMC_SUPPORT by version range
}

type pmcSource struct {
	Name   string `json:"name"`
	Usable bool   `json:"usable"`
	Chosen bool   `json:"chosen"` // what auto picks
	Why    string `json:"why"`
}

type pmcCounter struct {
	Source string `json:"source"`
	First  uint64 `json:"first"` // the first read and the last, of processor 0
	Last   uint64 `json:"last"`
}

// pmcLayout is one row of the layout table; each pair is the x86 and the x64 value.
type pmcLayout struct {
	Versions      string    `json:"versions"`
	Source        string    `json:"source"`
	HookIDCount   [2]uint32 `json:"hookIdCount"`
	HookID        [2]uint32 `json:"hookId"`
	CountersCount [2]uint32 `json:"countersCount"`
	ProcessorCtrs [2]uint32 `json:"processorCtrs"`
	Size          [2]uint32 `json:"size"`
	MaxSources    int       `json:"maxSources"`
}

func pair(v [2]uint32) string { return fmt.Sprintf("%#x/%#x", v[0], v[1]) }
