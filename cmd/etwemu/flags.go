package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/internal/quote"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
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
	fs.SetOutput(io.Discard) // the error is printed below, named by the command
	fs.Usage = func() {}     // the help goes to stdout below
	err := fs.Parse(args)
	fs.SetOutput(stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fs, about, stdout)
			return 0
		}
		fmt.Fprintf(stderr, "etwemu %s: %v%s\nRun 'etwemu help %s' for its flags.\n", fs.Name(), err, valueHint(fs, err), fs.Name())
		return 2
	}
	switch {
	case positional == "" && fs.NArg() > 0:
		fmt.Fprintf(stderr, "etwemu %s: unexpected argument %s (this command takes flags only)\n", fs.Name(), quote.Short(fs.Arg(0)))
		return 2
	case positional != "" && fs.NArg() != 1:
		fmt.Fprintf(stderr, "etwemu %s: name one %s (got %d arguments%s)\n", fs.Name(), positional, fs.NArg(), flagAfter(fs, positional))
		return 2
	}
	return -1
}

// valueHint says what a flag of a duration or a number takes, when err is the flag
// package's refusal of its value ("1x", go test's count of runs, is no duration; -1 is
// no count); "" otherwise.
func valueHint(fs *flag.FlagSet, err error) string {
	m := parseError.FindStringSubmatch(err.Error())
	if m == nil {
		return ""
	}
	if f := fs.Lookup(m[2]); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			switch g.Get().(type) {
			case time.Duration:
				if v, _ := strconv.Unquote(m[1]); longDuration.MatchString(v) {
					return " (a duration such as 300ms, 2s or 1m; that one passes the largest, about 2562047h)"
				}
				return " (a duration such as 300ms, 2s or 1m)"
			case uint, uint64:
				return " (a whole number, 0 or more)"
			case int, int64:
				return " (a whole number)"
			}
		}
	}
	return ""
}

// parseError matches the flag package's refusal of a value: the value as %q quotes it,
// then the flag.
var parseError = regexp.MustCompile(`invalid value (".*") for flag -(\S+): parse error`)

// longDuration matches a well-formed duration, which time.ParseDuration refuses only when
// it passes the largest time.Duration.
var longDuration = regexp.MustCompile(`^[0-9]+(\.[0-9]*)?(ns|us|µs|ms|s|m|h)$`)

// flagAfter returns, for a command given more arguments than it takes, the hint that a
// flag written after its positional argument was taken as another argument; "" if none.
func flagAfter(fs *flag.FlagSet, positional string) string {
	for i, a := range fs.Args() {
		if i > 0 && strings.HasPrefix(a, "-") {
			return fmt.Sprintf("; flags come before the %s: %s after it is taken as an argument", positional, quote.Short(a))
		}
	}
	return ""
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
		b.outside(name, v, lo, hi, why)
	}
}

// uint checks lo <= v <= hi for an unsigned flag.
func (b *bounds) uint(name string, v, lo, hi uint64, why string) {
	if v < lo || v > hi {
		b.outside(name, v, lo, hi, why)
	}
}

// duration checks lo <= v <= hi.
func (b *bounds) duration(name string, v, lo, hi time.Duration, why string) {
	if v < lo || v > hi {
		b.outside(name, v, lo, hi, why)
	}
}

// outside records that flag name's value v is not within lo to hi.
func (b *bounds) outside(name string, v, lo, hi any, why string) {
	if why != "" {
		why = " (" + why + ")"
	}
	b.fail("-%s %v: must be %v to %v%s", name, v, lo, hi, why)
}

// eventRegister fails for a -version without EventRegister, which the commands' providers
// register with: refused before anything is created.
func (b *bounds) eventRegister(v winver.Version) {
	if v < emu.EventRegisterSince {
		b.fail("-version %s: the providers register with EventRegister, which Windows has from %s (%s); the classic providers of %s (RegisterTraceGuids, TraceEvent) are not emulated",
			v, emu.EventRegisterSince, emu.EventRegisterSince.Marketing(), v)
	}
}

