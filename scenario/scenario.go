// Package scenario runs lessons on an emulated kernel: a small line-oriented language
// whose commands start, stop, update and flush sessions, register and enable providers,
// write events on chosen processors, move a manual clock, expect Windows error codes and
// print the kernel's views (strdump, logger, bufdump, logdump, guids, regs, pmc). The
// kernel is synchronous, its clock manual and its files in memory, so a scenario prints
// the same text every time it runs: `etwemu run FILE` runs one, `etwemu shell` reads the
// commands from a terminal or a pipe, and the examples folder holds lessons.
package scenario

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// ProcessID is the process every scenario's providers register in, so that records
// print the same from run to run.
const ProcessID = 1000

// clockFrequency is the manual clock's: 10 MHz, 100 ns ticks.
const clockFrequency = 10_000_000

// Machine is one scenario's emulated kernel and the names the scenario gave its
// providers. It is not safe for concurrent use: a scenario is one sequence of commands.
type Machine struct {
	out     io.Writer
	k       *emu.Kernel // nil until the first command that needs it
	version winver.Version
	procs   int
	clk     *clock.Manual
	fs      *etl.MemFS
	provs   map[string]*provider       // by lower-cased name
	handles map[string]emu.TraceHandle // the sessions this scenario started, by lower-cased name
	order   []*provider                // in registration order, for views
}

// provider is a provider the scenario named: its GUID and, while registered, its
// registration.
type provider struct {
	name string
	g    guid.GUID
	reg  *emu.Registration
}

// New returns a machine that prints to out. Its kernel is created by the first command
// that needs one, as the scenario's `kernel` command configured it (Windows 2004 and two
// processors when it did not).
func New(out io.Writer) *Machine {
	return &Machine{out: out, version: winver.Default, procs: 2, provs: map[string]*provider{}, handles: map[string]emu.TraceHandle{}}
}

// Close stops the machine's kernel.
func (m *Machine) Close() {
	if m.k != nil {
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
	k, err := emu.New(emu.Config{Version: m.version, Processors: m.procs, Clock: m.clk, ClockFrequency: clockFrequency,
		ProcessID: ProcessID, Synchronous: true, FileSystem: m.fs, PMCSource: pmc.Synthetic{}})
	if err != nil {
		return nil, err
	}
	m.k = k
	return k, nil
}

// Run executes a scenario read from r, one command per line, and stops at the first
// command that fails unexpectedly; the error names its line. Blank lines and lines
// starting with '#' are skipped; comment lines starting with "##" are printed, so a
// lesson's commentary appears in its output.
func (m *Machine) Run(r io.Reader) error {
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		if err := m.Exec(sc.Text()); err != nil {
			return fmt.Errorf("line %d: %w", n, err)
		}
	}
	return sc.Err()
}

// Exec runs one line. An error means the command failed (or an `expect` was not met);
// the machine stays usable.
func (m *Machine) Exec(line string) error {
	line = strings.TrimSpace(line)
	if text, ok := strings.CutPrefix(line, "##"); ok {
		fmt.Fprintln(m.out, "#"+text)
		return nil
	}
	if line == "" || line[0] == '#' {
		return nil
	}
	fields := strings.Fields(line)
	c, ok := commands[strings.ToLower(fields[0])]
	if !ok {
		return fmt.Errorf("unknown command %q (help lists them)", fields[0])
	}
	args, err := parseArgs(fields[1:], c)
	if err != nil {
		return fmt.Errorf("%s: %w (usage: %s)", fields[0], err, c.usage)
	}
	if err := c.run(m, args); err != nil {
		return fmt.Errorf("%s: %w", fields[0], err)
	}
	return nil
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
				return a, fmt.Errorf("unknown option %q", k)
			}
			a.opts[k] = v
			continue
		}
		if w == "-json" {
			a.opts["json"] = "true"
			continue
		}
		a.pos = append(a.pos, w)
	}
	if len(a.pos) < c.min || len(a.pos) > c.max {
		return a, fmt.Errorf("%d arguments", len(a.pos))
	}
	return a, nil
}

// num reads option k as an unsigned number (decimal or 0x hex), or def when absent.
func (a args) num(k string, def uint64) (uint64, error) {
	v, ok := a.opts[k]
	if !ok {
		return def, nil
	}
	n, err := strconv.ParseUint(v, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("%s=%s: not a number", k, v)
	}
	return n, nil
}

func (a args) json() bool { return a.opts["json"] == "true" }

// command is one command of the language.
type command struct {
	usage    string // the command as help shows it
	help     string
	min, max int    // positional arguments
	opts     string // the option names, space-separated
	raw      bool   // the words are passed unparsed (expect, echo)
	run      func(m *Machine, a args) error
}

