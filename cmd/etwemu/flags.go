package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/etwemu/etwemu/abi"
)

// maxPayload is the largest payload one event can carry: EVENT_HEADER.Size is a USHORT,
// so header and payload together are at most 0xFFFF bytes. Every command's -payload uses it.
const maxPayload = abi.MaxEventSize - abi.EventHeaderSize

// maxBufferKB is the largest BufferSize any emulated version accepts (16 MB from 6.2;
// StartTrace clamps a value into the emulated version's own range and reports it back).
const maxBufferKB = 16384

// parseFlags parses a command's flags. about is the usage text printed before the flag
// list; positional names the arguments the command takes after its flags ("" for none,
// "FILE" for exactly one). -h prints the usage on stdout and stops with 0; a flag error
// is printed on stderr with a pointer to the help and stops with 2. It returns the exit
// code to stop with, or -1 to go on.
func parseFlags(fs *flag.FlagSet, about, positional string, args []string, stdout, stderr io.Writer) int {
	fs.SetOutput(stderr)
	fs.Usage = func() {} // the flag package prints the error; the help goes to stdout below
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, about, stdout)
			return 0
		}
		fmt.Fprintf(stderr, "Run 'etwemu help %s' for its flags.\n", fs.Name())
		return 2
	}
	switch {
	case positional == "" && fs.NArg() > 0:
		fmt.Fprintf(stderr, "etwemu %s: unexpected argument %q (this command takes flags only)\n", fs.Name(), fs.Arg(0))
		return 2
	case positional != "" && fs.NArg() != 1:
		fmt.Fprintf(stderr, "etwemu %s: name one %s (got %d arguments)\n", fs.Name(), positional, fs.NArg())
		return 2
	}
	return -1
}

// printUsage writes a command's usage text and its flags.
func printUsage(fs *flag.FlagSet, about string, w io.Writer) {
	fmt.Fprintln(w, about+"\n\nFlags:")
	out := fs.Output()
	fs.SetOutput(w)
	fs.PrintDefaults()
	fs.SetOutput(out)
}

// bounds checks a command's flag values once they are parsed. The first bad value makes
// the error, which names the flag, the value and what it may be.
type bounds struct {
	fs  *flag.FlagSet
	err error
}

func (b *bounds) fail(format string, args ...any) {
	if b.err == nil {
		b.err = fmt.Errorf(format, args...)
	}
}

// given reports whether the flag was set on the command line.
func (b *bounds) given(name string) bool {
	set := false
	b.fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// int checks lo <= v <= hi; why, if not empty, says where the range comes from.
func (b *bounds) int(name string, v, lo, hi int64, why string) {
	if v < lo || v > hi {
		if why != "" {
			why = " (" + why + ")"
		}
		b.fail("-%s %d: must be %d to %d%s", name, v, lo, hi, why)
	}
}

// uint checks v <= hi for an unsigned flag (it cannot be negative).
func (b *bounds) uint(name string, v uint, lo, hi uint64, why string) {
	if uint64(v) < lo || uint64(v) > hi {
		if why != "" {
			why = " (" + why + ")"
		}
		b.fail("-%s %d: must be %d to %d%s", name, v, lo, hi, why)
	}
}

// duration checks lo <= v <= hi.
func (b *bounds) duration(name string, v, lo, hi time.Duration, why string) {
	if v < lo || v > hi {
		if why != "" {
			why = " (" + why + ")"
		}
		b.fail("-%s %v: must be %v to %v%s", name, v, lo, hi, why)
	}
}

// needs fails when flag name was given without the flag it depends on.
func (b *bounds) needs(name, other string, has bool) {
	if b.given(name) && !has {
		b.fail("-%s needs -%s: without it the flag would have no effect", name, other)
	}
}

// done prints the error, if any, and returns the exit code to stop with, or -1.
func (b *bounds) done(stderr io.Writer) int {
	if b.err == nil {
		return -1
	}
	fmt.Fprintf(stderr, "etwemu %s: %v\n", b.fs.Name(), b.err)
	return 2
}
