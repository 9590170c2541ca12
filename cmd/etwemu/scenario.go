package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"strings"

	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/internal/quote"
	"github.com/etwemu/etwemu/scenario"
)

var runAbout = fmt.Sprintf(`Usage: etwemu run [-disk MB] FILE

Runs a scenario: one command per line on an emulated kernel that is synchronous, with a
manual clock and in-memory files, so a scenario prints the same text every time. It
stops at the first command that fails unless the line expects that failure
(expect ERROR_... COMMAND, or the code by number), and says on stderr how many commands succeeded. "-" reads the
scenario from standard input. A line longer than %d bytes is an error naming its
line. The in-memory disk holds -disk MB, all log files together: past it a log file's
writes fail as on a full disk (ERROR_DISK_FULL) and its session counts the buffers in
LogBuffersLost. The first SIGINT or SIGTERM stops the command being run (a write
between chunks of events), stops every session (their files' headers are finalized),
prints their counters and exits with 128 plus the signal's number; a second exits at
once. The lessons in examples/ are scenarios; the commands are:
`, scenario.MaxLine)

var shellAbout = fmt.Sprintf(`Usage: etwemu shell [-disk MB]

Reads scenario commands one line at a time from standard input, from a terminal or a
pipe, and runs each at once; a failing command prints its error, with its line number,
and the shell goes on, as it does past a line longer than %d bytes. "help" lists the
commands, "help COMMAND" explains one, "quit" or end of input leaves: with exit status 1
if a command failed and the input is not a terminal (a script), else 0. The in-memory disk
holds -disk MB, all log files together (past it writes fail with ERROR_DISK_FULL). The
first SIGINT or SIGTERM stops the command being run, stops every session, prints their
counters and exits with 128 plus the signal's number; a second exits at once.`, scenario.MaxLine)

// maxDiskMB is the largest in-memory disk -disk may ask for: 64 GB, and at most half of
// the machine's memory (diskBound).
const maxDiskMB = 64 << 10

// machineMemory is physicalMemory; tests replace it.
var machineMemory = physicalMemory

// diskBound returns the most MB -disk may ask for on this machine, and where the bound
// comes from when it is the machine's memory. The disk's files are held in the process's
// memory: a disk the size of the machine's memory ends with the process killed for want
// of memory, never with the ERROR_DISK_FULL the flag promises. The default disk is always
// allowed.
func diskBound() (mb int64, why string) {
	mem := machineMemory()
	half := int64(mem/2) >> 20
	if mem == 0 || half >= maxDiskMB {
		return maxDiskMB, ""
	}
	half = max(half, etl.DefaultMemFSCapacity>>20)
	return half, fmt.Sprintf("the disk's files are held in memory: at most half of this machine's %d MB", mem>>20)
}

// machineHook, when set, sees each machine run and shell create, with the context that
// the first signal cancels. Tests set it to learn when a command has started.
var machineHook func(ctx context.Context, m *scenario.Machine)

// diskFlag adds -disk to fs.
func diskFlag(fs *flag.FlagSet) *int64 {
	return fs.Int64("disk", etl.DefaultMemFSCapacity>>20, fmt.Sprintf("the in-memory disk's size in `MB`, all log files together (1 to %d, and at most half of the machine's memory); past it log-file writes fail with ERROR_DISK_FULL and the session counts LogBuffersLost; a scenario's kernel disk=N may ask for less", maxDiskMB))
}

// checkDisk checks -disk, printing the error; it returns the exit code, or -1.
func checkDisk(fs *flag.FlagSet, disk int64, stderr io.Writer) int {
	b := bounds{fs: fs}
	hi, why := diskBound()
	b.int("disk", disk, 1, hi, why)
	return b.done(stderr)
}

// newMachine checks -disk and returns a machine that prints to stdout, or the exit code.
func newMachine(ctx context.Context, fs *flag.FlagSet, disk int64, stdout, stderr io.Writer) (*scenario.Machine, int) {
	if code := checkDisk(fs, disk, stderr); code >= 0 {
		return nil, code
	}
	m := scenario.NewLimited(stdout, scenario.Limits{Disk: disk << 20})
	if os.Getenv("GOMEMLIMIT") == "" {
		// What a scenario may hold (its sessions' buffers, its disk) and room for the
		// rest: past it the collector works harder rather than let the garbage of views
		// and failed saves (a copy of a 16 MB buffer each) double the heap, as by default.
		debug.SetMemoryLimit(scenario.DefaultBufferMemory + disk<<20 + 256<<20)
	}
	if machineHook != nil {
		machineHook(ctx, m)
	}
	return m, -1
}

