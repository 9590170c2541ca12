// Package fuzz drives an emulated kernel with sequences of operations decoded from bytes,
// and checks it against a small sequential reference model and the invariant checker.
// The fuzz targets (FuzzInterplay, FuzzConcurrent) live in its tests; Run and
// RunConcurrent are here so other tests and tools can replay an input.
package fuzz

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/fuzz/oracle"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/internal/callstack"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// Kind is what an operation does.
type Kind uint8

// The operations. Each decodes its arguments from the bytes after its kind byte.
const (
	OpStart      Kind = iota // StartTrace
	OpStop                   // ControlTrace stop
	OpFlush                  // ControlTrace flush
	OpUpdate                 // ControlTrace update (MaximumBuffers)
	OpQuery                  // ControlTrace query
	OpRegister               // EventRegister
	OpUnregister             // EventUnregister
	OpEnable                 // EnableTraceEx2 enable
	OpDisable                // EnableTraceEx2 disable
	OpCapture                // EnableTraceEx2 capture state
	OpWrite                  // EventWriteEx
	OpTraits                 // EventSetInformation(EventProviderSetTraits)
	OpPMC                    // TraceSetInformation or NtSetSystemInformation: a PMC counter or event list
	OpSysWrite               // WriteSystemEvent: a kernel event with a SYSTEM_TRACE_HEADER
	OpHold                   // hold back a session's logger, release it, or interleave its next switch (test hooks: session.Logger.SetHeld, SetSwitchHook)
	numKinds
)

var kindNames = [numKinds]string{"start", "stop", "flush", "update", "query", "register", "unregister",
	"enable", "disable", "capture", "write", "traits", "pmc", "syswrite", "hold"}

func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return fmt.Sprintf("op(%d)", uint8(k))
}