var commands map[string]command

func init() {
	commands = map[string]command{
		"kernel": {"kernel [version=V] [processors=N]", "start a new emulated kernel (the previous one and its sessions are gone); without it the first command starts version=2004 processors=2",
			0, 0, "version processors", false, cmdKernel},
		"start": {"start NAME [mode=FLAGS] [buffer=KB] [min=N] [max=N] [file=PATH] [maxfile=MB] [flush=S]", "StartTrace: start a session; mode takes LogFileMode names (SEQUENTIAL,CIRCULAR or EVENT_TRACE_*), file names an in-memory log file",
			1, 1, "mode buffer min max file maxfile flush", false, cmdStart},
		"stop":       {"stop NAME", "StopTrace: stop a session and print its final counters", 1, 1, "", false, cmdStop},
		"flush":      {"flush NAME", "FlushTrace: seal the session's current buffers and write them", 1, 1, "", false, cmdFlush},
		"update":     {"update NAME [max=N] [flush=S]", "ControlTrace(UPDATE): raise MaximumBuffers or change the flush timer", 1, 1, "max flush", false, cmdUpdate},
		"register":   {"register P [guid=GUID]", "EventRegister: register provider P (its GUID is the EventSource hash of the name unless given)", 1, 1, "guid", false, cmdRegister},
		"unregister": {"unregister P", "EventUnregister: close P's registration", 1, 1, "", false, cmdUnregister},
		"enable": {"enable NAME P [level=L] [any=K] [all=K]", "EnableTraceEx2(ENABLE_PROVIDER): enable P on session NAME (P need not be registered yet)",
			2, 2, "level any all", false, cmdEnable},
		"disable": {"disable NAME P", "EnableTraceEx2(DISABLE_PROVIDER)", 2, 2, "", false, cmdDisable},
		"write": {"write P N [size=S] [proc=CPU] [level=L] [keyword=K] [id=ID]", "EventWriteEx N times: events of S payload bytes (default 16) on processor CPU (default 0)",
			2, 2, "size proc level keyword id", false, cmdWrite},
		"advance": {"advance DURATION", "move the manual clock on: 1ms, 2s, 100us", 1, 1, "", false, cmdAdvance},
		"expect":  {"expect CODE COMMAND ...", "run COMMAND, which must fail with the Windows code CODE (ERROR_INVALID_PARAMETER, ...) or succeed for SUCCESS", 0, 0, "", true, cmdExpect},
		"echo":    {"echo TEXT", "print TEXT", 0, 0, "", true, cmdEcho},
		"help":    {"help [COMMAND]", "list the commands, or explain one", 0, 1, "", false, cmdHelp},
		"strdump": {"strdump [-json]", "every logger: id, name, kind, mode, buffers and counters (like !wmitrace.strdump)", 0, 0, "", false, viewStrdump},
		"logger":  {"logger NAME [-json]", "one logger context, its fields named and placed as the layout catalogue has them for this version", 1, 1, "", false, viewLogger},
		"bufdump": {"bufdump NAME [bytes=N] [-json]", "each buffer: processor, state, offsets, reference count, then its records' first N bytes in hex (default 32)", 1, 1, "bytes", false, viewBufdump},
		"logdump": {"logdump NAME [t=N] [-json]", "the last N (default 20) events in the session's buffers, all processors merged by timestamp", 1, 1, "t", false, viewLogdump},
		"guids":   {"guids [-json]", "each GUID entry: its eight enable slots and its registrations", 0, 0, "", false, viewGuids},
		"regs":    {"regs [-json]", "the scenario's providers: registration index and enable masks", 0, 0, "", false, viewRegs},
		"files":   {"files", "the log files the sessions wrote (in memory), with their sizes", 0, 0, "", false, viewFiles},
		"pmc":     {"pmc NAME [-json]", "the session's PMC support: counter sources, hook ids, reads per processor", 1, 1, "", false, viewPMC},
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
			return fmt.Errorf("no command %q", a.pos[0])
		}
		fmt.Fprintf(m.out, "%s\n  %s\n", c.usage, c.help)
		return nil
	}
	Help(m.out)
	return nil
}

