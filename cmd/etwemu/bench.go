package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/etwemu/etwemu/internal/benchsuite"
)

func runBench(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	benchtime := fs.Duration("benchtime", 300*time.Millisecond, "time per benchmark")
	full := fs.Bool("full", false, "run the whole suite of bench/ (about 60 benchmarks) instead of the short one")
	about := "Usage: etwemu bench [flags]\n\nRuns etwemu's write benchmarks (the suite of bench/, short by default) and prints a\ntable: time per event, throughput, events lost, allocations, and each time against the\nfloor (the least any per-processor tracer must do) at the same payload. Progress lines\ngo to stderr, so 'etwemu bench > table.md' keeps only the table. Other loggers (zerolog,\nzap) are in the separate module bench/peers."
	if code := parseFlags(fs, about, "", args, stdout, stderr); code >= 0 {
		return code
	}
	b := bounds{fs: fs}
	b.duration("benchtime", *benchtime, time.Millisecond, 10*time.Minute, "")
	if code := b.done(stderr); code >= 0 {
		return code
	}
	if err := setBenchtime(*benchtime); err != nil {
		fmt.Fprintf(stderr, "etwemu bench: %v\n", err)
		return 1
	}
	cases := benchsuite.Short()
	if *full {
		cases = benchsuite.Full()
	}
	fmt.Fprintf(stdout, "%d benchmarks, %v each, GOMAXPROCS %d, %s/%s\n\n", len(cases), *benchtime, runtime.GOMAXPROCS(0), runtime.GOOS, runtime.GOARCH)
	tty := isTerminal(stderr)
	results := benchsuite.Measure(cases, func(i int, c benchsuite.Case) {
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
	fmt.Fprint(stdout, benchsuite.Table(results))
	fmt.Fprintln(stdout, "\n× floor is the time per event against the floor's at the same payload and parallelism:")
	fmt.Fprintln(stdout, "the floor reads the clock, does one atomic add and copies the record, nothing else.")
	fmt.Fprintln(stdout, "For numbers to compare, use `go test -bench . -count 10 ./bench/` and benchstat.")
	return 0
}

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

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