// The choices operations pick from. Indexes into these tables are what the bytes encode,
// so every byte string decodes to valid operations.
var (
	// Versions: every emulated one.
	versions = winver.All()
	// Session names: ten, so that one provider can be enabled by eight sessions and a
	// ninth be refused; "S0" is "s0" in another case, which Windows treats as the same
	// name.
	sessionNames = []string{"s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "S0"}
	// sessionKeys are the names lower-cased, as the harness keys a session's handle by
	// (Windows compares session names case-insensitively).
	sessionKeys = func() []string {
		out := make([]string, len(sessionNames))
		for i, n := range sessionNames {
			out[i] = strings.ToLower(n)
		}
		return out
	}()
	// Providers, by name and GUID (the EventSource hash of the name, as the scenario
	// language derives it); the last two also serve as provider groups.
	providerNames = []string{"fuzz-a", "fuzz-b", "fuzz-c", "fuzz-group-1", "fuzz-group-2"}
	providers     = func() []guid.GUID {
		out := make([]guid.GUID, len(providerNames))
		for i, n := range providerNames {
			out[i] = guid.FromName(n)
		}
		return out
	}()
	// Buffer sizes: 4 KB (filled by a few events) most often; 0 is the default, 64 KB,
	// which the largest events need.
	bufferKB = []uint32{4, 8, 4, 0}
	// Mode choices, each run through the version's mode table (package logmode) by
	// StartTrace and the model alike: real time with the write-path flags; modes that
	// some versions refuse, adjust or ignore (no destination at all, SEQUENTIAL|CIRCULAR,
	// CIRCULAR without a size, NEWFILE, buffering with real time, compression, RELOG, paged
	// memory for a system logger); and the logger kinds and flags with behaviour of their
	// own: NONSTOPPABLE (refuses to stop), SYSTEM_LOGGER (8 slots), SECURE and
	// BUFFER_INTERFACE (refuse providers not granted), private loggers (to a file: they
	// cannot deliver in real time, and with no file have no destination).
	modes = []uint32{
		logmode.RealTime, logmode.RealTime | logmode.IndependentSession, logmode.RealTime | logmode.NoPerProcessorBufs,
		logmode.RealTime | logmode.IndependentSession | logmode.NoPerProcessorBufs,
		logmode.Sequential | logmode.Circular, 0, logmode.Buffering, logmode.Buffering | logmode.RealTime,
		logmode.Circular, logmode.Sequential, logmode.NewFile, logmode.Buffering | logmode.Compressed,
		logmode.RealTime | logmode.Relog, logmode.RealTime | logmode.SystemLogger | logmode.PagedMemory | logmode.KDFilter,
		logmode.RealTime | logmode.NonStoppable, logmode.Circular | logmode.NonStoppable,
		logmode.RealTime | logmode.SystemLogger, logmode.RealTime | logmode.Secure,
		logmode.RealTime | logmode.BufferInterface | logmode.IndependentSession,
		logmode.PrivateLogger, logmode.PrivateLogger | logmode.PrivateInProc | logmode.PagedMemory,
		logmode.Sequential | logmode.KBytesForSize, logmode.Circular | logmode.KBytesForSize, logmode.NewFile | logmode.KBytesForSize,
	}
	// PMC lists: an OpPMC takes the first Count entries. The hooks are CLASSIC_EVENT_IDs
	// ADVAPI can express; hook 0x0001 is also the id every OpWrite event has.
	pmcSources = []uint32{19, 2, 10, 11, 6, 8, 9, 12, 13}
	pmcHooks   = []uint32{0x0001, 0x0524, 0x0301, 0x0003, 0x0F2E}
	levels     = []uint8{0, 1, 2, 3, 4, 5, 255}
	// Event ids an OpWrite's event has, about a third of writes each: 1 (a hook id
	// OpPMC's event lists name, and every seed Encode writes), and two more that EVENT_ID
	// filters and the hook lists tell apart (0x0003 is also a hook).
	eventIDs = []uint16{1, 2, 3}
	keywords = []uint64{0, 1, 2, 3, 0x8000000000000000, ^uint64(0)}
	// Payload sizes: small, around a 4 KB buffer's room, past an 8 KB buffer, the largest
	// event and one byte more.
	payloads = []int{0, 1, 16, 100, 4096 - 0x48 - 0x50, 4096 - 0x48 - 0x50 + 1, 9000, 0xFFFF - 0x50, 0xFFFF - 0x50 + 1}
)

// filterChoice is one set of EVENT_FILTER_DESCRIPTORs an OpEnable passes: EVENT_ID
// filters that keep (keep) or drop (drop) ids, a PID filter whose ids are the run's
// own process (self) or another's (other), or both, and an EXECUTABLE_NAME filter whose
// names are the run's executable or another's. A nil list is no filter of that type.
type filterChoice struct {
	keep, drop []uint16
	pid        []pidChoice
	exe        []exeChoice
}

// exeChoice is an EXECUTABLE_NAME filter's name: the run's executable, as the kernel
// knows it or in capitals, or another.
type exeChoice uint8

const (
	exeSelf      exeChoice = iota // the file the run's process runs (executable)
	exeSelfUpper                  // the same, in capitals: names match without regard to case
	exeOther                      // a file no process of the run runs
)

// name is the file name e names: in the run, or (scenario) in the run written as a
// scenario, whose process runs the scenario's executable.
func (e exeChoice) name(scenario bool) string {
	n := executable
	if scenario {
		n = scenarioExecutable
	}
	switch e {
	case exeOther:
		return "other.exe"
	case exeSelfUpper:
		return strings.ToUpper(n)
	}
	return n
}

// self says whether e names the run's own executable, in whatever case.
func (e exeChoice) self() bool { return e != exeOther }

// pidChoice is a PID filter's entry: the run's process or another.
type pidChoice uint8

const (
	pidSelf  pidChoice = iota // the process the run's providers register in
	pidOther                  // a process no provider of the run is in
)

// options writes f as the scenario language's enable options: keep=, drop=, pid= and
// exe=, where the run's own process and executable are the scenario's if scenario is set.
func (f filterChoice) options(scenario bool) string {
	var b strings.Builder
	list := func(key string, n int, item func(i int) uint32) {
		for i := range n {
			if i == 0 {
				fmt.Fprintf(&b, " %s=%d", key, item(i))
			} else {
				fmt.Fprintf(&b, ",%d", item(i))
			}
		}
	}
	list("keep", len(f.keep), func(i int) uint32 { return uint32(f.keep[i]) })
	list("drop", len(f.drop), func(i int) uint32 { return uint32(f.drop[i]) })
	list("pid", len(f.pid), func(i int) uint32 { return f.pid[i].id(scenario) })
	for i, e := range f.exe {
		if i == 0 {
			b.WriteString(" exe=")
		} else {
			b.WriteByte(',')
		}
		b.WriteString(e.name(scenario))
	}
	return b.String()
}

// id is the process id p names: in the run, or (scenario) in the run written as a
// scenario, whose providers are in the scenario's process.
func (p pidChoice) id(scenario bool) uint32 {
	switch {
	case p == pidOther:
		return otherPID
	case scenario:
		return scenarioPID
	}
	return processID
}

// filterChoices are the filter sets an OpEnable picks from (through enableExtras): none,
// then EVENT_ID filters that keep or drop the ids writes use, PID filters that keep the run's events or
// none, and two filters at once, which an event must both pass. Filters come with 8.1
// (6.3); an enable before that which passes one is refused.
var filterChoices = []filterChoice{
	{},
	{keep: []uint16{1}},
	{drop: []uint16{1}},
	{keep: []uint16{2, 3}},
	{pid: []pidChoice{pidSelf}},
	{pid: []pidChoice{pidOther}},
	{drop: []uint16{2}, pid: []pidChoice{pidOther, pidSelf}},
	{keep: []uint16{1, 3}, pid: []pidChoice{pidOther}},
	// EXECUTABLE_NAME filters, after the others: enableExtras picks them from the entries
	// that picked nothing before they came, so that every other entry kept its meaning.
	{exe: []exeChoice{exeSelf}},
	{exe: []exeChoice{exeOther}},
	{drop: []uint16{2}, exe: []exeChoice{exeOther, exeSelfUpper}},
}

// firstExeChoice is the index of filterChoices' first set with an EXECUTABLE_NAME filter.
var firstExeChoice = slices.IndexFunc(filterChoices, func(f filterChoice) bool { return f.exe != nil })

// holdInterleave is the OpHold Count that arms a session's switch hook: the next write
// that switches one of its buffers (a later OpWrite; a non-BUFFERING session) writes the
// same event again in the middle of the switch, on the same processor, as a second thread
// would that found the buffer full at that moment (session.Logger.SetSwitchHook). Count 1
// holds the logger back, 0 releases it.
const holdInterleave = 2

// Start properties besides the mode, as bits of Op.StartProp.
const (
	startLogFile    = 1 << iota // a LogFileName
	startMaxSize                // MaximumFileSize 1 MB
	startAutoLogger             // the AutoLogger bit of WMI_LOGGER_INFORMATION.Flags
	startProps      = startLogFile | startMaxSize | startAutoLogger
)

// logFileNames are the log files of the sessions, by index into sessionNames: one per
// session name, since a running session's file is its own (another session naming it is
// refused), and "s0" and "S0", one session, share theirs. With NEWFILE the %d numbers
// the files; without it the name is taken as it is.
var logFileNames = func() []string {
	out := make([]string, len(sessionNames))
	for i, n := range sessionNames {
		out[i] = "fuzz-" + strings.ToLower(n) + "-%d.etl"
	}
	return out
}()

// properties returns the start properties an OpStart asks for.
func (o Op) properties(sink session.Sink) *emu.Properties {
	p := &emu.Properties{BufferSize: o.BufferKB, MinimumBuffers: o.MinBufs, MaximumBuffers: o.MaxBufs, LogFileMode: o.Mode,
		AutoLogger: o.StartProp&startAutoLogger != 0, Sink: sink}
	if o.StartProp&startLogFile != 0 {
		p.LogFileName = logFileNames[o.Session%len(logFileNames)]
	}
	if o.StartProp&startMaxSize != 0 {
		// 1 MB, or with EVENT_TRACE_USE_KBYTES_FOR_SIZE 16 KB: a header buffer and three
		// 4 KB buffers, a limit a few writes reach.
		p.MaximumFileSize = 1
		if o.Mode&logmode.KBytesForSize != 0 {
			p.MaximumFileSize = 16
		}
	}
	return p
}

// logFile reports whether a start with effective mode and buffers of bufKB KB writes a
// log file, how many buffers the file holds (-1: no limit), and whether the file accepts
// the settings: a circular file, and each file of a NEWFILE series, needs room for a
// trace buffer after its header buffer.
func (o Op) logFile(mode, bufKB uint32) (file bool, capacity int, ok bool) {
	p := o.properties(nil)
	if p.LogFileName == "" || mode&logmode.Buffering != 0 {
		return false, -1, true
	}
	if bufKB == 0 {
		bufKB = session.DefaultBufferSizeKB
	}
	capacity = -1
	if p.MaximumFileSize > 0 {
		unit := 1 << 20
		if mode&logmode.KBytesForSize != 0 {
			unit = 1 << 10
		}
		capacity = int(p.MaximumFileSize) * unit / int(bufKB*1024)
	}
	return true, capacity, mode&(logmode.Circular|logmode.NewFile) == 0 || capacity >= 2
}

// decide is the published rules' answer to an OpStart of session name at version v,
// from package oracle (not from package logmode, whose table the emulator uses).
func (o Op) decide(v winver.Version, name string) oracle.Answer {
	p := o.properties(nil)
	q := oracle.Request{Version: v, Mode: p.LogFileMode, Name: name,
		LogFileName: p.LogFileName != "", MaximumFileSize: p.MaximumFileSize != 0, AutoLogger: p.AutoLogger}
	if a, ok := answers.Load(q); ok {
		return a.(oracle.Answer)
	}
	a := oracle.Decide(q)
	answers.Store(q, a)
	return a
}

// answers memoises decide (oracle.Request to oracle.Answer): the oracle's answer depends
// on the request alone, and walking its table for every start was a twentieth of an
// input's time. Every request comes from the choice tables, so it holds at most
// versions × modes × start properties × (session names and the empty name) answers.
// Written by decide from any goroutine (Load, then Store: two may store the same answer).
var answers sync.Map

// Op is one decoded operation. Which fields matter depends on Kind.
type Op struct {
	Kind     Kind
	Session  int // index into sessionNames
	Provider int // index into providers
	Reg      int // which registration (index into the run's registrations, wrapped)
	Level    uint8
	Any, All uint64
	Group    bool   // enable/disable a provider group; traits: join Provider as a group
	Filter   int    // enable: index into filterChoices
	Props    uint32 // enable: EVENT_ENABLE_PROPERTY_* bits from itemProps
	ID       uint16 // write: the event's id (EVENT_DESCRIPTOR.Id), from eventIDs
	// TL: register a TraceLogging provider of package etw (go-winio's pkg/etw shape) for
	// Provider, whose writes are its WriteEvent: the provider's own filter, then the
	// kernel's EventWriteDescriptors with its traits, the event's schema and its fields.
	TL        bool
	BufferKB  uint32
	MinBufs   uint32
	MaxBufs   uint32
	Mode      uint32
	StartProp uint8 // start: startLogFile, startMaxSize, startAutoLogger bits
	Payload   int
	Processor int
	Count     int   // pmc: entries of the list; syswrite: index into pmcHooks; hold: 1 hold, 0 release
	PMCFlags  uint8 // pmc: pmcEvents, pmcNative
	API       API   // write: which call writes the event
}

// API is the call an OpWrite writes its event with.
type API uint8

// The write calls.
const (
	APIEx       API = iota // EventWriteEx, on the processor the operation names, with a thread id
	APIPlain               // EventWrite, on the processor the goroutine runs on (pinned; see pinner)
	APITransfer            // EventWriteTransfer, with an activity id and a related activity id
	numAPIs
)

var apiNames = [numAPIs]string{"ex", "plain", "transfer"}

// hooks is the hook-id list an OpPMC of the event list sets: Count ids from pmcHooks,
// wrapping round (so a list can be longer than the four Windows accepts).
func (o Op) hooks() []uint32 {
	h := make([]uint32, o.Count)
	for i := range h {
		h[i] = pmcHooks[i%len(pmcHooks)]
	}
	return h
}

// OpPMC flags.
const (
	pmcEvents = 1 << iota // the event (hook id) list rather than the counter list
	pmcNative             // NtSetSystemInformation rather than TraceSetInformation
)

// String writes the operation as a scenario line (see Program.Scenario), naming the
// registration it uses by its raw index, "r<Reg>", which the run wraps round the
// registrations that exist, and the run's own process id as it is in the run.
func (o Op) String() string {
	reg := fmt.Sprintf("r%d", o.Reg)
	if o.Kind == OpRegister {
		reg = "(next)"
	}
	return o.line(reg, false)
}

// line writes the operation in the scenario language, with reg as the name of the
// registration it registers or uses; for a scenario (Program.Scenario), with the run's
// own process as the scenario's.
func (o Op) line(reg string, scenario bool) string {
	name := sessionNames[o.Session]
	switch o.Kind {
	case OpStart:
		line := fmt.Sprintf("start %s buffer=%d min=%d max=%d mode=%#x", name, o.BufferKB, o.MinBufs, o.MaxBufs, o.Mode)
		if o.StartProp&startLogFile != 0 {
			line += " file=" + logFileNames[o.Session%len(logFileNames)]
		}
		if p := o.properties(nil); p.MaximumFileSize != 0 {
			line += fmt.Sprintf(" maxfile=%d", p.MaximumFileSize)
		}
		if o.StartProp&startAutoLogger != 0 {
			line += " autologger=1"
		}
		return line
	case OpStop, OpFlush, OpQuery:
		return fmt.Sprintf("%v %s", o.Kind, name)
	case OpUpdate:
		return fmt.Sprintf("update %s max=%d", name, o.MaxBufs)
	case OpRegister:
		if o.TL {
			// Not in the scenario language: a TraceLogging provider of package etw.
			return fmt.Sprintf("# register %s through package etw (TraceLogging), guid=%v", providerNames[o.Provider], providers[o.Provider])
		}
		return fmt.Sprintf("register %s guid=%v", reg, providers[o.Provider])
	case OpUnregister:
		return "unregister " + reg
	case OpEnable, OpDisable, OpCapture:
		line := fmt.Sprintf("%v %s %s", o.Kind, name, providerNames[o.Provider])
		if o.Kind == OpEnable {
			line += fmt.Sprintf(" level=%d any=%#x all=%#x", o.Level, o.Any, o.All)
			line += filterChoices[o.Filter].options(scenario) + propsOption(o.Props)
		}
		if o.Group && o.Kind != OpCapture {
			line += " group=1"
		}
		return line
	case OpWrite:
		// The scenario language writes with EventWriteEx: an EventWrite or
		// EventWriteTransfer is written as that, on the processor the operation names.
		return fmt.Sprintf("write %s 1 size=%d proc=%d level=%d keyword=%#x id=%d", reg, o.Payload, o.Processor, o.Level, o.Any, o.ID)
	case OpHold:
		// Not in the scenario language: replayed there, the logger is never held and no
		// write is interleaved.
		switch o.Count {
		case 1:
			return "# hold " + name
		case holdInterleave:
			return "# interleave " + name
		}
		return "# release " + name
	case OpTraits:
		if o.Group {
			return fmt.Sprintf("traits %s group=%s", reg, providerNames[o.Provider])
		}
		return "traits " + reg
	case OpPMC:
		var items []string
		if o.PMCFlags&pmcEvents != 0 {
			for _, h := range o.hooks() {
				items = append(items, fmt.Sprintf("%#04x", h))
			}
		} else {
			for _, s := range pmcSources[:o.Count] {
				items = append(items, fmt.Sprint(s))
			}
		}
		list := strings.Join(items, ",")
		if list == "" {
			list = "none"
		}
		line := fmt.Sprintf("counters %s %s", name, list)
		if o.PMCFlags&pmcEvents != 0 {
			line = fmt.Sprintf("hooks %s %s", name, list)
		}
		if o.PMCFlags&pmcNative != 0 {
			line += " via=native"
		}
		return line
	case OpSysWrite:
		return fmt.Sprintf("syswrite %s %#04x size=%d proc=%d", name, pmcHooks[o.Count], o.Payload, o.Processor)
	}
	return o.Kind.String()
}

// enableCode is the EVENT_CONTROL_CODE of an enable, disable or capture operation.
func (o Op) enableCode() regentry.ControlCode {
	switch o.Kind {
	case OpDisable:
		return regentry.ControlDisable
	case OpCapture:
		return regentry.ControlCaptureState
	}
	return regentry.ControlEnable
}

// enableParams is what an enable, disable or capture operation passes as
// ENABLE_TRACE_PARAMETERS: the provider-group property for a group, and an enable's
// filters (filterDescs) and item properties; nil for none of them.
func (o Op) enableParams() *emu.EnableParameters {
	var descs []emu.FilterDescriptor
	var props uint32
	if o.Kind == OpEnable {
		descs, props = filterDescs[o.Filter], o.Props
	}
	if !o.Group && descs == nil && props == 0 {
		return nil
	}
	p := &emu.EnableParameters{Filters: descs, EnableProperty: props}
	if o.Group {
		p.EnableProperty |= guidtable.PropertyProviderGroup
	}
	return p
}

// itemProps are the EVENT_ENABLE_PROPERTY_* bits an OpEnable may pass that add an
// extended item to each event the enablement passes, with the item's
// EVENT_HEADER_EXT_TYPE, its data's size and the name the scenario language's props=
// gives the bit. STACK_TRACE comes last: its item holds the writer's innermost return
// addresses, 32 at most (emu.EnableParameters), after an 8-byte MatchId; the harness
// writes from deeper than that (stackDepth), so that the size, which decides when
// buffers fill, is always the same.
var itemProps = []struct {
	prop uint32
	typ  uint16
	size int
	name string
}{
	{guidtable.PropertySID, 0x0002, 12, "sid"}, // the emulated process's SID, S-1-5-18
	{guidtable.PropertyTSID, 0x0003, 4, "tsid"},
	{guidtable.PropertyEventKey, 0x000A, 8, "key"},
	{guidtable.PropertyProcessStartKey, 0x000D, 8, "start"},
	{guidtable.PropertyStackTrace, 0x0006, 8 + 8*stackFrames, "stack"},
}

// stackFrames is how many return addresses a STACK_TRACE64 item holds when the writer's
// stack is deep enough (emu.EnableParameters), and stackDepth how many frames deep the
// harness writes, so that it always is.
const (
	stackFrames = callstack.Frames
	stackDepth  = stackFrames
)

// plainProps are the itemProps bits whose items do not depend on the writer: the sets
// enableExtras took before the stack came, which keep their places there.
const plainProps = guidtable.PropertySID | guidtable.PropertyTSID | guidtable.PropertyEventKey | guidtable.PropertyProcessStartKey

// extras is what an enable passes besides its level and keywords: one of filterChoices
// and itemProps bits.
type extras struct {
	filter int
	props  uint32
}

// enableExtras are the extras an OpEnable picks from, by bits 1 to 7 of its group byte:
// nothing at 0 (the byte of every seed Encode writes), then each EVENT_ID and PID filter
// set with no properties, one, two and all four plain ones, twice over; every set of
// plain properties alone; each EXECUTABLE_NAME set with the same four; the stack alone,
// with other items and with filters; and nothing for the rest. So nearly a third of the
// enables pass nothing, and leave EventWrite's cached route in use and enable before
// 8.1, where filters are refused; more than half pass filters, often enough that a
// fuzzing run explores what they drop. Each section came after the ones before it, so
// that an entry keeps its meaning, and a committed input its program.
var enableExtras = func() []extras {
	out := make([]extras, 1, 128)
	some := []uint32{0, itemProps[0].prop, itemProps[1].prop | itemProps[2].prop, plainProps}
	for range 2 {
		for f := 1; f < firstExeChoice; f++ {
			for _, p := range some {
				out = append(out, extras{f, p})
			}
		}
	}
	if itemProps[0].prop|itemProps[1].prop|itemProps[2].prop|itemProps[3].prop != plainProps {
		panic("enableExtras: the plain properties must be itemProps' first four, in the order the committed inputs pick them")
	}
	for set := 1; set < 1<<4; set++ { // the four plain properties
		var p uint32
		for i, it := range itemProps {
			if set>>i&1 != 0 {
				p |= it.prop
			}
		}
		out = append(out, extras{0, p})
	}
	for f := firstExeChoice; f < len(filterChoices); f++ {
		for _, p := range some {
			out = append(out, extras{f, p})
		}
	}
	stack := uint32(guidtable.PropertyStackTrace)
	out = append(out, extras{0, stack}, extras{0, stack | guidtable.PropertySID}, extras{0, stack | plainProps},
		extras{1, stack | guidtable.PropertySID}, extras{4, stack | guidtable.PropertyEventKey}, extras{firstExeChoice, stack})
	if len(out) > 128 {
		panic("enableExtras: more choices than seven bits pick")
	}
	return out[:128] // the rest: nothing
}()

// itemPropBits are all the itemProps bits.
var itemPropBits = func() (all uint32) {
	for _, it := range itemProps {
		all |= it.prop
	}
	return all
}()

// propsOption writes props as the scenario language's props= option ("" for none).
func propsOption(props uint32) string {
	var names []string
	for _, it := range itemProps {
		if props&it.prop != 0 {
			names = append(names, it.name)
		}
	}
	if names == nil {
		return ""
	}
	return " props=" + strings.Join(names, ",")
}

// The process ids a PID filter names: the run's own (processID) or another's. In a run
// written as a scenario the run's own is the scenario's process (scenario.ProcessID,
// whose value scenarioPID repeats: package fuzz does not import package scenario), as
// its executable is the scenario's (scenario.Executable, repeated by scenarioExecutable).
const (
	otherPID           = 7
	scenarioPID        = 1000
	scenarioExecutable = "scenario.exe"
)

// filterDescs are filterChoices as the EVENT_FILTER_DESCRIPTORs EnableTraceEx2 takes,
// built once (guidtable's encoders; the model reads filterChoices, not these).
var filterDescs = func() [][]emu.FilterDescriptor {
	out := make([][]emu.FilterDescriptor, len(filterChoices))
	for i, f := range filterChoices {
		if f.keep != nil {
			out[i] = append(out[i], guidtable.EventIDFilter(true, f.keep...))
		}
		if f.drop != nil {
			out[i] = append(out[i], guidtable.EventIDFilter(false, f.drop...))
		}
		if f.pid != nil {
			var pids []uint32
			for _, p := range f.pid {
				pids = append(pids, p.id(false))
			}
			out[i] = append(out[i], guidtable.PIDFilter(pids...))
		}
		if f.exe != nil {
			var names []string
			for _, e := range f.exe {
				names = append(names, e.name(false))
			}
			out[i] = append(out[i], guidtable.ExecutableNameFilter(names...))
		}
	}
	return out
}()

// traitsBlob is the provider traits a traits operation sets: a name, and the group
// trait when it joins a group.
func (o Op) traitsBlob() []byte {
	if !o.Group {
		return regentry.BuildTraits("fuzz")
	}
	return regentry.BuildTraits("fuzz", regentry.GroupTrait(providers[o.Provider]))
}

// Program is a decoded input: the kernel to build and the operations to run on it.
type Program struct {
	Version    winver.Version
	Processors int
	Ops        []Op
}

func (p Program) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Windows %s, %d processors\n", p.Version, p.Processors)
	for i, o := range p.Ops {
		fmt.Fprintf(&b, "%3d %v\n", i, o)
	}
	return b.String()
}

