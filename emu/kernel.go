package emu

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/internal/hw"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// Config chooses what the emulated kernel looks like. The zero value means Windows 10
// 2004 on as many processors as the machine has, with real clocks.
type Config struct {
	Version    winver.Version // default winver.Default (2004)
	Processors int            // emulated processors; default runtime.NumCPU()
	// Clock, when set, is the time source of every session (a manual clock makes runs
	// deterministic); each session still reports the clock type it asked for.
	Clock *clock.Manual
	// ClockFrequency is the frequency reported for a manual clock; default 10 MHz.
	ClockFrequency int64
	// ProcessID is the process that EventRegister registers for; default os.Getpid().
	ProcessID uint32
	// Executable is the file name of that process's executable, which
	// EVENT_FILTER_TYPE_EXECUTABLE_NAME filters match without regard to case; default the
	// running program's own. Of a path, the last element is taken (after '/', '\\' or a
	// drive's ':'); one that ends in a separator, or holds a NUL, is
	// ERROR_INVALID_PARAMETER.
	Executable string
	// Synchronous starts every session without a logger goroutine: full buffers are
	// written by the writer that filled them, flush and stop by the caller, and no timer
	// runs (see session.Config.Synchronous). With a manual clock and explicit processors,
	// a sequence of calls then always has the same outcome, down to the bytes.
	Synchronous bool
	// FileSystem is where sessions write log files; nil means the operating system's.
	// An etl.MemFS keeps them in memory (fuzzing); a faulty one injects write errors.
	FileSystem etl.FileSystem
	// RealTimeBacklog bounds the buffers a REAL_TIME session keeps while no consumer is
	// attached (session.DefaultRealTimeBacklog when 0).
	RealTimeBacklog int
	// PMCSource supplies processor performance counters; nil means the source pmc.Detect
	// picks for this machine, chosen when a logger first sets a counter list.
	// pmc.Synthetic{} makes counter values deterministic.
	PMCSource pmc.Source
	// PMCCounters is the counters each emulated processor has (pmc.DefaultPlatformCounters
	// when 0); loggers share them.
	PMCCounters int
}

// Kernel is the emulated kernel side of ETW for one Windows version.
type Kernel struct {
	version     winver.Version // immutable
	nproc       int            // immutable
	pid         uint32         // immutable
	exe         string         // the emulated process's executable file name (EXECUTABLE_NAME filters); immutable
	manual      *clock.Manual  // immutable
	tsc         bool           // sessions' clocks may read the TSC (no manual clock); immutable
	freq        int64          // immutable
	sync        bool           // Config.Synchronous; immutable
	fs          etl.FileSystem // Config.FileSystem; immutable
	files       *logFiles      // what sessions open log files through; immutable pointer
	rtBacklog   int            // Config.RealTimeBacklog; immutable
	pmcSource   pmc.Source     // Config.PMCSource; immutable
	pmcCounters int            // Config.PMCCounters; immutable

	// loggers is the logger table. Atomic pointers; written under mu, read by writers.
	// Ids from session.MaxLoggers on are private loggers'.
	loggers [session.LoggerIDs]atomic.Pointer[session.Logger]

	// eventKeys numbers the events that a session asked an EVENT_KEY item for (itemValues).
	// Atomic; added to by writers.
	eventKeys atomic.Uint64

	// routing is the current routing epoch: a new one after each change to where
	// registrations' events go (an enable slot filled, changed or emptied, a registration
	// closed or moved between provider groups), so that a route a writer cached
	// (Registration.route) is used only while nothing changed since it was taken, and
	// only by this kernel. Atomic; replaced by rerouteLocked, under mu, after the change
	// and before the control call returns.
	routing atomic.Pointer[epoch]

	mu        sync.Mutex
	names     map[string]uint16                 // lower-cased session name -> id; protected by mu
	stopping  map[uint16]bool                   // ids whose Stop is in progress; protected by mu
	instances uint32                            // last logger instance handed out; protected by mu
	regIndex  uint16                            // last registration index; protected by mu
	regUsed   *[1 << 16 / 64]uint64             // the indexes open registrations hold, once regIndex wrapped; protected by mu
	regs      map[*regentry.Entry]*Registration // open registrations; protected by mu
	closed    bool                              // protected by mu
	// sysLoggers are the system-logger slots (EtwpSystemLogger[8]); protected by mu.
	sysLoggers [MaxSystemLoggers]*session.Logger
	// permits are the SECURE_MODE permission sets by session GUID; the maps are
	// immutable once stored. Protected by mu.
	permits map[guid.GUID]session.Permits
	// hal is the PMC counter pool, created on first use; protected by mu.
	hal *pmc.HAL

	guids  *guidtable.Table
	traits regentry.TraitsTable
	notify notifier
}

// maxLoggers is the logger table size by version: 32 in 5.0, 64 (MAXLOGGERS) from 5.1.
var maxLoggers = winver.Steps[int]{{Since: winver.V5_0, Value: 32}, {Since: winver.V5_1, Value: session.MaxLoggers}}

