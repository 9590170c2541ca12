// Package scenario runs lessons on an emulated kernel: a small line-oriented language
// whose commands start, stop, update and flush sessions, register and enable providers,
// write events on chosen processors, move a manual clock, expect Windows error codes and
// print the kernel's views (strdump, logger, bufdump, logdump, guids, regs, pmc). The
// kernel is synchronous, its clock manual and its files in memory, so a scenario prints
// the same text every time it runs: `etwemu run FILE` runs one, `etwemu shell` reads the
// commands from a terminal or a pipe, and the examples folder holds lessons.
package scenario

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/internal/callstack"
	"github.com/etwemu/etwemu/internal/quote"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// ProcessID is the process every scenario's providers register in, so that records
// print the same from run to run.
const ProcessID = 1000

// Executable is the file name of that process's executable, which enable's exe= filters
// match: a scenario runs the same whatever program runs it.
const Executable = "scenario.exe"

// stackDepth is how many frames down a write command writes: the most return addresses
// a STACK_TRACE item holds (emu.EnableParameters).
const stackDepth = callstack.Frames

// clockFrequency is the manual clock's: 10 MHz, 100 ns ticks.
const clockFrequency = 10_000_000

// Limits bound what a scenario may ask of its machine, so that any scenario, however
// written, runs in bounded memory and time. A zero field takes its default: the limit
// the language has always had. A fuzzer or a test sets smaller ones.
type Limits struct {
	// Disk is the in-memory disk's size in bytes, all log files together, and the most
	// `kernel disk=MB` may ask for: past it a log file's write fails as on a full disk
	// (ERROR_DISK_FULL) and costs the session that buffer (LogBuffersLost), never the
	// session. Default etl.DefaultMemFSCapacity (256 MiB).
	Disk int64
	// Processors is the most processors `kernel processors=N` may ask for; default 2048.
	Processors int
	// Events is the most events one write command may write; default 10000000.
	Events uint64
	// BufferKB is the largest BufferSize `start buffer=KB` may ask for, and Buffers the
	// most MinimumBuffers or MaximumBuffers; default 1<<31 each (StartTrace then clamps
	// BufferSize to the version's range and refuses more than the emulator's buffer
	// memory per session, session.MaxBufferMemory).
	BufferKB, Buffers uint64
	// BufferMemory is the most trace-buffer memory the machine's sessions may hold
	// together, MaximumBuffers × BufferSize summed over the running sessions, with the
	// buffers a REAL_TIME session keeps while no consumer is attached
	// (emu.Session.RealTimeBacklog): a start or an update past it is refused with
	// ERROR_NOT_ENOUGH_MEMORY. Default
	// DefaultBufferMemory. (Each session alone is also held to session.MaxBufferMemory.)
	BufferMemory uint64
	// GUIDEntries is the most GUID entries the machine's table may hold: a register,
	// enable or traits command that would create one more is refused with
	// ERROR_NO_SYSTEM_RESOURCES. The table hashes GUIDs into 64 lists, as Windows' does,
	// so each lookup walks a 64th of the entries: the bound keeps a scenario's time in
	// proportion to its length. Default 65536.
	GUIDEntries int
	// Output bounds what one kernel's commands print, from its `kernel` command (or the
	// first command) on: once they have printed more than Output bytes, every later
	// command but `kernel` is refused with ERROR_NOT_ENOUGH_QUOTA (the command that
	// crossed the bound printed all it had to). A view prints the whole kernel (every GUID entry,
	// registration and logger), so a scenario that makes thousands of registrations and
	// then views them thousands of times would otherwise print, and take time, in
	// proportion to the square of its length. Default DefaultOutput; a machine Attach
	// returns has none.
	Output int64
	// Walk bounds the kernel objects one kernel's commands walk without printing them: a
	// check walks every registration, GUID entry and trace buffer, an enable, disable or
	// capture every registration of its provider (each hears its callback), a view the
	// providers named so far and what it lists, logdump and bufdump each record of the
	// session's buffers, and save each kilobyte of the ring. Once they have walked more
	// than Walk, every later command but `kernel` is refused with ERROR_NOT_ENOUGH_QUOTA,
	// as for Output: 65,535 registrations checked 100,000 times would otherwise take hours
	// for a scenario of 1.6 MB, and a logdump of 12 million events 3 s a line for a
	// thousand lines. ExecView's views do not count. Default DefaultWalk; a machine Attach
	// returns has none.
	Walk int64
	// Writes bounds the bytes a scenario's write commands write, each event's payload
	// with its EVENT_HEADER, over all its kernels (a `kernel` line does not start a new
	// count: eight sessions and five writes after each would otherwise write for a
	// second a line): a write that would pass it is refused whole, before it writes
	// anything, with ERROR_NOT_ENOUGH_QUOTA. A line may write 10 million events of 64 KB,
	// 30 s of copying; without a total a scenario of a few lines ran for minutes. Default
	// DefaultWrites; a machine Attach returns has none.
	Writes uint64
}

// DefaultWalk is Limits.Walk's default: 8 Mi objects, about ten seconds of checks.
const DefaultWalk = 8 << 20

// DefaultWrites is Limits.Writes's default: 4 GiB of events, 400 times a line of a
// thousand 10 KB events, and at most about twenty seconds of writes to eight sessions.
const DefaultWrites = 4 << 30

// DefaultOutput is Limits.Output's default: 64 MiB, a thousand times what a lesson
// prints.
const DefaultOutput = 64 << 20

// DefaultBufferMemory is Limits.BufferMemory's default: 1 GiB, what one session may
// take, for all the machine's sessions together.
const DefaultBufferMemory = 1 << 30

// withDefaults returns l with every zero field set to its default.
func (l Limits) withDefaults() Limits {
	if l.Disk <= 0 {
		l.Disk = etl.DefaultMemFSCapacity
	}
	if l.Processors <= 0 {
		l.Processors = 2048
	}
	if l.Events == 0 {
		l.Events = 10_000_000
	}
	if l.BufferKB == 0 {
		l.BufferKB = 1 << 31
	}
	if l.Buffers == 0 {
		l.Buffers = 1 << 31
	}
	if l.BufferMemory == 0 {
		l.BufferMemory = DefaultBufferMemory
	}
	if l.GUIDEntries <= 0 {
		l.GUIDEntries = 1 << 16
	}
	if l.Output <= 0 {
		l.Output = DefaultOutput
	}
	if l.Walk <= 0 {
		l.Walk = DefaultWalk
	}
	if l.Writes == 0 {
		l.Writes = DefaultWrites
	}
	return l
}

// bufferMemory returns the trace-buffer memory the running sessions may hold,
// MaximumBuffers × BufferSize summed with the buffers a REAL_TIME session keeps for a
// consumer that is not there, leaving out the session named skip ("" for none).
func (m *Machine) bufferMemory(k *emu.Kernel, skip string) uint64 {
	var n uint64
	for _, s := range k.Sessions() {
		if skip != "" && strings.EqualFold(s.Name(), skip) {
			continue
		}
		p := s.Properties()
		n += (uint64(p.MaximumBuffers) + uint64(s.RealTimeBacklog())) * uint64(p.BufferSize) << 10
	}
	return n
}

// refuseMemory is the error for a start or update that would take the sessions'
// buffers past Limits.BufferMemory.
func (m *Machine) refuseMemory(what string, need uint64) error {
	return winerr.New(winerr.ErrNotEnoughMemory, "%s: the sessions' buffers would take %d MB (MaximumBuffers × BufferSize over every session, and a REAL_TIME session's backlog for a consumer that is not attached), more than the %d MB this machine allows",
		what, need>>20, m.limits.BufferMemory>>20)
}

