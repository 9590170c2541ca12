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
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/regentry"
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
	pmcCtrs int // PMC counters per processor; 0 for pmc.DefaultPlatformCounters
	clk     *clock.Manual
	fs      *etl.MemFS
	provs   map[string]*provider       // by lower-cased name
	handles map[string]emu.TraceHandle // the last handle StartTrace gave each session name, lower-cased, kept after stop as a program keeps it
	order   []*provider                // in registration order, for views
}

// provider is a name the scenario used for a provider or a registration: its GUID and,
// once registered, its registration (kept after EventUnregister, as a program keeps a
// stale REGHANDLE).
type provider struct {
	name   string
	g      guid.GUID
	reg    *emu.Registration
	closed bool // EventUnregister was called on reg
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
		ProcessID: ProcessID, Synchronous: true, FileSystem: m.fs, PMCSource: pmc.Synthetic{}, PMCCounters: m.pmcCtrs})
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
		"kernel": {"kernel [version=V] [processors=N] [pmccounters=N]", "start a new emulated kernel (the previous one and its sessions are gone); without it the first command starts version=2004 processors=2",
			0, 0, "version processors pmccounters", false, cmdKernel},
		"start": {"start NAME [mode=FLAGS] [buffer=KB] [min=N] [max=N] [file=PATH] [maxfile=MB] [flush=S] [guid=P] [autologger=1]", "StartTrace: start a session; mode takes LogFileMode names (SEQUENTIAL,CIRCULAR or EVENT_TRACE_*), file names an in-memory log file, guid the session GUID (a provider name or a GUID: a private logger's provider), autologger=1 starts it as an AutoLogger session",
			1, 1, "mode buffer min max file maxfile flush guid autologger", false, cmdStart},
		"save":       {"save NAME FILE", "write an in-memory (BUFFERING) session's ring of buffers to an in-memory ETL file, as xperf -flush does", 2, 2, "", false, cmdSave},
		"query":      {"query NAME", "ControlTrace(QUERY): the session's counters", 1, 1, "", false, cmdQuery},
		"stop":       {"stop NAME", "StopTrace: stop a session and print its final counters", 1, 1, "", false, cmdStop},
		"flush":      {"flush NAME", "FlushTrace: seal the session's current buffers and write them", 1, 1, "", false, cmdFlush},
		"update":     {"update NAME [max=N] [flush=S]", "ControlTrace(UPDATE) with MaximumBuffers and FlushTimer as given (0 where not)", 1, 1, "max flush", false, cmdUpdate},
		"register":   {"register R [guid=GUID]", "EventRegister: register a provider under the name R (its GUID is the EventSource hash of R unless given; write and unregister name R)", 1, 1, "guid", false, cmdRegister},
		"unregister": {"unregister R", "EventUnregister: close registration R (a second time, or a name never registered, goes to EventUnregister all the same)", 1, 1, "", false, cmdUnregister},
		"enable": {"enable NAME P [level=L] [any=K] [all=K] [group=1]", "EnableTraceEx2(ENABLE_PROVIDER): enable P on session NAME (P need not be registered yet); group=1 enables P as a provider group",
			2, 2, "level any all group", false, cmdEnable},
		"disable": {"disable NAME P [group=1]", "EnableTraceEx2(DISABLE_PROVIDER)", 2, 2, "group", false, cmdDisable},
		"capture": {"capture NAME P [group=1]", "EnableTraceEx2(CAPTURE_STATE): ask P's enable callback for its state", 2, 2, "group", false, cmdCapture},
		"traits":  {"traits R [group=P]", "EventSetInformation(EventProviderSetTraits): give registration R traits, joining provider group P if named", 1, 1, "group", false, cmdTraits},
		"counters": {"counters NAME SRC[,SRC...] [via=native]", "set the session's PMC counter list (KPROFILE_SOURCE names or numbers; none for an empty list) with TraceSetInformation, or NtSetSystemInformation for via=native",
			2, 2, "via", false, cmdCounters},
		"hooks":    {"hooks NAME HOOK[,HOOK...] [via=native]", "set the system events (hook ids such as 0x0524) whose records carry the counters", 2, 2, "via", false, cmdHooks},
		"syswrite": {"syswrite NAME HOOK [size=S] [proc=CPU]", "write a kernel event with a SYSTEM_TRACE_HEADER (hook id HOOK) to session NAME", 2, 2, "size proc", false, cmdSysWrite},
		"write": {"write R N [size=S] [proc=CPU] [level=L] [keyword=K] [id=ID]", "EventWriteEx N times through registration R: events of S payload bytes (default 16) on processor CPU (default 0)",
			2, 2, "size proc level keyword id", false, cmdWrite},
		"advance": {"advance DURATION", "move the manual clock on: 1ms, 2s, 100us", 1, 1, "", false, cmdAdvance},
		"expect":  {"expect CODE COMMAND ...", "run COMMAND, which must fail with the Windows code CODE (ERROR_INVALID_PARAMETER, ...) or succeed for SUCCESS", 0, 0, "", true, cmdExpect},
		"echo":    {"echo TEXT", "print TEXT", 0, 0, "", true, cmdEcho},
		"help":    {"help [COMMAND]", "list the commands, or explain one", 0, 1, "", false, cmdHelp},
		"strdump": {"strdump [-json]", "every logger: id, name, kind, mode, buffers and counters (like !wmitrace.strdump)", 0, 0, "", false, viewStrdump},
		"logger":  {"logger NAME|ID [-json]", "one logger context, its fields named and placed as the layout catalogue has them for this version", 1, 1, "", false, viewLogger},
		"bufdump": {"bufdump NAME|ID [bytes=N] [-json]", "each buffer: processor, state, offsets, reference count, then its records' first N bytes in hex (default 32)", 1, 1, "bytes", false, viewBufdump},
		"logdump": {"logdump NAME|ID [t=N] [-json]", "the last N (default 20) events in the session's buffers, all processors merged by timestamp", 1, 1, "t", false, viewLogdump},
		"guids":   {"guids [-json]", "each GUID entry: its eight enable slots and its registrations", 0, 0, "", false, viewGuids},
		"regs":    {"regs [-json]", "the scenario's providers: registration index and enable masks", 0, 0, "", false, viewRegs},
		"files":   {"files", "the log files the sessions wrote (in memory), with their sizes", 0, 0, "", false, viewFiles},
		"pmc":     {"pmc NAME|ID [-json]", "the session's PMC support: counter sources, hook ids, reads per processor", 1, 1, "", false, viewPMC},
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
	ctrs, err := a.num("pmccounters", uint64(m.pmcCtrs))
	if err != nil {
		return err
	}
	if ctrs > pmc.MaxPlatformCounters {
		return fmt.Errorf("pmccounters=%d: the emulated HAL has at most %d", ctrs, pmc.MaxPlatformCounters)
	}
	if m.k != nil { // a new kernel: the old one and everything in it are gone
		m.k.Close()
		m.k, m.provs, m.order, m.handles = nil, map[string]*provider{}, nil, map[string]emu.TraceHandle{}
	}
	m.version, m.procs, m.pmcCtrs = version, int(n), int(ctrs)
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
	p := &emu.Properties{LogFileMode: uint32(mode), LogFileName: a.opts["file"], AutoLogger: a.opts["autologger"] == "1"}
	if g, ok := a.opts["guid"]; ok {
		if p.GUID, err = guid.Parse(g); err != nil {
			p.GUID = m.named(g).g // a provider's name: its GUID
		}
	}
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

