// Command etwemu runs the ETW kernel emulator from the command line: a demo that shows
// event-write throughput on a realistic session, and (as the project grows) views of the
// emulated kernel.
package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"sync"

	"github.com/etwemu/etwemu/internal/quote"
	"github.com/etwemu/etwemu/winerr"
)

// command is one subcommand.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
	subs    []string // its subcommands, for etwemu help CMD SUB
}

var commands map[string]command

func init() {
	commands = map[string]command{
		"bench":   {"run the write benchmarks (short suite) with a progress line and print the table", runBench, nil},
		"demo":    {"start a session, register three providers and write events from every processor; report throughput and losses", runDemo, nil},
		"dt":      {"print a Windows structure by version as WinDbg's dt does: offsets, types, sizes, diffs between versions", runDt, nil},
		"dump":    {"print an ETL file's header and records, as text or JSON lines", runDump, nil},
		"logsave": {"run an in-memory (BUFFERING) session and save its ring of buffers to an ETL file", runLogsave, nil},
		"help":    {"list the commands, or show one command's flags: etwemu help demo", runHelp, nil},
		"run":     {"run a scenario file: sessions, providers, writes and views on a synchronous kernel with a manual clock", runScenario, nil},
		"shell":   {"type scenario commands one line at a time and see the emulated kernel answer", runShell, nil},
		"pmc":     {"which performance-counter source this machine allows and why; ETW_PMC_SUPPORT layouts by version", runPMC, nil},
		"modes":   {"would Windows version V start this session? check a LogFileMode, or list a version's mode rules", runModes, []string{"check", "table"}},
		"web":     {"serve a page that draws the emulated kernel: the lessons stepped forward and back, a command box, a live mode", runWeb, nil},
		"version": {"print etwemu's version, the Go toolchain it was built with and the Windows versions it emulates", runVersion, nil},
	}
}

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	name := args[0]
	switch name {
	case "-h", "--help", "-help":
		name = "help"
	case "-v", "--version", "-version": // as most command lines answer them
		name = "version"
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "etwemu: unknown command %s\n\n", quote.Short(args[0]))
		usage(stderr)
		return 2
	}
	out := &outputWriter{w: stdout}
	code := c.run(args[1:], out, stderr)
	if err := out.failed(); err != nil && code == 0 {
		fmt.Fprintf(stderr, "etwemu %s: %v\n", name, err)
		return 1
	}
	return code
}

// outputWriter is a command's standard output, keeping the first error writing to it: a
// command that did its work fails all the same when what it printed did not reach its
// output (a full disk). Commands may write from more than one goroutine (mu).
type outputWriter struct {
	w   io.Writer
	mu  sync.Mutex
	err error // the first write error, under mu
}

func (o *outputWriter) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	n, err := o.w.Write(p)
	if err != nil {
		if o.err == nil {
			o.err = err
		}
		// The command that wrote says so with the Windows code, as run does for a
		// command that did its work; the operating system's error stays in the chain.
		err = outputError{winerr.WriteFailed(err, "the output was not written whole"), err}
	}
	return n, err
}

// outputError is a failed write to a command's output: its text is the Windows error
// (ERROR_DISK_FULL), and errors.Is and As see both that and the operating system's.
type outputError struct{ win, os error }

func (e outputError) Error() string   { return e.win.Error() }
func (e outputError) Unwrap() []error { return []error{e.win, e.os} }

// Stat is the output file's, where the output is a file: commands ask whether it is a
// terminal.
func (o *outputWriter) Stat() (os.FileInfo, error) {
	if f, ok := o.w.(*os.File); ok {
		return f.Stat()
	}
	return nil, errors.ErrUnsupported
}

// failed returns the first write error as the Windows code a full disk gives
// (ERROR_DISK_FULL), or nil.
func (o *outputWriter) failed() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.err == nil {
		return nil
	}
	return winerr.WriteFailed(o.err, "the output was not written whole")
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "etwemu emulates the kernel side of Event Tracing for Windows (ETW) in Go.")
	fmt.Fprintln(w, "\nUsage: etwemu <command> [flags]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-8s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'etwemu help <command>' for a command's flags; 'etwemu --version' (or -v) is 'etwemu version'.")
}

func runHelp(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "-help" {
		usage(stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if len(args) == 2 && ok && slices.Contains(c.subs, args[1]) {
		return c.run([]string{args[1], "-h"}, stdout, stdout)
	}
	if len(args) > 1 {
		fmt.Fprintf(stderr, "etwemu help: one command at a time: etwemu help %s\n", args[0])
		return 2
	}
	if !ok || args[0] == "help" {
		if !ok {
			fmt.Fprintf(stderr, "etwemu: unknown command %s (etwemu help lists the commands)\n", quote.Short(args[0]))
			return 2
		}
		usage(stdout)
		return 0
	}
	return c.run([]string{"-h"}, stdout, stdout)
}
