package main

import (
	"flag"
	"fmt"
	"io"
	"text/tabwriter"
	"time"

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
	if code := parseFlags(fs, pmcAbout, "", args, stdout, stderr); code >= 0 {
		return code
	}
	b := bounds{fs: fs}
	b.int("counters", int64(*counters), 1, pmc.MaxPlatformCounters, "the emulated HAL's limit")
	b.int("reads", int64(*reads), 1, 100_000_000, "")
	if !pmc.KnownSource(*source) {
		b.fail("-source %q: not a counter source (auto, %s, %s, %s, %s)", *source, pmc.NamePerfRDPMC, pmc.NamePerfRead, pmc.NameTSC, pmc.NameSynthetic)
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
	fmt.Fprintf(stdout, "Counter sources on this machine, best first (-> chosen):\n%s\n", d)
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
	fmt.Fprintf(stdout, "%s: %d reads of processor 0's %d counters, %v per read\n", src.Name(), *reads, len(srcs), per)
	for i, s := range srcs {
		fmt.Fprintf(stdout, "  %-20v first %d, last %d\n", s, first[i], last[i])
	}

	fmt.Fprintf(stdout, "\nETW_PMC_SUPPORT (offsets x86/x64; sizes with one ProcessorCtrs element), HAL with %d counters per processor:\n", *counters)
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
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
	}
	tw.Flush()
	if version != 0 {
		if _, ok := pmc.LayoutFor(version); !ok {
			fmt.Fprintf(stdout, "Windows %s has no PMC support for loggers (6.2 and later).\n", version)
		}
	}
	return 0
}

func pair(v [2]uint32) string { return fmt.Sprintf("%#x/%#x", v[0], v[1]) }