// needs fails when flag name was given without the flag it depends on.
func (b *bounds) needs(name, other string, has bool) {
	if b.given(name) && !has && !b.isFalse(name) {
		b.fail("-%s needs -%s: without it the flag would have no effect", name, other)
	}
}

// isFalse reports whether the flag name is a boolean given as false (-compress=false),
// which asks for nothing that needs another flag: a script may pass it explicitly.
func (b *bounds) isFalse(name string) bool {
	f := b.fs.Lookup(name)
	if f == nil {
		return false
	}
	g, ok := f.Value.(flag.Getter)
	if !ok {
		return false
	}
	v, ok := g.Get().(bool)
	return ok && !v
}

// done prints the error, if any, and returns the exit code to stop with, or -1.
func (b *bounds) done(stderr io.Writer) int {
	if b.err == nil {
		return -1
	}
	fmt.Fprintf(stderr, "etwemu %s: %v\n", b.fs.Name(), b.err)
	return 2
}

// recordFits refuses settings under which every event would be lost: a record of payload
// bytes larger than the buffer a session started with props would get. StartTrace's own
// adjustment (session.Adjust) says what that buffer is, so nothing is created to find out.
func recordFits(v winver.Version, procs int, props emu.Properties, payload int) error {
	if _, err := session.Adjust(v, procs, "check", &props); err != nil {
		return nil // StartTrace reports it
	}
	record := uint64(abi.Align(abi.EventHeaderSize + payload))
	if room := uint64(props.BufferSize)*1024 - abi.BufferHeaderSize; record > room {
		return fmt.Errorf("a %d-byte record (-payload %d plus the 0x50-byte EVENT_HEADER, 8-byte aligned) does not fit a %d KB buffer, which holds %d bytes after its 0x48-byte header: every event would be lost with ERROR_MORE_DATA; raise -buffer-kb or lower -payload",
			record, payload, props.BufferSize, room)
	}
	return nil
}

// openInput opens the file a command reads, with the codes CreateFile answers for what
// stops it: ERROR_FILE_NOT_FOUND for a file that is not there, ERROR_ACCESS_DENIED for a
// folder or a file the user may not read, ERROR_BAD_PATHNAME for any other reason, with
// the system's words beside.
func openInput(name string) (*os.File, error) {
	st, err := os.Stat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, winerr.New(winerr.ErrFileNotFound, "%s: no such file", name)
	case err == nil && st.IsDir():
		return nil, winerr.New(winerr.ErrAccessDenied, "%s is a folder: name a file", name)
	}
	f, err := os.Open(name)
	switch {
	case errors.Is(err, fs.ErrPermission):
		return nil, winerr.New(winerr.ErrAccessDenied, "%v", err)
	case err != nil:
		return nil, winerr.New(winerr.ErrBadPathname, "%v", err)
	}
	return f, nil
}

// writeOutput writes data to the file at path, which checkOutput let a command write. It
// opens the file without waiting: a named pipe that no process reads (which -force lets a
// command name) is refused at once with ERROR_BAD_PATHNAME, where opening it to write
// would wait for a reader, past Ctrl-C.
func writeOutput(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NONBLOCK, 0o644)
	switch {
	case errors.Is(err, syscall.ENXIO):
		return winerr.New(winerr.ErrBadPathname, "%s is a named pipe that no process reads: start its reader first", path)
	case errors.Is(err, fs.ErrPermission):
		return winerr.New(winerr.ErrAccessDenied, "%v", err)
	case err != nil:
		return winerr.New(winerr.ErrBadPathname, "%v", err)
	}
	if _, err = f.Write(data); err == nil {
		return f.Close()
	}
	f.Close()
	return winerr.WriteFailed(err, "writing "+path)
}

// outputKind is the kind of file a command writes: its name in messages, and how to
// recognise a file of that kind, which the command may replace without -force.
type outputKind struct {
	name string
	is   func(path string) bool
}