// New creates an emulated kernel.
func New(cfg Config) (*Kernel, error) {
	if cfg.Version == 0 {
		cfg.Version = winver.Default
	}
	if !cfg.Version.Valid() {
		return nil, winerr.New(winerr.ErrInvalidParameter, "Windows version %d is not one of the emulated versions", uint8(cfg.Version))
	}
	if cfg.Processors == 0 {
		cfg.Processors = runtime.NumCPU()
	}
	if cfg.Processors < 1 || cfg.Processors > 2048 {
		return nil, winerr.New(winerr.ErrInvalidParameter, "%d processors: the emulator supports 1 to 2048", cfg.Processors)
	}
	if cfg.ProcessID == 0 {
		cfg.ProcessID = uint32(os.Getpid())
	}
	if cfg.PMCCounters < 0 || cfg.PMCCounters > pmc.MaxPlatformCounters {
		return nil, winerr.New(winerr.ErrInvalidParameter, "%d PMC counters per processor: the emulated HAL has 1 to %d", cfg.PMCCounters, pmc.MaxPlatformCounters)
	}
	if cfg.Executable != "" && strings.LastIndexAny(cfg.Executable, `/\:`) == len(cfg.Executable)-1 {
		return nil, winerr.New(winerr.ErrInvalidParameter, "executable %q names a folder, not a file", cfg.Executable)
	}
	if strings.IndexByte(cfg.Executable, 0) >= 0 {
		return nil, winerr.New(winerr.ErrInvalidParameter, "executable %q holds a NUL, which no Windows file name does", cfg.Executable)
	}
	if cfg.ClockFrequency == 0 {
		cfg.ClockFrequency = 10_000_000
	}
	if cfg.ClockFrequency < 0 {
		return nil, winerr.New(winerr.ErrInvalidParameter, "clock frequency %d Hz: a frequency is positive", cfg.ClockFrequency)
	}
	k := &Kernel{
		version: cfg.Version, nproc: cfg.Processors, pid: cfg.ProcessID, manual: cfg.Clock, tsc: cfg.Clock == nil && hw.HasTSC(), freq: cfg.ClockFrequency, sync: cfg.Synchronous,
		names: map[string]uint16{}, permits: map[guid.GUID]session.Permits{}, stopping: map[uint16]bool{}, regs: map[*regentry.Entry]*Registration{},
		guids: guidtable.New(cfg.Version), fs: cfg.FileSystem, rtBacklog: cfg.RealTimeBacklog,
		pmcSource: cfg.PMCSource, pmcCounters: cfg.PMCCounters,
	}
	k.exe = cfg.Executable
	if i := strings.LastIndexAny(k.exe, `/\:`); i >= 0 {
		k.exe = k.exe[i+1:]
	}
	if k.exe == "" {
		k.exe = executableName()
	}
	k.files = newLogFiles(cfg.FileSystem)
	k.routing.Store(&epoch{})
	return k, nil
}

// Version returns the emulated Windows version.
func (k *Kernel) Version() winver.Version { return k.version }

// FileSystem returns the file system sessions write log files to (Config.FileSystem),
// nil for the operating system's.
func (k *Kernel) FileSystem() etl.FileSystem { return k.fs }

// Processors returns the number of emulated processors.
func (k *Kernel) Processors() int { return k.nproc }

// CurrentProcessor maps the processor the calling goroutine runs on (RDPID, RDTSCP or a
// portable hint) onto the emulated processors.
func (k *Kernel) CurrentProcessor() int {
	if k.nproc <= 0 { // a Kernel not made by New has no processors; the writes refuse it first
		return 0
	}
	return k.emulated(hw.CPU())
}

// emulated maps an operating-system CPU number onto the emulated processors.
func (k *Kernel) emulated(cpu int) int {
	if cpu >= k.nproc {
		cpu %= k.nproc
	}
	return cpu
}

// Close stops every running session, as shutting the machine down would. Called from a
// session's Sink, it returns before that session's stop ends, which waits for the Sink;
// two Sinks that call Close at once may each wait for the other's session.
func (k *Kernel) Close() {
	if k == nil { // what a failed New returns: `defer k.Close()` before the error check is safe
		return
	}
	k.mu.Lock()
	k.closed = true
	var hs []TraceHandle
	for i := range k.loggers {
		if l := k.loggers[i].Load(); l != nil {
			hs = append(hs, handleOf(l))
		}
	}
	k.mu.Unlock()
	for _, h := range hs {
		if l, err := k.lookup(h, ""); err == nil {
			if l.CalledFromSink() {
				// Close called from this session's Sink: its logger goroutine is the
				// caller, so the stop ends once the Sink returns, not before Close does.
				go k.stop(l)
				continue
			}
			k.stop(l) // shutdown stops even EVENT_TRACE_NONSTOPPABLE_MODE sessions
		}
	}
}

func lowerName(s string) string { return strings.ToLower(s) }

// executableName is the file name of the emulated process's executable: the program's
// own, as EVENT_FILTER_TYPE_EXECUTABLE_NAME filters name it. It is read once a process:
// os.Executable is a system call (readlink), and a fuzz run or a test that makes a
// kernel per input would pay it for each (about a twelfth of a FuzzConcurrent run).
var executableName = sync.OnceValue(func() string {
	exe, err := os.Executable()
	if err != nil || exe == "" {
		if len(os.Args) == 0 {
			return ""
		}
		exe = os.Args[0]
	}
	return filepath.Base(exe)
})
