package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/etwemu/etwemu/bench/benchbase"
	"github.com/etwemu/etwemu/bench/benchsuite"
	"github.com/etwemu/etwemu/internal/quote"
)

func runBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	benchtime := fs.Duration("benchtime", 300*time.Millisecond, "time per benchmark (1ms to 10m)")
	full := fs.Bool("full", false, fmt.Sprintf("run the whole suite of bench/ (%d benchmarks) instead of the short one (%d)", len(benchsuite.Full()), len(benchsuite.Short())))
	sweep := fs.Bool("sweep", false, "instead of the suite, the processor sweep: events/s of the emulator, the floor, the floor with recycled buffers and the mutex with 1 to -max-writers writer goroutines, and in every round the machine probe (ALU work alone), whose spread shows whether the machine held still")
	maxWriters := fs.Int("max-writers", runtime.NumCPU(), "with -sweep: the most writer goroutines (1 to 256); every count from 1 up is measured")
	writerList := fs.String("writers", "", "with -sweep, instead of -max-writers: the writer counts to measure, a comma-separated list such as 1,2,4,8,16 (each 1 to 256)")
	count := fs.Int("count", 1, "with -sweep: rounds, each running every design once; the median of each point reported (1 to 100)")
	asJSON := fs.Bool("json", false, "with -sweep: print the points as JSON instead of a table")
	svg := fs.String("svg", "", "with -sweep: also write the chart of events/s against writers to this SVG file")
	force := fs.Bool("force", false, "with -svg: "+forceHelp)
	about := "Usage: etwemu bench [flags]\n\nRuns etwemu's write benchmarks (the suite of bench/, short by default) and prints a\ntable: time per event, throughput, events lost, allocations, and each time against the\nfloor (the least any per-processor tracer must do) at the same payload, then the machine\nprobe's time before and after the suite, which shows whether the machine's speed moved.\nProgress lines go to stderr, so 'etwemu bench > table.md' keeps only the table. Other\nloggers (zerolog, zap) are in the separate module bench/peers.\n\nSIGINT or SIGTERM (Ctrl-C) stops after the run under way and prints what was measured\nwhole (the suite's finished rows, the sweep's writer counts with a whole round); the\nexit status is then 128 plus the signal's number. A second signal exits at once.\n\nOn Linux, ETWEMU_BENCH_CPU=N pins the writer of the one-goroutine rows to CPU N, to\ncompare two builds on the same CPU of a machine whose CPUs do not run equally fast."
	if code := parseFlags(fs, about, "", args, stdout, stderr); code >= 0 {
		return code
	}
	b := bounds{fs: fs}
	b.duration("benchtime", *benchtime, time.Millisecond, 10*time.Minute, "")
	b.int("max-writers", int64(*maxWriters), 1, 256, "")
	b.int("count", int64(*count), 1, 100, "")
	var writers []int // -max-writers' counts once the bounds hold, or -writers' list
	if b.given("writers") {
		if b.given("max-writers") {
			b.fail("-writers and -max-writers: choose one")
		}
		var err error
		if writers, err = parseWriters(*writerList); err != nil {
			b.fail("-writers %s: %v", *writerList, err)
		}
	}
	for _, name := range []string{"max-writers", "writers", "count", "json", "svg"} {
		b.needs(name, "sweep", *sweep)
	}
	if *sweep && *full {
		b.fail("-full and -sweep: choose one")
	}
	if _, _, err := benchbase.PinCPU(); err != nil {
		b.fail("%v", err)
	}
	b.needs("force", "svg", *svg != "")
	if code := b.done(stderr); code >= 0 {
		return code
	}
	if writers == nil {
		writers = benchsuite.UpTo(*maxWriters)
	}
	if *svg != "" {
		if err := checkOutput(stderr, "bench", "svg", *svg, svgOutput, *force, false); err != nil {
			fmt.Fprintf(stderr, "etwemu bench: %v\n", err)
			return 1
		}
	}
	if err := setBenchtime(*benchtime); err != nil {
		fmt.Fprintf(stderr, "etwemu bench: %v\n", err)
		return 1
	}
	ctx, stop := interruptible(context.Background(), stderr, "the benchmarks after the run under way")
	defer stop()
	if *sweep {
		return runSweep(ctx, writers, *count, *asJSON, *svg, stdout, stderr)
	}
	cases := benchsuite.Short()
	if *full {
		cases = benchsuite.Full()
	}
	fmt.Fprintf(stdout, "%d benchmarks, %v each, GOMAXPROCS %d, %s/%s\n\n", len(cases), *benchtime, runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	tty := isTerminal(stderr)
	fmt.Fprintln(stderr, "  machine probe, before")
	before := benchsuite.ProbeNs()
	results := benchsuite.Measure(ctx, cases, func(i int, c benchsuite.Case) {
		if benchMeasuring != nil {
			benchMeasuring(ctx, i)
		}
		line := fmt.Sprintf("  [%d/%d] %s", i+1, len(cases), c.Name)
		if tty {
			fmt.Fprintf(stderr, "\r\033[K%s", line)
		} else {
			fmt.Fprintln(stderr, line)
		}
	})
	if tty {
		fmt.Fprint(stderr, "\r\033[K")
	}
	if code := interruptedCode(ctx); code != 0 { // no probe after: it would run its whole -benchtime
		fmt.Fprintf(stdout, "Interrupted: the %d of %d benchmarks measured whole.\n\n", len(results), len(cases))
		fmt.Fprint(stdout, benchsuite.Table(results), benchsuite.Trailer(before, 0))
		return code
	}
	fmt.Fprintln(stderr, "  machine probe, after")
	after := benchsuite.ProbeNs()
	fmt.Fprint(stdout, benchsuite.Table(results), benchsuite.Trailer(before, after))
	return 0
}