func cmdKernel(m *Machine, a args) error {
	version, procs := m.version, m.procs
	if v, ok := a.opts["version"]; ok {
		ver, err := winver.Parse(v)
		if err != nil {
			return err
		}
		version = ver
	}
	n, err := a.num("processors", uint64(procs))
	if err != nil {
		return err
	}
	if n < 1 || n > 2048 {
		return fmt.Errorf("processors=%d: the emulator supports 1 to 2048", n)
	}
	if m.k != nil { // a new kernel: the old one and everything in it are gone
		m.k.Close()
		m.k, m.provs, m.order, m.handles = nil, map[string]*provider{}, nil, map[string]emu.TraceHandle{}
	}
	m.version, m.procs = version, int(n)
	if _, err := m.kernel(); err != nil {
		return err
	}
	fmt.Fprintf(m.out, "kernel: %s (%s), %d processors, synchronous, manual clock at %d MHz\n", m.version.Marketing(), m.version, m.procs, clockFrequency/1_000_000)
	return nil
}

func cmdStart(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	mode, err := logmode.Parse(a.opts["mode"])
	if err != nil {
		return err
	}
	p := &emu.Properties{LogFileMode: uint32(mode), LogFileName: a.opts["file"]}
	for _, o := range []struct {
		key string
		dst *uint32
		def uint64
	}{{"buffer", &p.BufferSize, 64}, {"min", &p.MinimumBuffers, 0}, {"max", &p.MaximumBuffers, 0}, {"maxfile", &p.MaximumFileSize, 0}, {"flush", &p.FlushTimer, 0}} {
		n, err := a.num(o.key, o.def)
		if err != nil {
			return err
		}
		if n > 1<<31 {
			return fmt.Errorf("%s=%d is too large", o.key, n)
		}
		*o.dst = uint32(n)
	}
	h, err := k.StartTrace(a.pos[0], p)
	if err != nil {
		return err
	}
	m.handles[strings.ToLower(a.pos[0])] = h
	fmt.Fprintf(m.out, "started %s: LoggerId %d, LoggerMode %s, BufferSize %d KB, %d buffers (MinimumBuffers %d, MaximumBuffers %d)\n",
		a.pos[0], h.LoggerID(), logmode.Mode(p.LogFileMode).Short(), p.BufferSize, p.NumberOfBuffers, p.MinimumBuffers, p.MaximumBuffers)
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
	delete(m.handles, strings.ToLower(a.pos[0]))
	fmt.Fprintf(m.out, "stopped %s: %s\n", a.pos[0], counters(&p))
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
	fmt.Fprintf(m.out, "flushed %s: %s\n", a.pos[0], counters(&p))
	return nil
}

func cmdUpdate(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	var q emu.Properties
	if err := k.QueryTrace(0, a.pos[0], &q); err != nil {
		return err
	}
	p := emu.Properties{LogFileMode: q.LogFileMode, MaximumBuffers: q.MaximumBuffers, FlushTimer: q.FlushTimer, LogFileName: q.LogFileName}
	maxBuf, err := a.num("max", uint64(p.MaximumBuffers))
	if err != nil {
		return err
	}
	flush, err := a.num("flush", uint64(p.FlushTimer))
	if err != nil {
		return err
	}
	p.MaximumBuffers, p.FlushTimer = uint32(min(maxBuf, 1<<31)), uint32(min(flush, 1<<31))
	if err := k.ControlTrace(0, a.pos[0], &p, emu.ControlUpdate); err != nil {
		return err
	}
	fmt.Fprintf(m.out, "updated %s: MaximumBuffers %d, FlushTimer %d\n", a.pos[0], p.MaximumBuffers, p.FlushTimer)
	return nil
}

// named returns the provider the scenario calls name, creating its entry (not its
// registration) on first mention.
func (m *Machine) named(name string) *provider {
	key := strings.ToLower(name)
	if p, ok := m.provs[key]; ok {
		return p
	}
	p := &provider{name: name, g: guid.FromName(name)}
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
	if p.reg != nil {
		return fmt.Errorf("%s is already registered (a process may register a provider more than once; the scenario names one registration per provider)", p.name)
	}
	if g, ok := a.opts["guid"]; ok {
		if p.g, err = guid.Parse(g); err != nil {
			return err
		}
	}
	reg, err := k.EventRegister(p.g, nil, nil)
	if err != nil {
		return err
	}
	p.reg = reg
	fmt.Fprintf(m.out, "registered %s %s: ETW_REG_ENTRY index %d, EnableMask 0x%02X\n", p.name, p.g, reg.Index(), reg.EnableMask())
	return nil
}

func cmdUnregister(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	p := m.named(a.pos[0])
	if p.reg == nil {
		return fmt.Errorf("%s is not registered", p.name)
	}
	if err := k.EventUnregister(p.reg); err != nil {
		return err
	}
	p.reg = nil
	fmt.Fprintf(m.out, "unregistered %s\n", p.name)
	return nil
}