// kindTable weights the kinds a kind byte picks: writes, enables and registrations come
// up more often than stops, so random bytes reach the write path with sessions enabled.
// Kind byte c picks kindTable[(c-1)%len(kindTable)]; a zero kind byte is no operation
// (see Decode).
var kindTable = []Kind{OpStart, OpStart, OpStop, OpFlush, OpUpdate, OpQuery, OpRegister, OpRegister,
	OpUnregister, OpEnable, OpEnable, OpEnable, OpDisable, OpCapture, OpWrite, OpWrite, OpWrite, OpWrite,
	OpWrite, OpWrite, OpTraits, OpPMC, OpPMC, OpSysWrite, OpSysWrite, OpHold, OpHold}

// kindIndex is the first index of each kind in kindTable, for Encode.
func kindIndex(k Kind) int {
	for i, x := range kindTable {
		if x == k {
			return i
		}
	}
	return -1
}

// MaxOps bounds the operations one input runs, so each fuzz execution stays short.
const MaxOps = 128

// reader hands out bytes, then zeros once the input runs out.
type reader struct {
	b []byte
}

func (r *reader) byte() byte {
	if len(r.b) == 0 {
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *reader) pick(n int) int { return int(r.byte()) % n }

// Decode turns fuzzer bytes into a program. Every input decodes; the first two bytes
// choose the version and the processors, then each operation takes a kind byte and its
// arguments. A zero kind byte is skipped: zero bytes are common in the inputs the
// fuzzer makes (an "interesting" value of its mutator, and argument bytes that insertions
// and removals shift into kind bytes), and when zero picked an operation each run of them
// decoded to the same start repeated (a refused duplicate, at the cost of a whole start
// and check), which was a third of the operations of the inputs a fuzzing run tried and
// two fifths of their time.
func Decode(data []byte) Program {
	return decode(data, make([]Op, 0, min(MaxOps, len(data)/2+1))) // most operations take two bytes or more
}

// decode is Decode, appending the operations to ops.
func decode(data []byte, ops []Op) Program {
	r := &reader{b: data}
	p := Program{Version: versions[r.pick(len(versions))], Processors: 1 + r.pick(4)}
	p.Ops = ops
	for len(r.b) > 0 && len(p.Ops) < MaxOps {
		c := r.byte()
		if c == 0 {
			continue
		}
		o := Op{Kind: kindTable[(int(c)-1)%len(kindTable)]}
		switch o.Kind {
		case OpStart:
			o.Session = r.pick(len(sessionNames))
			o.BufferKB = bufferKB[r.pick(len(bufferKB))]
			o.MinBufs = uint32(r.pick(12))
			o.MaxBufs = uint32(r.pick(40))
			o.Mode = modes[r.pick(len(modes))]
			o.StartProp = r.byte() & startProps
		case OpStop, OpFlush, OpQuery:
			o.Session = r.pick(len(sessionNames))
		case OpUpdate:
			o.Session = r.pick(len(sessionNames))
			o.MaxBufs = uint32(r.pick(64))
		case OpRegister:
			c := r.pick(2 * len(providers))
			o.Provider, o.TL = c%len(providers), c >= len(providers)
		case OpUnregister:
			o.Reg = int(r.byte())
		case OpEnable:
			o.Session = r.pick(len(sessionNames))
			o.Provider = r.pick(len(providers))
			// Bit 0 the group, bits 1 to 7 the filters and properties (enableExtras;
			// the 0 or 1 of every seed Encode writes is neither; one seed the fuzzer found,
			// 4c09f5499c84c6dc, has other bytes there, which now pick some).
			c := r.byte()
			x := enableExtras[c>>1]
			o.Group, o.Filter, o.Props = c&1 != 0, x.filter, x.props
			o.Level = levels[r.pick(len(levels))]
			o.Any = keywords[r.pick(len(keywords))]
			o.All = keywords[r.pick(len(keywords))]
		case OpDisable:
			o.Session = r.pick(len(sessionNames))
			o.Provider = r.pick(len(providers))
			o.Group = r.byte()&1 != 0
		case OpCapture:
			o.Session = r.pick(len(sessionNames))
			o.Provider = r.pick(len(providers))
		case OpWrite:
			o.Reg = int(r.byte())
			o.Level = levels[r.pick(len(levels))]
			o.Any = keywords[r.pick(len(keywords))]
			o.Payload = payloads[r.pick(len(payloads))]
			o.Processor = r.pick(8)
			// The API, and the event's id from what is left: the byte of a seed Encode writes,
			// below numAPIs, writes id 1.
			c := int(r.byte())
			o.API, o.ID = API(c%int(numAPIs)), eventIDs[c/int(numAPIs)%len(eventIDs)]
		case OpTraits:
			o.Reg = int(r.byte())
			c := r.pick(len(providers) + 1)
			o.Group, o.Provider = c < len(providers), c%len(providers)
		case OpPMC:
			o.Session = r.pick(len(sessionNames))
			o.PMCFlags = r.byte() & (pmcEvents | pmcNative)
			o.Count = r.pick(len(pmcSources) + 1)
		case OpSysWrite:
			o.Session = r.pick(len(sessionNames))
			o.Count = r.pick(len(pmcHooks))
			o.Payload = payloads[r.pick(len(payloads))]
			o.Processor = r.pick(8)
		case OpHold:
			o.Session = r.pick(len(sessionNames))
			o.Count = r.pick(3)
		}
		p.Ops = append(p.Ops, o)
	}
	return p
}

// opsPool holds operation lists for the fuzz targets' decoding (Run, RunConcurrent):
// each takes one, and gives it back after a run that passed, which holds no operation
// afterwards (a failed run's error and stuck workers may). A list of MaxOps operations is
// some 15 KB; allocating and clearing one an execution was a twentieth of a fuzz run.
var opsPool = sync.Pool{New: func() any { ops := make([]Op, 0, MaxOps); return &ops }}

// decodePooled decodes data into a list from opsPool; release gives the list back.
func decodePooled(data []byte) (p Program, release func()) {
	ops := opsPool.Get().(*[]Op)
	p = decode(data, (*ops)[:0])
	return p, func() {
		*ops = p.Ops[:0]
		opsPool.Put(ops)
	}
}

// Encode is the inverse of Decode for programs built in code (seed corpora, regression
// cases): Decode(Encode(p)) == p for every p whose fields hold values from the choice
// tables. A value outside its table is an error.
func Encode(p Program) ([]byte, error) {
	var bad error
	cur := -1 // the operation being encoded, for the error
	idx := func(n int, ok bool) byte {
		switch {
		case ok || bad != nil:
		case cur < 0:
			bad = fmt.Errorf("fuzz.Encode: version %v or %d processors is not a choice", p.Version, p.Processors)
		default:
			bad = fmt.Errorf("fuzz.Encode: operation %d (%v) has a value not in its choice table", cur, p.Ops[cur])
		}
		return byte(n)
	}
	find := func(n int, eq func(i int) bool) byte {
		for i := 0; i < n; i++ {
			if eq(i) {
				return byte(i)
			}
		}
		return idx(0, false)
	}
	out := []byte{
		find(len(versions), func(i int) bool { return versions[i] == p.Version }),
		idx(p.Processors-1, p.Processors >= 1 && p.Processors <= 4),
	}
	for i, o := range p.Ops {
		cur = i
		out = append(out, idx(kindIndex(o.Kind)+1, kindIndex(o.Kind) >= 0))
		sess := idx(o.Session, o.Session >= 0 && o.Session < len(sessionNames))
		prov := idx(o.Provider, o.Provider >= 0 && o.Provider < len(providers))
		level := find(len(levels), func(i int) bool { return levels[i] == o.Level })
		group := byte(0)
		if o.Group {
			group = 1
		}
		switch o.Kind {
		case OpStart:
			out = append(out, sess, find(len(bufferKB), func(i int) bool { return bufferKB[i] == o.BufferKB }),
				idx(int(o.MinBufs), o.MinBufs < 12), idx(int(o.MaxBufs), o.MaxBufs < 40),
				find(len(modes), func(i int) bool { return modes[i] == o.Mode }), o.StartProp)
		case OpStop, OpFlush, OpQuery:
			out = append(out, sess)
		case OpUpdate:
			out = append(out, sess, idx(int(o.MaxBufs), o.MaxBufs < 64))
		case OpRegister:
			if o.TL {
				prov += byte(len(providers))
			}
			out = append(out, prov)
		case OpUnregister:
			out = append(out, idx(o.Reg, o.Reg >= 0 && o.Reg < 256))
		case OpEnable:
			group |= find(len(enableExtras), func(i int) bool { return enableExtras[i] == extras{o.Filter, o.Props} }) << 1
			out = append(out, sess, prov, group, level,
				find(len(keywords), func(i int) bool { return keywords[i] == o.Any }),
				find(len(keywords), func(i int) bool { return keywords[i] == o.All }))
		case OpDisable:
			out = append(out, sess, prov, group)
		case OpCapture:
			out = append(out, sess, prov)
		case OpWrite:
			out = append(out, idx(o.Reg, o.Reg >= 0 && o.Reg < 256), level,
				find(len(keywords), func(i int) bool { return keywords[i] == o.Any }),
				find(len(payloads), func(i int) bool { return payloads[i] == o.Payload }),
				idx(o.Processor, o.Processor >= 0 && o.Processor < 8),
				idx(int(o.API)+int(numAPIs)*int(find(len(eventIDs), func(i int) bool { return eventIDs[i] == o.ID })), o.API < numAPIs))
		case OpTraits:
			c := len(providers)
			if o.Group {
				c = o.Provider
			}
			out = append(out, idx(o.Reg, o.Reg >= 0 && o.Reg < 256), byte(c))
		case OpPMC:
			out = append(out, sess, idx(int(o.PMCFlags), o.PMCFlags <= pmcEvents|pmcNative), idx(o.Count, o.Count >= 0 && o.Count <= len(pmcSources)))
		case OpSysWrite:
			out = append(out, sess, idx(o.Count, o.Count >= 0 && o.Count < len(pmcHooks)),
				find(len(payloads), func(i int) bool { return payloads[i] == o.Payload }),
				idx(o.Processor, o.Processor >= 0 && o.Processor < 8))
		case OpHold:
			out = append(out, sess, idx(o.Count, o.Count >= 0 && o.Count <= holdInterleave))
		}
	}
	return out, bad
}

// setPMC performs an OpPMC on the session with handle th: the counter or the event list,
// by TraceSetInformation or by NtSetSystemInformation.
func (o Op) setPMC(k *emu.Kernel, th emu.TraceHandle) error {
	switch o.PMCFlags {
	case 0:
		return k.TraceSetInformation(th, pmc.TracePmcCounterListInfo, pmc.ULONGs(pmcSources[:o.Count]...))
	case pmcEvents:
		ids, err := pmc.HookEventIDs(o.hooks()...)
		if err != nil { // every group of pmcHooks has a class
			panic(err)
		}
		return k.TraceSetInformation(th, pmc.TracePmcEventListInfo, ids)
	case pmcNative:
		srcs := make([]pmc.ProfileSource, o.Count)
		for i, v := range pmcSources[:o.Count] {
			srcs[i] = pmc.ProfileSource(v)
		}
		return k.SetSystemInformation(pmc.SystemPerformanceTraceInformation, pmc.CounterInformation(uint64(th), srcs...))
	}
	return k.SetSystemInformation(pmc.SystemPerformanceTraceInformation, pmc.EventInformation(uint64(th), o.hooks()...))
}

// Scenario writes p in the scenario language of package scenario (etwemu run), given the
// emulator's answer to each operation (as Scenario and a failing run collect them): an
// operation that failed is written "expect CODE ...", so the file replays the run and
// stops where the emulator first answers otherwise. Registrations are named r0, r1, ...
// in the order they succeeded; providers by their names, whose EventSource hash is
// their GUID. What the language cannot say is a comment, with the emulator's answer: a
// logger held back, a write inside a buffer switch, a registration through package etw
// and the writes, unregistrations and traits through it; a closing comment says so.
func (p Program) Scenario(results []error) string {
	var b strings.Builder
	n := min(len(p.Ops), len(results))
	if n < len(p.Ops) {
		fmt.Fprintf(&b, "# the first %d of a fuzz program's %d operations, as a scenario\n", n, len(p.Ops))
	} else {
		fmt.Fprintf(&b, "# a fuzz program (%d operations) as a scenario\n", n)
	}
	fmt.Fprintf(&b, "kernel version=%s processors=%d pmccounters=%d\n", p.Version, p.Processors, pmcCounters)
	var tl []bool     // the registrations that succeeded, r0, r1, ...: through package etw?
	comments := false // some operations are comments
	for i, o := range p.Ops[:n] {
		reg, viaTL := "none", false // no registration yet: the kernel gets a NULL handle
		switch {
		case o.Kind == OpRegister:
			reg = fmt.Sprintf("r%d", len(tl))
			if results[i] == nil {
				tl = append(tl, o.TL)
			}
		case len(tl) > 0:
			j := o.Reg % len(tl)
			reg, viaTL = fmt.Sprintf("r%d", j), tl[j] && (o.Kind == OpWrite || o.Kind == OpUnregister || o.Kind == OpTraits)
		}
		if viaTL && o.Kind == OpWrite {
			o.ID = 0 // package etw's events have id 0 (writeTL)
		}
		line := o.line(reg, true)
		if viaTL { // a TraceLogging registration, itself a comment: not in the scenario language
			line = "# " + line + " (" + reg + " is package etw's provider)"
		}
		if strings.HasPrefix(line, "#") {
			comments = true
			if err := results[i]; err != nil {
				line += " -- the emulator answered " + scenarioCode(err)
			}
		} else if err := results[i]; err != nil {
			line = "expect " + scenarioCode(err) + " " + line
		}
		b.WriteString(line + "\n")
	}
	if comments {
		b.WriteString("# The lines above that are comments are operations the scenario language cannot say\n" +
			"# (a logger held back, a write inside a buffer switch, package etw's providers):\n" +
			"# replayed without them, what depended on them is not reproduced.\n")
	}
	return b.String()
}

// scenarioCode is the name an expect line gives err's Windows code.
func scenarioCode(err error) string {
	var e *winerr.Errno
	if errors.As(err, &e) {
		return e.Name()
	}
	return "NO_WINDOWS_CODE"
}