// benchMeasuring, when not nil, is called with bench's context before the i-th
// benchmark of the suite, or the i-th run of the sweep, counted from 0: a test sends its
// signal there.
var benchMeasuring func(ctx context.Context, i int)

// setBenchtime sets the time testing.Benchmark gives each benchmark, which it takes from
// the testing package's -test.benchtime flag.
func setBenchtime(d time.Duration) error {
	testing.Init()
	f := flag.Lookup("test.benchtime")
	if f == nil {
		return errors.New("the testing package has no benchtime flag")
	}
	return f.Value.Set(d.String())
}

// parseWriters reads -writers: writer counts of 1 to 256, comma-separated, each once, in
// increasing order.
func parseWriters(list string) ([]int, error) {
	var out []int
	for _, f := range strings.Split(list, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		switch {
		case err != nil:
			return nil, fmt.Errorf("%s is not a number of writers", quote.Short(f))
		case n < 1 || n > 256:
			return nil, fmt.Errorf("%d: each count must be 1 to 256", n)
		case len(out) > 0 && n <= out[len(out)-1]:
			return nil, fmt.Errorf("%d after %d: list the counts once each, in increasing order", n, out[len(out)-1])
		}
		out = append(out, n)
	}
	return out, nil
}

// describeWriters says which writer counts a sweep measured, for its title.
func describeWriters(writers []int) string {
	if slices.Equal(writers, benchsuite.UpTo(len(writers))) {
		return fmt.Sprintf("1 to %d", len(writers))
	}
	s := make([]string, len(writers))
	for i, w := range writers {
		s[i] = strconv.Itoa(w)
	}
	return strings.Join(s, ", ")
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && terminal(f)
}

// runSweep measures and prints the processor sweep, and writes its chart if asked.
// A signal stops it after the run under way: it prints the points of the writer counts
// with a whole round and exits with 128 plus the signal's number.
func runSweep(ctx context.Context, writers []int, count int, asJSON bool, svg string, stdout, stderr io.Writer) int {
	total := benchsuite.SweepRuns(writers, count)
	done := 0
	points := benchsuite.Sweep(ctx, writers, count, func(w int, design string, run int) {
		if benchMeasuring != nil {
			benchMeasuring(ctx, done)
		}
		done++
		fmt.Fprintf(stderr, "  [%d/%d] %d writer(s), %s, run %d\n", done, total, w, design, run+1)
	})
	if points == nil {
		points = []benchsuite.SweepPoint{} // [] in JSON: interrupted before a whole round
	}
	if asJSON {
		if code := writeJSON("bench", stdout, stderr, points); code != 0 {
			return code
		}
	} else {
		fmt.Fprintf(stdout, "Processor sweep: 64-byte events from %s writer goroutines (GOMAXPROCS = writers), %d run(s) a point, on %d CPUs, %s/%s\n\n",
			describeWriters(writers), count, runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
		fmt.Fprint(stdout, benchsuite.SweepTable(points))
		fmt.Fprintln(stdout, "\nMedians, with the slowest run's rate in brackets; against the floor, the median of each round's ratio. Writers beyond the machine's CPUs share them.\nThe machine probe does ALU work alone, as many goroutines as writers, once a round: on a machine that holds still it varies by a few percent; more, and the designs' runs varied with it.")
	}
	if svg != "" {
		title := fmt.Sprintf("etwemu write throughput against writers (%d CPUs, %s/%s)", runtime.NumCPU(), runtime.GOOS, runtime.GOARCH)
		if err := writeOutput(svg, []byte(benchsuite.SweepSVG(points, title))); err != nil {
			fmt.Fprintf(stderr, "etwemu bench: -svg: %v\n", err)
			return 1
		}
		fmt.Fprintf(stderr, "chart written to %s\n", svg)
	}
	if code := interruptedCode(ctx); code != 0 {
		fmt.Fprintf(stderr, "etwemu bench: interrupted: the points above are the writer counts with a whole round\n")
		return code
	}
	return 0
}