// Machine is one scenario's emulated kernel and the names the scenario gave its
// providers. It is not safe for concurrent use: a scenario is one sequence of commands.
type Machine struct {
	out      io.Writer // every command prints here: printed, which counts
	printed  *counted  // the bytes printed since the last kernel command, which resets it
	walked   int64     // the objects commands walked (Limits.Walk) since the last kernel command
	written  uint64    // the event bytes written (Limits.Writes), by every kernel
	limits   Limits
	ctx      context.Context               // the running command's, which a long step checks; set by ExecContext
	progress func(cmd string, done uint64) // SetProgress's; nil for none
	k        *emu.Kernel                   // nil until the first command that needs it
	version  winver.Version
	procs    int
	pmcCtrs  int   // PMC counters per processor; 0 for pmc.DefaultPlatformCounters
	disk     int64 // the in-memory disk's size in bytes, as `kernel disk=MB` set it (limits.Disk when not)
	clk      *clock.Manual
	fs       *etl.MemFS
	provs    map[string]*provider       // by lower-cased name
	handles  map[string]emu.TraceHandle // the last handle StartTrace gave each session name, lower-cased, kept after stop as a program keeps it
	order    []*provider                // in registration order, for views
	attached bool                       // k is a program's (Attach): Close leaves it, kernel and advance are refused
}

// counted is a writer that counts the bytes written through it. Only the goroutine
// running the machine's commands writes, so n needs no lock.
type counted struct {
	w io.Writer
	n int64
}

func (c *counted) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// provider is a name the scenario used for a provider or a registration: its GUID and,
// once registered, its registration (kept after EventUnregister, as a program keeps a
// stale REGHANDLE).
type provider struct {
	name   string
	shown  string // name as messages and listings show it (quote.Shown)
	g      guid.GUID
	reg    *emu.Registration
	closed bool // EventUnregister was called on reg
}

// New returns a machine that prints to out, with the default Limits. Its kernel is
// created by the first command that needs one, as the scenario's `kernel` command
// configured it (Windows 2004 and two processors when it did not).
func New(out io.Writer) *Machine { return NewLimited(out, Limits{}) }

// NewLimited returns a machine that prints to out and refuses what passes lim.
func NewLimited(out io.Writer, lim Limits) *Machine {
	lim = lim.withDefaults()
	printed := &counted{w: out}
	return &Machine{out: printed, printed: printed, limits: lim, ctx: context.Background(), version: winver.Default, procs: min(2, lim.Processors), disk: lim.Disk,
		provs: map[string]*provider{}, handles: map[string]emu.TraceHandle{}}
}

// Close stops the machine's kernel (not an attached one: its program owns it).
func (m *Machine) Close() {
	if m.k != nil && !m.attached {
		m.k.Close()
	}
}

// kernel returns the machine's kernel, creating it on first use.
func (m *Machine) kernel() (*emu.Kernel, error) {
	if m.k != nil {
		return m.k, nil
	}
	m.clk = clock.NewManualSource(0, 0)
	m.fs = &etl.MemFS{}
	m.fs.SetCapacity(m.disk)
	k, err := emu.New(emu.Config{Version: m.version, Processors: m.procs, Clock: m.clk, ClockFrequency: clockFrequency,
		ProcessID: ProcessID, Executable: Executable, Synchronous: true, FileSystem: m.fs, PMCSource: pmc.Synthetic{}, PMCCounters: m.pmcCtrs})
	if err != nil {
		return nil, err
	}
	m.k = k
	return k, nil
}

// Run executes a scenario read from r, one command per line, and stops at the first
// command that fails unexpectedly; the error names its line. Blank lines and lines
// starting with '#' are skipped; comment lines starting with "##" are printed, so a
// lesson's commentary appears in its output. A line longer than MaxLine is an error.
func (m *Machine) Run(r io.Reader) error {
	_, err := m.RunContext(context.Background(), r)
	return err
}

// RunContext is Run that stops when ctx is done, between commands or within a long
// one (a write of many events), with an error naming the line and ctx's cause. It
// returns how many commands succeeded (comments and blank lines are not commands): with
// an error, those before the failing line. The sessions keep running: StopAll stops them.
func (m *Machine) RunContext(ctx context.Context, r io.Reader) (ran int, err error) {
	lctx, cancel := context.WithCancel(ctx)
	defer cancel() // ends the reading goroutine when a command fails
	lines := Lines(lctx, r)
	last := 0 // the number of the last line read
	for {
		var l Line
		var ok bool
		select {
		case l, ok = <-lines:
		case <-ctx.Done():
			return ran, fmt.Errorf("after line %d: %w", last, context.Cause(ctx))
		}
		if !ok {
			if ctx.Err() != nil {
				return ran, fmt.Errorf("at the end of the input: %w", context.Cause(ctx))
			}
			return ran, nil
		}
		last = l.N
		if l.Err != nil {
			return ran, fmt.Errorf("line %d: %w", l.N, l.Err)
		}
		cmd, err := m.exec(ctx, l.Text)
		if err != nil {
			return ran, fmt.Errorf("line %d: %w", l.N, err)
		}
		if cmd {
			ran++
		}
	}
}

// Exec runs one line. An error means the command failed (or an `expect` was not met);
// the machine stays usable.
func (m *Machine) Exec(line string) error {
	_, err := m.exec(context.Background(), line)
	return err
}

// ExecView runs one of the read-only views (strdump, logger, bufdump, guids, regs, files,
// guid, reg) for a caller that draws the kernel, outside the output quota
// (Limits.Output): a page draws the kernel after the learner's commands, whatever they
// printed, and what it reads does not count against them. A view prints what the kernel
// holds, which the other limits bound. Any other command is refused.
func (m *Machine) ExecView(ctx context.Context, line string) error {
	name, _, _ := strings.Cut(strings.TrimSpace(line), " ")
	switch strings.ToLower(name) {
	case "strdump", "logger", "bufdump", "guids", "regs", "files", "guid", "reg":
	default:
		return winerr.New(winerr.ErrInvalidParameter, "%s is not a view", quote.Short(name))
	}
	n, w := m.printed.n, m.walked
	m.printed.n, m.walked = 0, 0
	defer func() { m.printed.n, m.walked = n, w }()
	return m.ExecContext(ctx, line)
}

// ExecContext is Exec that stops a long command (a write of many events) when ctx is
// done, with ctx's cause in its error, and runs none once it is.
func (m *Machine) ExecContext(ctx context.Context, line string) error {
	_, err := m.exec(ctx, line)
	return err
}

// exec runs one line and reports whether it was a command (not blank, not a comment).
func (m *Machine) exec(ctx context.Context, line string) (bool, error) {
	line = strings.TrimSpace(line)
	if text, ok := strings.CutPrefix(line, "##"); ok {
		fmt.Fprintln(m.out, "#"+quote.Printable(text)) // a control sequence is shown, not acted on
		return false, nil
	}
	if line == "" || line[0] == '#' {
		return false, nil
	}
	if ctx.Err() != nil {
		return false, context.Cause(ctx)
	}
	fields := strings.Fields(line)
	c, ok := commands[strings.ToLower(fields[0])]
	if !ok {
		return true, fmt.Errorf("unknown command %s (help lists them)", quote.Short(fields[0]))
	}
	args, err := parseArgs(fields[1:], c)
	if err != nil {
		return true, fmt.Errorf("%s: %w (usage: %s)", fields[0], err, c.usage)
	}
	if name := strings.ToLower(fields[0]); name != "expect" { // expect checks the command it runs
		if err := m.quota(name); err != nil {
			return true, fmt.Errorf("%s: %w", fields[0], err)
		}
	}
	m.ctx = ctx
	defer func() { m.ctx = context.Background() }()
	if err := c.run(m, args); err != nil {
		return true, fmt.Errorf("%s: %w", fields[0], err)
	}
	return true, nil
}