// handle returns the handle StartTrace gave the scenario for a session.
func (m *Machine) handle(name string) (emu.TraceHandle, error) {
	if h, ok := m.handles[strings.ToLower(name)]; ok {
		return h, nil
	}
	return 0, winerr.New(winerr.ErrWMIInstanceNotFound, "this scenario started no running session named %q", name)
}

func cmdEnable(m *Machine, a args) error { return enable(m, a, regentry.ControlEnable) }

func cmdDisable(m *Machine, a args) error { return enable(m, a, regentry.ControlDisable) }

func enable(m *Machine, a args, code regentry.ControlCode) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	h, err := m.handle(a.pos[0])
	if err != nil {
		return err
	}
	p := m.named(a.pos[1])
	level, err := a.num("level", 0)
	if err != nil {
		return err
	}
	anyKw, err := a.num("any", 0)
	if err != nil {
		return err
	}
	allKw, err := a.num("all", 0)
	if err != nil {
		return err
	}
	if err := k.EnableTraceEx2(h, p.g, code, uint8(min(level, 255)), anyKw, allKw, nil); err != nil {
		return err
	}
	verb := "enabled"
	if code == regentry.ControlDisable {
		verb = "disabled"
	}
	mask := "not registered"
	if p.reg != nil {
		mask = fmt.Sprintf("EnableMask now 0x%02X", p.reg.EnableMask())
	}
	fmt.Fprintf(m.out, "%s %s on %s (LoggerId %d): %s\n", verb, p.name, a.pos[0], h.LoggerID(), mask)
	return nil
}

func cmdWrite(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	p := m.named(a.pos[0])
	if p.reg == nil {
		return fmt.Errorf("%s is not registered", p.name)
	}
	n, err := strconv.ParseUint(a.pos[1], 0, 32)
	if err != nil || n > 10_000_000 {
		return fmt.Errorf("count %q: a number up to 10000000", a.pos[1])
	}
	var v [5]uint64
	for i, o := range []struct {
		key      string
		def, max uint64
	}{{"size", 16, 65000}, {"proc", 0, 1 << 20}, {"level", 4, 255}, {"keyword", 0, 1<<64 - 1}, {"id", 1, 65535}} {
		if v[i], err = a.num(o.key, o.def); err != nil {
			return err
		}
		if v[i] > o.max {
			return fmt.Errorf("%s=%d: at most %d", o.key, v[i], o.max)
		}
	}
	payload := make([]byte, v[0])
	for i := range payload {
		payload[i] = byte(i)
	}
	d := emu.EventDescriptor{ID: uint16(v[4]), Level: uint8(v[2]), Keyword: v[3]}
	var t emu.Tally
	o := &emu.WriteOptions{Processor: int(v[1]), ThreadID: 1, Tally: &t}
	var failed error
	for range n {
		if err := k.EventWriteEx(p.reg, &d, o, payload); err != nil && failed == nil {
			failed = err
		}
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
	}
	fmt.Fprintf(m.out, "wrote %s x%d (%d bytes, processor %d): %s\n", p.name, n, v[0], o.Processor%k.Processors(), strings.Join(parts, "; "))
	if failed != nil {
		return fmt.Errorf("EventWriteEx: %w", failed)
	}
	return nil
}

func cmdAdvance(m *Machine, a args) error {
	if _, err := m.kernel(); err != nil {
		return err
	}
	d, err := time.ParseDuration(a.pos[0])
	if err != nil || d < 0 {
		return fmt.Errorf("%q: a duration such as 1ms or 2s", a.pos[0])
	}
	m.clk.Advance(int64(d / (time.Second / clockFrequency)))
	fmt.Fprintf(m.out, "clock: %d ticks\n", m.clk.Peek())
	return nil
}

func cmdEcho(m *Machine, a args) error {
	fmt.Fprintln(m.out, strings.Join(a.raw, " "))
	return nil
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
	c, ok := commands[strings.ToLower(a.raw[1])]
	if !ok || c.raw {
		return fmt.Errorf("expect: %q is not a command it can run", a.raw[1])
	}
	inner, err := parseArgs(a.raw[2:], c)
	if err != nil {
		return fmt.Errorf("%s: %w (usage: %s)", a.raw[1], err, c.usage)
	}
	got := c.run(m, inner)
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

// sessionNamed finds a running session by name.
func (m *Machine) sessionNamed(name string) (*session.Logger, error) {
	if _, err := m.kernel(); err != nil {
		return nil, err
	}
	for _, l := range m.k.Sessions() {
		if strings.EqualFold(l.Name(), name) {
			return l, nil
		}
	}
	return nil, winerr.New(winerr.ErrWMIInstanceNotFound, "no session named %q", name)
}