func cmdSave(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	n, err := k.SaveBuffers(a.pos[0], a.pos[1])
	if err != nil {
		return err
	}
	fmt.Fprintf(m.out, "saved %s to %s: %d buffers after the header\n", a.pos[0], a.pos[1], n)
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
	fmt.Fprintf(m.out, "queried %s: %s\n", a.pos[0], counters(&p))
	return nil
}

func cmdUpdate(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	maxBuf, err := a.num("max", 0)
	if err != nil {
		return err
	}
	flush, err := a.num("flush", 0)
	if err != nil {
		return err
	}
	p := emu.Properties{MaximumBuffers: uint32(min(maxBuf, 1<<31)), FlushTimer: uint32(min(flush, 1<<31))}
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
		return fmt.Errorf("the name %s is taken by a registration; register the provider again under another name with guid=%v", p.name, p.g)
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
	if err := k.EventUnregister(p.reg); err != nil { // a nil or closed handle: the kernel answers
		return err
	}
	p.closed = p.reg != nil
	fmt.Fprintf(m.out, "unregistered %s\n", p.name)
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
	var params *emu.EnableParameters
	if a.opts["group"] == "1" {
		params = &emu.EnableParameters{EnableProperty: guidtable.PropertyProviderGroup}
	}
	if err := k.EnableTraceEx2(h, p.g, code, uint8(min(level, 255)), anyKw, allKw, params); err != nil {
		return err
	}
	verb := map[emu.EventControlCode]string{emu.EnableProvider: "enabled", emu.DisableProvider: "disabled", emu.CaptureState: "asked for the state of"}[code]
	mask := "not registered"
	if p.reg != nil && !p.closed {
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
	p := m.named(a.pos[0]) // never registered or closed: EventWriteEx answers
	n, err := strconv.ParseUint(a.pos[1], 0, 32)
	if err != nil || n > 10_000_000 {
		return fmt.Errorf("count %q: a number up to 10000000", a.pos[1])
	}
	var v [5]uint64
	for i, o := range []struct {
		key      string
		def, max uint64
	}{{"size", 16, 65535}, {"proc", 0, 1 << 20}, {"level", 4, 255}, {"keyword", 0, 1<<64 - 1}, {"id", 1, 65535}} {
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

func cmdTraits(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	p := m.named(a.pos[0])
	blob := regentry.BuildTraits(p.name)
	if g, ok := a.opts["group"]; ok {
		blob = regentry.BuildTraits(p.name, regentry.GroupTrait(m.named(g).g))
	}
	if err := k.EventSetInformation(p.reg, emu.EventProviderSetTraits, blob); err != nil {
		return err
	}
	fmt.Fprintf(m.out, "set the traits of %s (%d bytes)\n", p.name, len(blob))
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
	h := m.handle(a.pos[0])
	if a.opts["via"] == "native" {
		ps := make([]pmc.ProfileSource, len(srcs))
		for i, s := range srcs {
			ps[i] = pmc.ProfileSource(s)
		}
		err = k.SetSystemInformation(pmc.SystemPerformanceTraceInformation, pmc.CounterInformation(uint64(h), ps...))
	} else {
		err = k.TraceSetInformation(h, pmc.TracePmcCounterListInfo, pmc.ULONGs(srcs...))
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(m.out, "set %d counters on %s\n", len(srcs), a.pos[0])
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
	h := m.handle(a.pos[0])
	if a.opts["via"] == "native" {
		err = k.SetSystemInformation(pmc.SystemPerformanceTraceInformation, pmc.EventInformation(uint64(h), hooks...))
	} else {
		ids, bad := pmc.HookEventIDs(hooks...)
		if bad != nil {
			return fmt.Errorf("%w (via=native takes any hook id)", bad)
		}
		err = k.TraceSetInformation(h, pmc.TracePmcEventListInfo, ids)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(m.out, "set %d PMC hook ids on %s\n", len(hooks), a.pos[0])
	return nil
}

func parseHook(w string) (uint32, error) {
	v, err := strconv.ParseUint(w, 0, 16)
	if err != nil {
		return 0, fmt.Errorf("hook id %q: a number such as 0x0524", w)
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
	size, err := a.num("size", 16)
	if err != nil {
		return err
	}
	proc, err := a.num("proc", 0)
	if err != nil {
		return err
	}
	if size > 65535 || proc > 1<<20 {
		return fmt.Errorf("size=%d proc=%d: at most 65535 and %d", size, proc, 1<<20)
	}
	var t emu.Tally
	if err := k.WriteSystemEvent(m.handle(a.pos[0]), uint16(hook), &emu.WriteOptions{Processor: int(proc), Tally: &t}, make([]byte, size)); err != nil {
		return err
	}
	id := m.handle(a.pos[0]).LoggerID()
	fmt.Fprintf(m.out, "wrote kernel event %#04x to %s: %d written, %d lost\n", hook, a.pos[0], t.Delivered[id], t.Lost[id])
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

// sessionNamed finds a running session by name or by logger id (as !wmitrace takes it).
func (m *Machine) sessionNamed(name string) (*emu.Session, error) {
	if _, err := m.kernel(); err != nil {
		return nil, err
	}
	id, err := strconv.ParseUint(name, 0, 16)
	for _, l := range m.k.Sessions() {
		if strings.EqualFold(l.Name(), name) || err == nil && uint64(l.ID()) == id {
			return l, nil
		}
	}
	return nil, winerr.New(winerr.ErrWMIInstanceNotFound, "no session named %q", name)
}