// etlOutput is an ETL file: one whose header buffer etl.Open reads.
var etlOutput = outputKind{"ETL file", func(path string) bool {
	f, err := etl.Open(path)
	if err != nil {
		return false
	}
	f.Close()
	return true
}}

// svgOutput is an SVG chart: a file whose first bytes open an <svg element.
var svgOutput = outputKind{"SVG file", func(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	return bytes.Contains(head[:n], []byte("<svg"))
}}

// checkOutput decides, before a command creates anything, whether it may write the file
// that flag names at path, as tracerpt asks before it replaces a file (-y answers yes):
// a new file is written; an existing file of the command's kind (an ETL file for an ETL
// writer), or an empty one, is replaced with a line on stderr saying so (appending, for
// EVENT_TRACE_FILE_MODE_APPEND, says that instead); any other existing file, and any
// symbolic link (writing through one would replace the file it points to), is refused
// with ERROR_ALREADY_EXISTS unless force, and so is a device, pipe or socket, or a file of
// the kernel's own (procfs, sysfs: size 0, but not an empty file). A directory
// is refused whatever force says. Every command that writes a file named by a flag calls it.
func checkOutput(stderr io.Writer, cmd, flag, path string, kind outputKind, force, appending bool) error {
	verb := "replacing"
	if appending {
		verb = "appending to"
	}
	st, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		// A new file: its folder must be there, or the command would fail only once
		// its work is done (a whole sweep, a whole demo).
		if dir, err := os.Stat(filepath.Dir(path)); err != nil || !dir.IsDir() {
			return winerr.New(winerr.ErrPathNotFound, "-%s %s: the folder %s does not exist: create it or name a file in another", flag, path, filepath.Dir(path))
		}
		return nil
	}
	if err != nil {
		return winerr.New(winerr.ErrBadPathname, "-%s %s: %v", flag, path, err)
	}
	if st.Mode()&os.ModeSymlink != 0 {
		if !force {
			return winerr.New(winerr.ErrAlreadyExists, "-%s %s is a symbolic link: writing through it would replace the file it points to; name the file itself, or add -force to write through the link", flag, path)
		}
		fmt.Fprintf(stderr, "etwemu %s: -force: writing through the symbolic link %s\n", cmd, path)
		if st, err = os.Stat(path); errors.Is(err, fs.ErrNotExist) {
			return nil // a dangling link: the file it names is created
		} else if err != nil {
			return winerr.New(winerr.ErrBadPathname, "-%s %s: %v", flag, path, err)
		}
	}
	switch {
	case st.IsDir():
		return winerr.New(winerr.ErrAlreadyExists, "-%s %s is a directory: name a file", flag, path)
	case !st.Mode().IsRegular() || pseudoFile(path):
		if !force {
			return winerr.New(winerr.ErrAlreadyExists, "-%s %s is not a regular file (a device, pipe or socket, or a file of the kernel's own such as /proc's); add -force to write to it", flag, path)
		}
		fmt.Fprintf(stderr, "etwemu %s: -force: writing to %s, which is not a regular file\n", cmd, path)
	case st.Size() == 0:
		fmt.Fprintf(stderr, "etwemu %s: %s the empty file %s\n", cmd, verb, path)
	case kind.is(path):
		fmt.Fprintf(stderr, "etwemu %s: %s the %s %s (%d bytes)\n", cmd, verb, kind.name, path, st.Size())
	case !force:
		return winerr.New(winerr.ErrAlreadyExists, "-%s %s exists and is not an %s: etwemu does not replace it; name another file, or add -force to replace it", flag, path, kind.name)
	default:
		fmt.Fprintf(stderr, "etwemu %s: -force: %s %s (%d bytes, not an %s)\n", cmd, verb, path, st.Size(), kind.name)
	}
	return nil
}

// forceHelp is the help of every writing command's -force flag.
const forceHelp = "replace an existing file that is not of the kind this command writes, and write through a symbolic link (as tracerpt's -y); without it such files are refused"