func runScenario(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	disk := diskFlag(fs)
	var about strings.Builder
	about.WriteString(runAbout)
	scenario.Help(&about)
	if code := parseFlags(fs, about.String(), "FILE", args, stdout, stderr); code >= 0 {
		return code
	}
	if code := checkDisk(fs, *disk, stderr); code >= 0 {
		return code // a bad flag is named before the file is opened
	}
	name := fs.Arg(0)
	var in io.Reader = os.Stdin
	if name != "-" {
		f, err := openInput(name)
		if err != nil {
			fmt.Fprintf(stderr, "etwemu run: %v\n", err)
			return 1
		}
		defer f.Close()
		in = f
	}
	ctx, stop := interruptible(context.Background(), stderr, "the scenario")
	defer stop()
	m, code := newMachine(ctx, fs, *disk, stdout, stderr)
	if code >= 0 {
		return code
	}
	defer m.Close()
	ran, err := m.RunContext(ctx, in)
	if code := interruptedCode(ctx); code != 0 {
		return interrupted(ctx, m, "run: "+name, err, ran, stderr)
	}
	if err != nil {
		fmt.Fprintf(stderr, "etwemu run: %s: %v (%s ran before it)\n", name, err, quote.Count(ran, "command"))
		return 1
	}
	fmt.Fprintf(stderr, "etwemu run: %s: %s ran\n", name, quote.Count(ran, "command"))
	return 0
}

// interrupted ends a command that a signal stopped: it stops every session (their
// counters go to stdout), says on stderr where it stopped (err, the stopped command's
// error, or the signal when none was running) and returns interruptedCode.
func interrupted(ctx context.Context, m *scenario.Machine, what string, err error, ran int, stderr io.Writer) int {
	if e := m.StopAll(); e != nil {
		fmt.Fprintf(stderr, "etwemu %s: %v\n", what, e)
	}
	done := quote.Count(ran, "command") + " ran before it" // the command the signal stopped
	if err == nil {
		err, done = context.Cause(ctx), quote.Count(ran, "command")+" succeeded"
	}
	fmt.Fprintf(stderr, "etwemu %s: %v (%s); every session was stopped\n", what, err, done)
	return interruptedCode(ctx)
}

func runShell(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("shell", flag.ContinueOnError)
	disk := diskFlag(fs)
	if code := parseFlags(fs, shellAbout, "", args, stdout, stderr); code >= 0 {
		return code
	}
	ctx, stop := interruptible(context.Background(), stderr, "the shell")
	defer stop()
	m, code := newMachine(ctx, fs, *disk, stdout, stderr)
	if code >= 0 {
		return code
	}
	defer m.Close()
	return shell(ctx, m, os.Stdin, stdout, stderr, isTerminal(os.Stdin))
}

// shell runs commands from in on m until the input ends, a line says quit or ctx is
// done; prompt is for terminals. A cancelled ctx (a signal) stops every session and
// returns interruptedCode.
func shell(ctx context.Context, m *scenario.Machine, in io.Reader, stdout, stderr io.Writer, prompt bool) int {
	lines := scenario.Lines(ctx, in)
	ran, failed := 0, 0
	var last error // the command a signal stopped, if one did
	// end is the exit status at the end of the input or quit: a script fed to the shell
	// learns that a command failed, a terminal's user saw it.
	end := func() int {
		if failed > 0 && !prompt {
			return 1
		}
		return 0
	}
	if prompt {
		fmt.Fprintln(stdout, "etwemu shell: type scenario commands, one a line; help lists them, quit (or Ctrl-D) ends.")
	}
	for ctx.Err() == nil {
		if prompt {
			fmt.Fprint(stdout, "etwemu> ")
		}
		var l scenario.Line
		var ok bool
		select {
		case l, ok = <-lines:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		if !ok {
			if prompt {
				fmt.Fprintln(stdout) // the input ended at the prompt
			}
			return end()
		}
		if l.Err != nil {
			if errors.Is(l.Err, scenario.ErrLineTooLong) {
				fmt.Fprintf(stderr, "error: line %d: %v: the line is skipped\n", l.N, l.Err)
				failed++
				continue
			}
			fmt.Fprintf(stderr, "error: line %d: %v\n", l.N, l.Err)
			return 1
		}
		if w := strings.TrimSpace(l.Text); strings.EqualFold(w, "quit") || strings.EqualFold(w, "exit") {
			return end()
		}
		if err := m.ExecContext(ctx, l.Text); err != nil {
			if ctx.Err() != nil {
				last = fmt.Errorf("line %d: %w", l.N, err)
				break
			}
			fmt.Fprintf(stderr, "error: line %d: %v\n", l.N, err)
			failed++
		} else if t := strings.TrimSpace(l.Text); t != "" && t[0] != '#' {
			ran++ // the commands that succeeded
		}
	}
	if prompt {
		fmt.Fprintln(stdout)
	}
	return interrupted(ctx, m, "shell", last, ran, stderr)
}