// quota refuses command name once this kernel's commands have printed more than
// Limits.Output or walked more than Limits.Walk; `kernel`, which starts new counts,
// always runs.
func (m *Machine) quota(name string) error {
	switch {
	case name == "kernel":
		return nil
	case m.printed.n > m.limits.Output:
		return winerr.New(winerr.ErrNotEnoughQuota, "this kernel's commands have printed %d KB, past the most a scenario's kernel may print (%d KB, scenario.Limits.Output): a `kernel` line starts a new kernel and a new count",
			m.printed.n>>10, m.limits.Output>>10)
	case m.walked > m.limits.Walk:
		return winerr.New(winerr.ErrNotEnoughQuota, "this kernel's checks, enables and views have walked %d registrations, GUID entries, buffers and records, past the most a scenario's kernel may walk (%d, scenario.Limits.Walk): a `kernel` line starts a new kernel and a new count",
			m.walked, m.limits.Walk)
	}
	return nil
}

// SetProgress has a long command call fn at each bounded chunk of its work, with the
// command's name and the work done so far (a write: the events written, every
// writeChunk events from 0), just before it looks at its context: a caller can show
// progress, and a test can stop the command at a known point. nil removes it.
func (m *Machine) SetProgress(fn func(cmd string, done uint64)) { m.progress = fn }

// StopAll stops every running session as `stop` does and prints each one's final
// counters, so that its buffers are flushed and its log file's header finalized
// (BuffersWritten, EventsLost, EndTime): what a command does when it is interrupted. A
// session StopTrace refuses (EVENT_TRACE_NONSTOPPABLE_MODE) is stopped by Close. It
// returns the first error.
func (m *Machine) StopAll() error {
	if m.k == nil {
		return nil
	}
	var first error
	for _, l := range m.k.Sessions() {
		var p emu.Properties
		if err := m.k.StopTrace(0, l.Name(), &p); err != nil {
			if first == nil {
				first = fmt.Errorf("stop %s: %w", l.Name(), err)
			}
			continue
		}
		fmt.Fprintf(m.out, "stopped %s: %s\n", l.Name(), counters(&p))
	}
	return first
}

// args are a command's positional words and key=value options.
type args struct {
	pos  []string
	opts map[string]string
	raw  []string // the words after the command, for expect
}

func parseArgs(words []string, c command) (args, error) {
	a := args{opts: map[string]string{}, raw: words}
	if c.raw {
		return a, nil
	}
	for _, w := range words {
		if k, v, ok := strings.Cut(w, "="); ok {
			k = strings.ToLower(k)
			if !strings.Contains(" "+c.opts+" ", " "+k+" ") {
				return a, fmt.Errorf("unknown option %s", quote.Short(k))
			}
			if old, dup := a.opts[k]; dup {
				return a, fmt.Errorf("option %s given twice (%s and %s): give it once", k, opt(k, old), opt(k, v))
			}
			a.opts[k] = v
			continue
		}
		if w == "-json" {
			if !c.hasJSON() {
				return a, fmt.Errorf("-json: this command has no JSON form (%s have)", strings.Join(jsonCommands(), ", "))
			}
			a.opts["json"] = "true"
			continue
		}
		a.pos = append(a.pos, w)
	}
	if n := len(a.pos); n < c.min || n > c.max {
		want := fmt.Sprintf("%d to %d", c.min, c.max)
		if c.min == c.max {
			want = fmt.Sprint(c.min)
		}
		got := "arguments"
		if n == 1 {
			got = "argument"
		}
		if slices.ContainsFunc(a.pos, func(w string) bool { return w == "#" || strings.HasPrefix(w, "#") && (w[1] < '0' || w[1] > '9') }) {
			want += "; a # starts a comment only at the start of a line"
		}
		return a, fmt.Errorf("%d %s, want %s", n, got, want)
	}
	return a, nil
}

