// Command peers runs etwemu's write benchmark suite and, in the same run, the Go loggers
// people would otherwise use (zerolog and zap), and prints one Markdown table with every
// row's time per event against the floor's. It is a module of its own so that these
// dependencies never reach etwemu's users.
//
//	cd bench/peers && go run . -o table.md
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"github.com/etwemu/etwemu/bench/benchsuite"
)

func main() {
	testing.Init()
	benchtime := flag.Duration("benchtime", time.Second, "time per benchmark")
	short := flag.Bool("short", false, "run the short suite (as etwemu bench does)")
	out := flag.String("o", "", "also write the table to this file")
	flag.Parse()
	if err := run(*benchtime, *short, *out); err != nil {
		fmt.Fprintln(os.Stderr, "peers:", err)
		os.Exit(1)
	}
}

func run(benchtime time.Duration, short bool, out string) error {
	if benchtime <= 0 {
		return errors.New("-benchtime must be positive")
	}
	if err := flag.Set("test.benchtime", benchtime.String()); err != nil {
		return err
	}
	cases := suite(short)
	start := time.Now()
	fmt.Fprintf(os.Stderr, "%d benchmarks, %v each, GOMAXPROCS %d\n  machine probe, before\n", len(cases), benchtime, runtime.GOMAXPROCS(0))
	before := benchsuite.ProbeNs()
	results := benchsuite.Measure(context.Background(), cases, func(i int, c benchsuite.Case) {
		fmt.Fprintf(os.Stderr, "  [%d/%d] %s (%v)\n", i+1, len(cases), c.Name, time.Since(start).Round(time.Second))
	})
	fmt.Fprintln(os.Stderr, "  machine probe, after")
	table := benchsuite.Table(results) + benchsuite.Trailer(before, benchsuite.ProbeNs())
	fmt.Print(table)
	if out != "" {
		return os.WriteFile(out, []byte(table), 0o644)
	}
	return nil
}