// jsonCommands returns the commands whose usage offers -json, sorted.
func jsonCommands() []string {
	var names []string
	for name, c := range commands {
		if c.hasJSON() {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// opt writes option k=v as an error message shows it: v escaped and cut (quote.Shown).
func opt(k, v string) string { return k + "=" + quote.Shown(v) }

// num reads option k as an unsigned number from 0 to hi (decimal or 0x hex), or def
// when absent; the error says the range.
func (a args) num(k string, def, hi uint64) (uint64, error) {
	v, ok := a.opts[k]
	if !ok {
		return def, nil
	}
	n, err := number(v, 64)
	if err != nil || n > hi {
		return 0, fmt.Errorf("%s: a number from 0 to %d (decimal or 0x hex)", opt(k, v), hi)
	}
	return n, nil
}

func (a args) json() bool { return a.opts["json"] == "true" }

// choice reads option k, which must be one of choices, or "" when absent; the error
// names the choices.
func (a args) choice(k string, choices ...string) (string, error) {
	v, ok := a.opts[k]
	if !ok || slices.Contains(choices, v) {
		return v, nil
	}
	return "", fmt.Errorf("%s: want %s=%s", opt(k, v), k, strings.Join(choices, " or "+k+"="))
}

// command is one command of the language.
type command struct {
	usage    string // the command as help shows it
	help     string
	min, max int    // positional arguments
	opts     string // the option names, space-separated
	raw      bool   // the words are passed unparsed (expect, echo)
	run      func(m *Machine, a args) error
}

// hasJSON reports whether the command's usage offers -json.
func (c command) hasJSON() bool { return strings.Contains(c.usage, " [-json]") }

var commands map[string]command

func init() {
	commands = map[string]command{
		"kernel": {"kernel [version=V] [processors=N] [pmccounters=N] [disk=MB]", "start a new emulated kernel (the previous one, its sessions and its files are gone); without it the first command starts version=2004 processors=2; disk is the in-memory disk's size (default and most: run's and shell's -disk), past which log-file writes fail with ERROR_DISK_FULL",
			0, 0, "version processors pmccounters disk", false, cmdKernel},
		"start": {"start NAME [mode=FLAGS] [buffer=KB] [min=N] [max=N] [file=PATH] [maxfile=MB] [flush=S] [guid=P] [autologger=1]", "StartTrace: start a session; mode takes LogFileMode names (SEQUENTIAL,CIRCULAR or EVENT_TRACE_*), file names an in-memory log file, flush sets FlushTimer in seconds (reported by query; this kernel is synchronous and runs no timer, so advance flushes nothing: flush NAME does), guid the session GUID (a provider name or a GUID: a private logger's provider), autologger=1 starts it as an AutoLogger session",
			1, 1, "mode buffer min max file maxfile flush guid autologger", false, cmdStart},
		"save":       {"save NAME FILE", "write an in-memory (BUFFERING) session's ring of buffers to an in-memory ETL file, as xperf -flush does", 2, 2, "", false, cmdSave},
		"query":      {"query NAME", "ControlTrace(QUERY): the session's counters", 1, 1, "", false, cmdQuery},
		"stop":       {"stop NAME", "StopTrace: stop a session and print its final counters", 1, 1, "", false, cmdStop},
		"flush":      {"flush NAME", "FlushTrace: seal the session's current buffers and write them", 1, 1, "", false, cmdFlush},
		"update":     {"update NAME [max=N] [flush=S]", "ControlTrace(UPDATE) with MaximumBuffers and FlushTimer as given (0 where not)", 1, 1, "max flush", false, cmdUpdate},
		"register":   {"register R [guid=GUID]", "EventRegister: register a provider under the name R (its GUID is the EventSource hash of R unless given; write and unregister name R)", 1, 1, "guid", false, cmdRegister},
		"unregister": {"unregister R", "EventUnregister: close registration R (a second time, or a name never registered, goes to EventUnregister all the same)", 1, 1, "", false, cmdUnregister},
		"enable": {"enable NAME P [level=L] [any=K] [all=K] [group=1] [keep=ID,...] [drop=ID,...] [pid=PID,...] [exe=FILE,...] [props=NAME,...]", "EnableTraceEx2(ENABLE_PROVIDER): enable P on session NAME (P need not be registered yet); group=1 enables P as a provider group; keep= and drop= pass an EVENT_ID filter that keeps or drops the events of those ids (both at once give the kernel two filters of one type, which it refuses); pid= passes a PID filter that keeps the events of those processes (a scenario's providers run in process 1000); exe= passes an EXECUTABLE_NAME filter that keeps the events of processes running one of those files, in any case (a scenario's process runs scenario.exe); props= sets EVENT_ENABLE_PROPERTY_* bits by name (sid, tsid, stack, start, key: extended items each event gets; ignore-keyword-0)",
			2, 2, "level any all group keep drop pid exe props", false, cmdEnable},
		"disable": {"disable NAME P [group=1]", "EnableTraceEx2(DISABLE_PROVIDER)", 2, 2, "group", false, cmdDisable},
		"capture": {"capture NAME P [group=1]", "EnableTraceEx2(CAPTURE_STATE): ask P's enable callback for its state", 2, 2, "group", false, cmdCapture},
		"traits":  {"traits R [group=P]", "EventSetInformation(EventProviderSetTraits): give registration R traits, joining provider group P if named", 1, 1, "group", false, cmdTraits},
		"counters": {"counters NAME SRC[,SRC...] [via=native]", "set the session's PMC counter list (KPROFILE_SOURCE names or numbers; none for an empty list, which is refused with ERROR_BAD_LENGTH) with TraceSetInformation, or NtSetSystemInformation for via=native",
			2, 2, "via", false, cmdCounters},
		"hooks":    {"hooks NAME HOOK[,HOOK...] [via=native]", "set the system events (hook ids such as 0x0524) whose records carry the counters", 2, 2, "via", false, cmdHooks},
		"syswrite": {"syswrite NAME HOOK [size=S] [proc=CPU]", "write a kernel event with a SYSTEM_TRACE_HEADER (hook id HOOK) to session NAME", 2, 2, "size proc", false, cmdSysWrite},
		"write": {"write R N [size=S] [proc=CPU] [level=L] [keyword=K] [id=ID]", "EventWriteEx N times through registration R: events of S payload bytes (default 16) on processor CPU (default 0; a number past the kernel's processors wraps around, as WriteOptions.Processor does)",
			2, 2, "size proc level keyword id", false, cmdWrite},
		"advance": {"advance DURATION", "move the manual clock on: 1ms, 2s, 100us, in ticks of 100ns (less than one is refused, a remainder below one dropped; timestamps read it; the synchronous kernel runs no flush timer, so nothing is flushed by it)", 1, 1, "", false, cmdAdvance},
		"expect":  {"expect CODE COMMAND ...", "run COMMAND, which must fail with the Windows code CODE, by name or number (ERROR_INVALID_PARAMETER or 87, STATUS_INVALID_PARAMETER or 0xC000000D, ...), or succeed for SUCCESS or 0", 0, 0, "", true, cmdExpect},
		"echo":    {"echo TEXT", "print TEXT", 0, 0, "", true, cmdEcho},
		"help":    {"help [COMMAND]", "list the commands, or explain one", 0, 1, "", false, cmdHelp},
		"strdump": {"strdump [-json]", "every logger: id, name, kind, mode, buffers and counters (like !wmitrace.strdump)", 0, 0, "", false, viewStrdump},
		"logger":  {"logger NAME|ID|#ID [-json]", "one logger context, its fields named and placed as the layout catalogue has them for this version", 1, 1, "", false, viewLogger},
		"bufdump": {"bufdump NAME|ID|#ID [bytes=N] [-json]", "each buffer: processor, state, offsets, reference count, then its records' first N bytes in hex (default 32, at most 65536; 1 MiB over all the buffers)", 1, 1, "bytes", false, viewBufdump},
		"logdump": {"logdump NAME|ID|#ID [t=N] [-json]", "the last N (default 20, at most 10000) events in the session's buffers, all processors merged by timestamp", 1, 1, "t", false, viewLogdump},
		"guids":   {"guids [-json]", "each GUID entry: its eight enable slots and its registrations", 0, 0, "", false, viewGuids},
		"regs":    {"regs [-json]", "the scenario's providers: registration index and enable masks", 0, 0, "", false, viewRegs},
		"files":   {"files [-json]", "the log files the sessions wrote (in memory), with their sizes", 0, 0, "", false, viewFiles},
		"guid":    {"guid P [group=1] [-json]", "provider P's ETW_GUID_ENTRY as dt prints it: RefCount, ProviderEnableInfo and the eight EnableInfo slots", 1, 1, "group", false, viewGuid},
		"reg":     {"reg R [-json]", "registration R's ETW_REG_ENTRY as dt prints it: Index, Flags, EnableMask, GroupEnableMask", 1, 1, "", false, viewReg},
		"poke": {"poke reg R mask=0xNN [group=0xNN] | poke guid P slot=N [group=1]", "TAMPERING: write registration R's EnableMask (GroupEnableMask), or zero EnableInfo[N] of P's GUID entry, behind the kernel's back, as a driver writing kernel memory would; printed as TAMPERED",
			2, 2, "mask group slot", false, cmdPoke},
		"check": {"check", "compare the kernel's structures with each other (each registration's EnableMask with its GUID entry's used slots, slots with running loggers) and print each disagreement", 0, 0, "", false, cmdCheck},
		"pmc":   {"pmc NAME|ID|#ID [-json]", "the session's PMC support: counter sources, hook ids, reads per processor", 1, 1, "", false, viewPMC},
	}
}

// Help writes the list of commands.
func Help(w io.Writer) {
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-70s %s\n", commands[n].usage, commands[n].help)
	}
	fmt.Fprintln(w, "Lines starting with # are comments; ## comments are printed. Numbers may be hex (0x10).")
}

func cmdHelp(m *Machine, a args) error {
	if len(a.pos) == 1 {
		c, ok := commands[strings.ToLower(a.pos[0])]
		if !ok {
			return fmt.Errorf("no command %s", quote.Short(a.pos[0]))
		}
		fmt.Fprintf(m.out, "%s\n  %s\n", c.usage, c.help)
		return nil
	}
	Help(m.out)
	return nil
}

func cmdKernel(m *Machine, a args) error {
	if m.attached {
		return errAttached
	}
	version, procs := m.version, m.procs
	if v, ok := a.opts["version"]; ok {
		ver, err := winver.Parse(v)
		if err != nil {
			return err
		}
		version = ver
	}
	n, err := a.num("processors", uint64(procs), uint64(m.limits.Processors))
	if err != nil || n < 1 {
		return fmt.Errorf("%s: the emulator supports 1 to %d here", opt("processors", a.opts["processors"]), m.limits.Processors)
	}
	ctrs, err := a.num("pmccounters", uint64(m.pmcCtrs), pmc.MaxPlatformCounters)
	if err != nil {
		return fmt.Errorf("%w: the emulated HAL has at most %d", err, pmc.MaxPlatformCounters)
	}
	disk := m.disk
	if v, ok := a.opts["disk"]; ok {
		mb, err := a.num("disk", 0, uint64(m.limits.Disk>>20))
		if err != nil || mb < 1 {
			return fmt.Errorf("%s: the in-memory disk may be 1 to %d MB here (run's and shell's -disk sets the most)", opt("disk", v), m.limits.Disk>>20)
		}
		disk = int64(mb) << 20
	}
	if m.k != nil { // a new kernel: the old one and everything in it are gone
		held := m.bufferMemory(m.k, "") + uint64(m.fs.Used())
		m.k.Close()
		m.k, m.provs, m.order, m.handles = nil, map[string]*provider{}, nil, map[string]emu.TraceHandle{}
		m.fs, m.clk = nil, nil
		// A kernel that held much is collected now, before the new one allocates: left to
		// the collector's pacing, its buffers and files (up to Limits.BufferMemory and
		// Disk) stayed beside the new kernel's, and twelve kernel lines peaked at twice one
		// kernel's memory. (A collection at every kernel line made a scenario of bare
		// kernel lines forty times slower.)
		if held >= collectPast {
			runtime.GC()
		}
	}
	m.version, m.procs, m.pmcCtrs, m.disk = version, int(n), int(ctrs), disk
	m.printed.n, m.walked = 0, 0
	if _, err := m.kernel(); err != nil {
		return err
	}
	fmt.Fprintf(m.out, "kernel: %s (%s), %s, synchronous, manual clock at %d MHz\n", m.version.Marketing(), m.version, quote.Count(m.procs, "processor"), clockFrequency/1_000_000)
	return nil
}

// collectPast is the buffer memory and disk use of a kernel past which a kernel line
// collects the old kernel's memory before starting the new one.
const collectPast = 64 << 20

func cmdStart(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	mode, err := logmode.Parse(a.opts["mode"])
	if err != nil {
		return err
	}
	auto, err := a.choice("autologger", "1", "0")
	if err != nil {
		return err
	}
	p := &emu.Properties{LogFileMode: uint32(mode), LogFileName: a.opts["file"], AutoLogger: auto == "1"}
	if g, ok := a.opts["guid"]; ok {
		if p.GUID, err = guid.Parse(g); err != nil {
			p.GUID = m.named(g).g // a provider's name: its GUID
		}
	}
	lim := m.limits
	for _, o := range []struct {
		key     string
		dst     *uint32
		def, hi uint64
	}{{"buffer", &p.BufferSize, 64, min(lim.BufferKB, 1<<31)}, {"min", &p.MinimumBuffers, 0, min(lim.Buffers, 1<<31)}, {"max", &p.MaximumBuffers, 0, min(lim.Buffers, 1<<31)},
		{"maxfile", &p.MaximumFileSize, 0, 1 << 31}, {"flush", &p.FlushTimer, 0, 1 << 31}} {
		n, err := a.num(o.key, o.def, o.hi)
		if err != nil {
			return err
		}
		*o.dst = uint32(n)
	}
	// Before StartTrace allocates: at least the buffers asked for, or two a processor.
	asked := uint64(max(p.MinimumBuffers, p.MaximumBuffers, 2*uint32(m.procs))) * uint64(p.BufferSize) << 10
	if need := m.bufferMemory(k, "") + asked; need > lim.BufferMemory {
		return m.refuseMemory("start "+quote.Shown(a.pos[0]), need)
	}
	var files []string // the disk's files before, when the session writes one
	if p.LogFileName != "" {
		files = m.fs.Names()
	}
	h, err := k.StartTrace(a.pos[0], p)
	if err != nil {
		if _, ok := a.opts["file"]; !ok && mode&(logmode.RealTime|logmode.Buffering) == 0 && errors.Is(err, winerr.ErrInvalidParameter) {
			name := quote.Shown(a.pos[0])
			return fmt.Errorf("%w (start %s file=%s.etl writes a log file; mode=REAL_TIME delivers to a consumer; mode=BUFFERING keeps a ring in memory)", err, name, name)
		}
		return err
	}
	if need := m.bufferMemory(k, ""); need > lim.BufferMemory { // as StartTrace adjusted it
		k.StopTrace(h, "", &emu.Properties{})
		for _, f := range m.fs.Names() { // refused: the start leaves no file, as a refusal before StartTrace does
			if p.LogFileName != "" && !slices.Contains(files, f) {
				m.fs.Remove(f)
			}
		}
		return m.refuseMemory("start "+quote.Shown(a.pos[0]), need)
	}
	m.handles[strings.ToLower(a.pos[0])] = h
	fmt.Fprintf(m.out, "started %s: LoggerId %d, LoggerMode %s, BufferSize %d KB, %d buffers (MinimumBuffers %d, MaximumBuffers %d)\n",
		quote.Shown(a.pos[0]), h.LoggerID(), logmode.Mode(p.LogFileMode).Short(), p.BufferSize, p.NumberOfBuffers, p.MinimumBuffers, p.MaximumBuffers)
	return nil
}

// counters prints a session's statistics as ControlTrace returns them.
func counters(p *emu.Properties) string {
	return fmt.Sprintf("NumberOfBuffers %d, FreeBuffers %d, EventsLost %d, BuffersWritten %d, LogBuffersLost %d, RealTimeBuffersLost %d",
		p.NumberOfBuffers, p.FreeBuffers, p.EventsLost, p.BuffersWritten, p.LogBuffersLost, p.RealTimeBuffersLost)
}

func cmdStop(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	var p emu.Properties
	if err := k.StopTrace(0, a.pos[0], &p); err != nil {
		return err
	}
	fmt.Fprintf(m.out, "stopped %s: %s\n", quote.Shown(a.pos[0]), counters(&p))
	return nil
}

func cmdFlush(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	var p emu.Properties
	if err := k.FlushTrace(0, a.pos[0], &p); err != nil {
		return err
	}
	fmt.Fprintf(m.out, "flushed %s: %s\n", quote.Shown(a.pos[0]), counters(&p))
	return nil
}

func cmdSave(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	if s, err := m.sessionNamed(a.pos[0]); err == nil { // Limits.Walk: a kilobyte of the ring, copied or tried
		m.walked += s.Stats().NumberOfBuffers * int64(s.BufferSize()>>10)
	}
	n, err := k.SaveBuffers(a.pos[0], a.pos[1])
	if err != nil {
		return err
	}
	fmt.Fprintf(m.out, "saved %s to %s: %s after the header\n", quote.Shown(a.pos[0]), quote.Shown(a.pos[1]), quote.Count(n, "buffer"))
	return nil
}

func cmdQuery(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	var p emu.Properties
	if err := k.QueryTrace(0, a.pos[0], &p); err != nil {
		return err
	}
	fmt.Fprintf(m.out, "queried %s: %s\n", quote.Shown(a.pos[0]), counters(&p))
	return nil
}

func cmdUpdate(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	maxBuf, err := a.num("max", 0, min(m.limits.Buffers, 1<<31))
	if err != nil {
		return err
	}
	flush, err := a.num("flush", 0, 1<<31)
	if err != nil {
		return err
	}
	for _, s := range k.Sessions() {
		if maxBuf != 0 && strings.EqualFold(s.Name(), a.pos[0]) {
			if need := m.bufferMemory(k, a.pos[0]) + maxBuf*uint64(s.BufferSize()); need > m.limits.BufferMemory {
				return m.refuseMemory("update "+a.pos[0], need)
			}
		}
	}
	p := emu.Properties{MaximumBuffers: uint32(maxBuf), FlushTimer: uint32(flush)}
	if err := k.ControlTrace(0, a.pos[0], &p, emu.ControlUpdate); err != nil {
		return m.unstarted(a.pos[0], 0, err)
	}
	fmt.Fprintf(m.out, "updated %s: MaximumBuffers %d, FlushTimer %d\n", quote.Shown(a.pos[0]), p.MaximumBuffers, p.FlushTimer)
	return nil
}

// named returns the provider the scenario calls name, creating its entry (not its
// registration) on first mention.
func (m *Machine) named(name string) *provider {
	key := strings.ToLower(name)
	if p, ok := m.provs[key]; ok {
		return p
	}
	p := &provider{name: name, shown: quote.Shown(name), g: guid.FromName(name)}
	m.provs[key] = p
	m.order = append(m.order, p)
	return p
}

func cmdRegister(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	p := m.named(a.pos[0])
	if p.reg != nil && !p.closed { // an unregistered name registers again, as a program may
		return fmt.Errorf("the name %s is taken by a registration; register the provider again under another name with guid=%v", p.shown, p.g)
	}
	g := p.g // the name's GUID binds to it only once a registration holds it
	if text, ok := a.opts["guid"]; ok {
		if g, err = guid.Parse(text); err != nil {
			return err
		}
	}
	if err := m.roomForEntry(k, g, false); err != nil {
		return err
	}
	reg, err := k.EventRegister(g, nil, nil)
	if err != nil {
		return err
	}
	p.g, p.reg, p.closed = g, reg, false
	fmt.Fprintf(m.out, "registered %s %s: ETW_REG_ENTRY index %d, EnableMask 0x%02X\n", p.shown, p.g, reg.Index(), reg.EnableMask())
	return nil
}

func cmdUnregister(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	p := m.named(a.pos[0])
	if err := k.EventUnregister(p.reg); err != nil { // a closed handle: the kernel answers
		return err
	}
	if p.reg == nil {
		// The kernel's answer to a zero REGHANDLE: success, and nothing done.
		fmt.Fprintf(m.out, "%s holds no registration: EventUnregister of a zero REGHANDLE succeeds and does nothing\n", p.shown)
		return nil
	}
	p.closed = true
	fmt.Fprintf(m.out, "unregistered %s\n", p.shown)
	return nil
}

// neverStarted is the handle of a session name the scenario never started: logger id 63
// with an instance never handed out, so the kernel answers as for any stale handle.
const neverStarted = emu.TraceHandle(0xFFFF<<16 | 63)

// handle returns the last handle StartTrace gave the scenario for a session name.
func (m *Machine) handle(name string) emu.TraceHandle {
	if h, ok := m.handles[strings.ToLower(name)]; ok {
		return h
	}
	return neverStarted
}

// unstarted explains err, the kernel's answer to a call on session name's handle, when
// name is not running: the user never saw the handle the kernel names, so the error
// names the session and keeps the kernel's Windows code. Any other err is returned as
// it is. h is the handle used, 0 for a call by name.
func (m *Machine) unstarted(name string, h emu.TraceHandle, err error) error {
	var code *winerr.Errno
	if err == nil || m.k == nil || !errors.As(err, &code) {
		return err
	}
	if !errors.Is(err, winerr.ErrWMIInstanceNotFound) && !errors.Is(err, winerr.ErrInvalidHandle) {
		return err // refused for its own reason (a bad length, say) before the session was looked for
	}
	if h != 0 && m.k.Session(h) != nil {
		return err
	}
	if h == 0 {
		for _, l := range m.k.Sessions() {
			if strings.EqualFold(l.Name(), name) {
				return err
			}
		}
	}
	if _, ok := m.handles[strings.ToLower(name)]; ok {
		return winerr.New(code, "session %s is no longer running (its handle is stale)", quote.Short(name))
	}
	shown := quote.Shown(name)
	return winerr.New(code, "no session named %s was started (start %s file=%s.etl, or mode=REAL_TIME, starts one)", quote.Short(name), shown, shown)
}

func cmdEnable(m *Machine, a args) error { return enable(m, a, emu.EnableProvider) }

func cmdDisable(m *Machine, a args) error { return enable(m, a, emu.DisableProvider) }

func cmdCapture(m *Machine, a args) error { return enable(m, a, emu.CaptureState) }

func enable(m *Machine, a args, code emu.EventControlCode) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	h := m.handle(a.pos[0])
	p := m.named(a.pos[1])
	level, err := a.num("level", 0, 255)
	if err != nil {
		return err
	}
	anyKw, err := a.num("any", 0, math.MaxUint64)
	if err != nil {
		return err
	}
	allKw, err := a.num("all", 0, math.MaxUint64)
	if err != nil {
		return err
	}
	group, err := a.choice("group", "1", "0")
	if err != nil {
		return err
	}
	grouped := group == "1"
	var params *emu.EnableParameters
	if grouped {
		params = &emu.EnableParameters{EnableProperty: guidtable.PropertyProviderGroup}
	}
	if code == emu.EnableProvider {
		if params, err = enableExtras(a, params); err != nil {
			return err
		}
	}
	if code == emu.EnableProvider {
		if err := m.roomForEntry(k, p.g, grouped); err != nil {
			return err
		}
	}
	if e, ok := k.LookupGuidEntry(p.g, grouped); ok {
		m.walked += int64(e.Registrations()) // each hears its callback (Limits.Walk)
	}
	if err := k.EnableTraceEx2(h, p.g, code, uint8(level), anyKw, allKw, params); err != nil {
		return m.unstarted(a.pos[0], h, err)
	}
	verb := map[emu.EventControlCode]string{emu.EnableProvider: "enabled", emu.DisableProvider: "disabled", emu.CaptureState: "asked for the state of"}[code]
	fmt.Fprintf(m.out, "%s %s on %s (LoggerId %d): %s\n", verb, p.shown, quote.Shown(a.pos[0]), h.LoggerID(), m.masks(p))
	return nil
}

// masks says the EnableMask of p's registration, or of the registrations of p's GUID
// under other names (register R guid=...), or that nothing registers it.
func (m *Machine) masks(p *provider) string {
	if p.reg != nil && !p.closed {
		return fmt.Sprintf("EnableMask now 0x%02X", p.reg.EnableMask())
	}
	var regs []string
	for _, q := range m.order {
		if q.g == p.g && q.reg != nil && !q.closed {
			regs = append(regs, fmt.Sprintf("%s's EnableMask now 0x%02X", q.name, q.reg.EnableMask()))
		}
	}
	if regs == nil {
		return "not registered"
	}
	return strings.Join(regs, ", ")
}

// enableProps names the EVENT_ENABLE_PROPERTY_* bits enable's props= takes.
var enableProps = map[string]uint32{
	"sid": guidtable.PropertySID, "tsid": guidtable.PropertyTSID, "stack": guidtable.PropertyStackTrace,
	"start": guidtable.PropertyProcessStartKey, "key": guidtable.PropertyEventKey, "ignore-keyword-0": guidtable.PropertyIgnoreKeyword0,
}

// enableExtras adds to params (nil for none yet) enable's EVENT_ID filters (keep=, drop=),
// its PID filter (pid=), its EXECUTABLE_NAME filter (exe=) and its properties (props=),
// and returns it.
func enableExtras(a args, params *emu.EnableParameters) (*emu.EnableParameters, error) {
	var filters []emu.FilterDescriptor
	for _, f := range []struct {
		key string
		in  bool
	}{{"keep", true}, {"drop", false}} {
		v, ok := a.opts[f.key]
		if !ok {
			continue
		}
		var ids []uint16
		for _, s := range strings.Split(v, ",") {
			n, err := number(s, 16)
			if err != nil {
				return nil, fmt.Errorf("%s: event ids from 0 to 65535, separated by commas", opt(f.key, v))
			}
			ids = append(ids, uint16(n))
		}
		filters = append(filters, guidtable.EventIDFilter(f.in, ids...))
	}
	if v, ok := a.opts["pid"]; ok {
		var pids []uint32
		for _, s := range strings.Split(v, ",") {
			n, err := number(s, 32)
			if err != nil {
				return nil, fmt.Errorf("%s: process ids from 0 to 4294967295, separated by commas", opt("pid", v))
			}
			pids = append(pids, uint32(n))
		}
		filters = append(filters, guidtable.PIDFilter(pids...))
	}
	if v, ok := a.opts["exe"]; ok {
		names := strings.Split(v, ",")
		for i, name := range names {
			var why string
			switch {
			case name == "":
				why = "is empty"
			case strings.ContainsAny(name, ";\x00"):
				why = "holds a ';' (which separates the filter's names) or a NUL"
			case !utf8.ValidString(name):
				why = "is not UTF-8, so it has no UTF-16 form for the filter"
			default:
				continue
			}
			return nil, fmt.Errorf("%s: name %d of %d %s; give executable file names, separated by commas", opt("exe", v), i+1, len(names), why)
		}
		filters = append(filters, guidtable.ExecutableNameFilter(names...))
	}
	var props uint32
	if v, ok := a.opts["props"]; ok {
		for _, s := range strings.Split(v, ",") {
			p, ok := enableProps[s]
			if !ok {
				return nil, fmt.Errorf("%s: %s is not one of sid, tsid, stack, start, key, ignore-keyword-0", opt("props", v), quote.Short(s))
			}
			props |= p
		}
	}
	if filters == nil && props == 0 {
		return params, nil
	}
	if params == nil {
		params = &emu.EnableParameters{}
	}
	params.EnableProperty |= props
	params.Filters = filters
	return params, nil
}

func cmdWrite(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	p := m.named(a.pos[0]) // never registered or closed: EventWriteEx answers
	n, err := number(a.pos[1], 64)
	if err != nil || n > m.limits.Events {
		return fmt.Errorf("count %s: a number from 0 to %d", quote.Short(a.pos[1]), m.limits.Events)
	}
	var v [5]uint64
	for i, o := range []struct {
		key     string
		def, hi uint64
	}{{"size", 16, 65535}, {"proc", 0, 1 << 20}, {"level", 4, 255}, {"keyword", 0, math.MaxUint64}, {"id", 1, 65535}} {
		if v[i], err = a.num(o.key, o.def, o.hi); err != nil {
			return err
		}
	}
	each, left := v[0]+abi.EventHeaderSize, m.limits.Writes-min(m.written, m.limits.Writes)
	if n > left/each { // n*each could pass 2^64 where a caller raised Limits.Events
		return winerr.New(winerr.ErrNotEnoughQuota, "%d events of %d bytes (%d with the %d-byte header) would write more than the %d KB this scenario's writes have left of the most a scenario may write (%d KB, scenario.Limits.Writes)",
			n, v[0], each, abi.EventHeaderSize, left>>10, m.limits.Writes>>10)
	}
	m.written += n * each
	payload := make([]byte, v[0])
	for i := range payload {
		payload[i] = byte(i)
	}
	d := emu.EventDescriptor{ID: uint16(v[4]), Level: uint8(v[2]), Keyword: v[3]}
	var t emu.Tally
	o := &emu.WriteOptions{Processor: int(v[1]), ThreadID: 1, Tally: &t}
	var failed, stopped error
	done := uint64(0)
	// The writes run deeper than a STACK_TRACE item reaches (callstack.Deep), so that each
	// such item holds all its return addresses and a record's size does not follow the
	// depth of the program running the scenario (a fuzz program replays with its sizes).
	callstack.Deep(stackDepth, func() {
		for ; done < n; done++ {
			if done%writeChunk == 0 {
				if m.progress != nil {
					m.progress("write", done)
				}
				if m.ctx.Err() != nil {
					stopped = context.Cause(m.ctx)
					break
				}
			}
			if err := k.EventWriteEx(p.reg, &d, o, payload); err != nil && failed == nil {
				failed = err
			}
		}
	})
	if failed != nil && (p.reg == nil || p.closed) {
		// Nothing reached a session: the code alone says what happened, with the
		// scenario's reason in the place of the kernel's, which speaks of handles.
		why := fmt.Sprintf("%s is not registered: register %s first", p.shown, p.shown)
		if p.closed {
			why = fmt.Sprintf("%s was unregistered", p.shown)
		}
		var we *winerr.Error
		if errors.As(failed, &we) {
			failed = we.Errno
		}
		return fmt.Errorf("EventWriteEx: %w (%s; all %d writes failed)", failed, why, done)
	}
	var parts []string
	for id := range t.Delivered {
		if t.Delivered[id]+t.Lost[id]+t.Denied[id] == 0 {
			continue
		}
		s := fmt.Sprintf("logger %d: %d written", id, t.Delivered[id])
		if t.Lost[id] > 0 {
			s += fmt.Sprintf(", %d lost", t.Lost[id])
		}
		if t.Denied[id] > 0 {
			s += fmt.Sprintf(", %d denied", t.Denied[id])
		}
		parts = append(parts, s)
	}
	if len(parts) == 0 {
		parts = []string{"no session enabled it: every write returned at the EnableMask check"}
		if n == 0 {
			parts = []string{"nothing written: 0 events asked"}
		} else if p.reg != nil && p.reg.EnableMask()|p.reg.GroupEnableMask() != 0 {
			parts = []string{"no session took it: the slots its EnableMask names hold no session that wants it"}
		}
	}
	count := fmt.Sprint(n)
	if stopped != nil {
		count = fmt.Sprintf("%d of %d", done, n)
	}
	fmt.Fprintf(m.out, "wrote %s x%s (%d bytes, processor %d): %s\n", p.shown, count, v[0], o.Processor%k.Processors(), strings.Join(parts, "; "))
	if stopped != nil {
		return fmt.Errorf("stopped after %d of %d events: %w", done, n, stopped)
	}
	if failed != nil {
		return fmt.Errorf("EventWriteEx: %w", explainWrite(failed, len(payload), abi.EventHeaderSize))
	}
	return nil
}

// explainWrite adds to a write's bare Windows code (EventWrite returns no more) what the
// scenario knows of why: the event's size against ETW's limits, or what the session did.
// An error that already gives its reason is returned as it is, but for a record too
// large, whose sizes the scenario gives in place of the emulator's general reason.
func explainWrite(err error, payload, header int) error {
	var reasoned *winerr.Error
	if errors.As(err, &reasoned) {
		if !errors.Is(err, winerr.ErrArithmeticOverflow) {
			return err
		}
		err = reasoned.Errno
	}
	var why string
	switch {
	case errors.Is(err, winerr.ErrArithmeticOverflow):
		why = fmt.Sprintf("an event of %d payload bytes is %d bytes with its %d-byte header, and ETW takes at most 65,535 bytes an event", payload, payload+header, header)
	case errors.Is(err, winerr.ErrMoreData):
		why = fmt.Sprintf("the record, the event's %d bytes with its %d-byte header and any extended items a session adds (an enable's props=, the session's PMC counters), does not fit a session that takes it: "+
			"a record must fit the session's buffer after the buffer's %d-byte header (buffer=KB starts a session with larger ones) and stay within ETW's 65,535 bytes an event; "+
			"the event is counted in that session's EventsLost", payload+header, header, abi.BufferHeaderSize)
	case errors.Is(err, winerr.ErrNotEnoughMemory):
		why = "a session that takes it had no free buffer (all full, waiting for its logger): the event is counted in its EventsLost; more buffers (max=N) leave the logger longer"
	case errors.Is(err, winerr.ErrLogFileFull):
		why = "a REAL_TIME session that takes it has no consumer, and the buffers it keeps for one are full: the event is counted in its EventsLost until a consumer attaches"
	default:
		return err
	}
	return fmt.Errorf("%w (%s)", err, why)
}

// writeChunk is how many events a write command writes between looks at its context:
// at most 64 KB events' worth of copying (a few milliseconds) pass before a stop is seen.
const writeChunk = 1024

// roomForEntry refuses a command that would add the entry of g (a group's with group) to
// a GUID table already holding Limits.GUIDEntries entries.
func (m *Machine) roomForEntry(k *emu.Kernel, g guid.GUID, group bool) error {
	if k.GuidEntryCount() < m.limits.GUIDEntries {
		return nil
	}
	if _, ok := k.LookupGuidEntry(g, group); ok {
		return nil
	}
	return winerr.New(winerr.ErrNoSystemResources, "the GUID table holds %d entries, the most this machine allows (scenario.Limits.GUIDEntries): a lookup walks a 64th of them", m.limits.GUIDEntries)
}

func cmdTraits(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	p := m.named(a.pos[0])
	blob := regentry.BuildTraits(p.name)
	if g, ok := a.opts["group"]; ok {
		group := m.named(g).g
		if err := m.roomForEntry(k, group, true); err != nil {
			return err
		}
		blob = regentry.BuildTraits(p.name, regentry.GroupTrait(group))
	}
	if err := k.EventSetInformation(p.reg, emu.EventProviderSetTraits, blob); err != nil {
		return err
	}
	fmt.Fprintf(m.out, "set the traits of %s (%d bytes)\n", p.shown, len(blob))
	return nil
}

// list reads a comma-separated list of numbers or names; "none" is the empty list.
func list(s string, parse func(string) (uint32, error)) ([]uint32, error) {
	var out []uint32
	if s == "none" {
		return out, nil
	}
	for _, w := range strings.Split(s, ",") {
		v, err := parse(w)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func cmdCounters(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	srcs, err := list(a.pos[1], func(w string) (uint32, error) {
		s, err := pmc.ParseProfileSource(w)
		return uint32(s), err
	})
	if err != nil {
		return err
	}
	via, err := a.choice("via", "native")
	if err != nil {
		return err
	}
	h := m.handle(a.pos[0])
	if via == "native" {
		ps := make([]pmc.ProfileSource, len(srcs))
		for i, s := range srcs {
			ps[i] = pmc.ProfileSource(s)
		}
		err = k.SetSystemInformation(pmc.SystemPerformanceTraceInformation, pmc.CounterInformation(uint64(h), ps...))
	} else {
		err = k.TraceSetInformation(h, pmc.TracePmcCounterListInfo, pmc.ULONGs(srcs...))
	}
	if err != nil {
		return m.unstarted(a.pos[0], h, err)
	}
	fmt.Fprintf(m.out, "set %d counters on %s\n", len(srcs), quote.Shown(a.pos[0]))
	return nil
}

func cmdHooks(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	hooks, err := list(a.pos[1], parseHook)
	if err != nil {
		return err
	}
	via, err := a.choice("via", "native")
	if err != nil {
		return err
	}
	h := m.handle(a.pos[0])
	if via == "native" {
		err = k.SetSystemInformation(pmc.SystemPerformanceTraceInformation, pmc.EventInformation(uint64(h), hooks...))
	} else {
		ids, bad := pmc.HookEventIDs(hooks...)
		if bad != nil {
			return fmt.Errorf("%w (via=native takes any hook id)", bad)
		}
		err = k.TraceSetInformation(h, pmc.TracePmcEventListInfo, ids)
	}
	if err != nil {
		return m.unstarted(a.pos[0], h, err)
	}
	fmt.Fprintf(m.out, "set %d PMC hook ids on %s\n", len(hooks), quote.Shown(a.pos[0]))
	return nil
}

func parseHook(w string) (uint32, error) {
	v, err := number(w, 16)
	if err != nil {
		return 0, fmt.Errorf("hook id %s: a number such as 0x0524", quote.Short(w))
	}
	return uint32(v), nil
}

func cmdSysWrite(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	hook, err := parseHook(a.pos[1])
	if err != nil {
		return err
	}
	size, err := a.num("size", 16, 65535)
	if err != nil {
		return err
	}
	proc, err := a.num("proc", 0, 1<<20)
	if err != nil {
		return err
	}
	var t emu.Tally
	h := m.handle(a.pos[0])
	if err := k.WriteSystemEvent(h, uint16(hook), &emu.WriteOptions{Processor: int(proc), Tally: &t}, make([]byte, size)); err != nil {
		return explainWrite(m.unstarted(a.pos[0], h, err), int(size), abi.SystemHeaderSize)
	}
	id := m.handle(a.pos[0]).LoggerID()
	fmt.Fprintf(m.out, "wrote kernel event %#04x to %s: %d written, %d lost\n", hook, quote.Shown(a.pos[0]), t.Delivered[id], t.Lost[id])
	return nil
}

func cmdAdvance(m *Machine, a args) error {
	if m.attached {
		return errAttached
	}
	if _, err := m.kernel(); err != nil {
		return err
	}
	d, err := time.ParseDuration(a.pos[0])
	if err != nil || d < 0 {
		return fmt.Errorf("%s: a duration such as 1ms or 2s", quote.Short(a.pos[0]))
	}
	ticks, now := int64(d/(time.Second/clockFrequency)), m.clk.Peek()
	if ticks == 0 && d > 0 {
		return fmt.Errorf("%s is less than one tick of the manual clock (%v): the clock would not move", quote.Short(a.pos[0]), time.Second/clockFrequency)
	}
	if ticks > math.MaxInt64-now {
		return fmt.Errorf("%s would pass the end of the clock: it stands at %d ticks and holds at most %d (2^63-1 ticks of 100 ns, about %d years)",
			a.pos[0], now, int64(math.MaxInt64), int64(math.MaxInt64)/clockFrequency/(365*24*3600))
	}
	m.clk.Advance(ticks)
	fmt.Fprintf(m.out, "clock: %s\n", quote.Count(m.clk.Peek(), "tick"))
	return nil
}

func cmdEcho(m *Machine, a args) error {
	fmt.Fprintln(m.out, quote.Printable(strings.Join(a.raw, " ")))
	return nil
}

// codeNumber reads a Windows code written as a number: decimal (87), or hex after 0x
// (0xC000000D).
func codeNumber(s string) (uint64, error) { return number(s, 32) }

// number reads an unsigned number of bits bits as the help says numbers are written:
// decimal, or hex after 0x. A leading zero is decimal still (010 is ten), not octal as
// Go's base 0 would read it, and its 0b, 0o and 1_000 forms are refused.
func number(s string, bits int) (uint64, error) {
	if h, ok := strings.CutPrefix(strings.ToLower(s), "0x"); ok {
		return strconv.ParseUint(h, 16, bits)
	}
	return strconv.ParseUint(s, 10, bits)
}

// codeName returns the Windows name of the code err carries: SUCCESS for nil.
func codeName(err error) string {
	if err == nil {
		return "SUCCESS"
	}
	var e *winerr.Errno
	if errors.As(err, &e) {
		return e.Name()
	}
	return "no Windows code"
}

func cmdExpect(m *Machine, a args) error {
	if len(a.raw) < 2 {
		return errors.New("name a code and a command: expect ERROR_ALREADY_EXISTS start s")
	}
	want := strings.ToUpper(a.raw[0])
	if n, err := codeNumber(a.raw[0]); err == nil { // 87, 0xC000000D
		if e, ok := winerr.ByCode(uint32(n)); ok {
			want = e.Name()
		} else if n == 0 {
			want = "SUCCESS"
		}
	}
	if want == "ERROR_SUCCESS" { // winerror.h's name for 0
		want = "SUCCESS"
	}
	if _, ok := winerr.ByName(want); !ok && want != "SUCCESS" {
		return fmt.Errorf("%s is no Windows code the emulator returns (ERROR_INVALID_PARAMETER or 87, ERROR_ALREADY_EXISTS or 183, STATUS_INVALID_PARAMETER or 0xC000000D, ..., or SUCCESS or 0)", quote.Shown(a.raw[0]))
	}
	c, ok := commands[strings.ToLower(a.raw[1])]
	if !ok || c.raw {
		return fmt.Errorf("%s is not a command it can run", quote.Short(a.raw[1]))
	}
	inner, err := parseArgs(a.raw[2:], c)
	if err != nil {
		return fmt.Errorf("%s: %w (usage: %s)", a.raw[1], err, c.usage)
	}
	got := m.quota(strings.ToLower(a.raw[1]))
	if got == nil {
		got = c.run(m, inner)
	}
	if name := codeName(got); name != want {
		if got == nil {
			return fmt.Errorf("expected %s, but %s succeeded", want, a.raw[1])
		}
		return fmt.Errorf("expected %s, got %w", want, got)
	}
	if got != nil {
		fmt.Fprintf(m.out, "as expected, %s failed: %v\n", a.raw[1], got)
	}
	return nil
}

// sessionNamed finds a running session by name or by logger id (as !wmitrace takes it):
// a name first, so that a session named "3" is found as "3"; "#3" is logger id 3 alone.
func (m *Machine) sessionNamed(name string) (*emu.Session, error) {
	if _, err := m.kernel(); err != nil {
		return nil, err
	}
	sessions := m.k.Sessions()
	byID, onlyID := strings.CutPrefix(name, "#")
	if !onlyID {
		for _, l := range sessions {
			if strings.EqualFold(l.Name(), name) {
				return l, nil
			}
		}
	}
	if id, err := number(byID, 16); err == nil {
		for _, l := range sessions {
			if uint64(l.ID()) == id {
				return l, nil
			}
		}
	}
	if onlyID {
		return nil, winerr.New(winerr.ErrWMIInstanceNotFound, "no session has logger id %s (#ID names a logger by its id)", quote.Short(byID))
	}
	return nil, winerr.New(winerr.ErrWMIInstanceNotFound, "no session named %s", quote.Short(name))
}
