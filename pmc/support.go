package pmc

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// Rule names a reason a PMC request is refused. Each has the Win32 code that
// TraceSetInformation returns and the NTSTATUS that NtSetSystemInformation returns.
type Rule uint8

// The refusal rules. [UNCERTAIN] No public source lists what the kernel returns for each
// check; the codes are those the documented API (TraceSetInformation, StartTrace) returns
// for the same kind of fault elsewhere in ETW, and ERROR_BUSY is what callers report when
// another user holds the counters.
const (
	RuleUnsupported Rule = iota // no PMC support before 6.2
	RuleLength                  // the buffer is not a whole list
	RuleNoLogger                // no logger has the handle
	RuleInvalid                 // a count or a value out of range, or events before counters
	RuleBusy                    // lists are set once; the counters are in use
	RuleCannotCount             // the counter source cannot count that profile source
)

var ruleCodes = [...][2]*winerr.Errno{
	RuleUnsupported: {winerr.ErrNotSupported, winerr.StatusInvalidInfoClass},
	RuleLength:      {winerr.ErrBadLength, winerr.StatusInfoLengthMismatch},
	RuleNoLogger:    {winerr.ErrWMIInstanceNotFound, winerr.StatusWMIInstanceNotFound},
	RuleInvalid:     {winerr.ErrInvalidParameter, winerr.StatusInvalidParameter},
	RuleBusy:        {winerr.ErrBusy, winerr.StatusDeviceBusy},
	RuleCannotCount: {winerr.ErrNotSupported, winerr.StatusNotSupported},
}

// Refusal is a refused PMC request. As an error it is the Win32 form (errors.Is matches
// the ERROR_* sentinel); Native gives the NTSTATUS form.
type Refusal struct {
	Rule   Rule
	Reason string
}

// Refuse builds a Refusal under rule r.
func Refuse(r Rule, format string, args ...any) *Refusal {
	return &Refusal{Rule: r, Reason: fmt.Sprintf(format, args...)}
}

// Because builds a Refusal under rule r with the reason already written out: Refuse
// without the formatting, for refusals a caller makes often enough that fmt shows in its
// profile (a fuzzer setting a stopped session's counters again and again).
func Because(r Rule, reason string) *Refusal {
	return &Refusal{Rule: r, Reason: reason}
}

func (r *Refusal) Error() string { return ruleCodes[r.Rule][0].Error() + ": " + r.Reason }

// Unwrap returns the Win32 sentinel.
func (r *Refusal) Unwrap() error { return ruleCodes[r.Rule][0] }

// Native returns the refusal as NtSetSystemInformation reports it: the NTSTATUS and the
// same reason.
func (r *Refusal) Native() error { return winerr.Because(ruleCodes[r.Rule][1], r.Reason) }

// DefaultPlatformCounters is the emulated HAL's counters per processor when none is
// configured: four general-purpose counters, what an x86 core with SMT offers each
// logical processor (and ETW_MAX_PMC_COUNTERS in the 1511 WDK). [UNCERTAIN] real
// machines differ; TraceMaxPmcCounterQuery (1903+) reports theirs.
const DefaultPlatformCounters = 4

// MaxPlatformCounters bounds what a HAL may be configured with.
const MaxPlatformCounters = 16

// MaxSystemHeaderCounters is the most counters a system header can say it carries: the
// count is three bits of the marker (TRACE_HEADER_PMC_COUNTERS_MASK 0x0700).
const MaxSystemHeaderCounters = 7

// HAL is the emulated hardware abstraction layer's side of PMC support: the counters each
// processor has, which loggers share, and the Source that reads them.
type HAL struct {
	source   Source // immutable
	counters int    // per processor; immutable
	mu       sync.Mutex
	inUse    int // counters allocated to loggers; protected by mu
}

// NewHAL returns a HAL whose processors have counters counters each (0 means
// DefaultPlatformCounters), read through src.
func NewHAL(src Source, counters int) (*HAL, error) {
	if counters == 0 {
		counters = DefaultPlatformCounters
	}
	if counters < 1 || counters > MaxPlatformCounters {
		return nil, winerr.New(winerr.ErrInvalidParameter, "%d counters per processor: the emulated HAL has 1 to %d", counters, MaxPlatformCounters)
	}
	return &HAL{source: src, counters: counters}, nil
}

// Source returns the counter source.
func (h *HAL) Source() Source { return h.source }

// Counters returns the counters per processor (EtwMaxPmcCounter, TraceMaxPmcCounterQuery).
func (h *HAL) Counters() int { return h.counters }

// InUse returns the counters allocated to loggers.
func (h *HAL) InUse() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.inUse
}

// MaxCounters is how many profile sources one logger may nominate in version v on this
// HAL: the inline array's length (4 or 8) where there is one, and never more than the
// processor has. 0 before 6.2.
func (h *HAL) MaxCounters(v winver.Version) int {
	l, ok := LayoutFor(v)
	if !ok {
		return 0
	}
	if l.SourceSlots > 0 && l.SourceSlots < h.counters {
		return l.SourceSlots
	}
	return h.counters
}

// Support is the emulator's model of ETW_PMC_SUPPORT, a logger's PMC configuration: the
// profile sources, the hook ids whose events carry counters, and one counter block per
// processor. The kernel's HAL_PMC_COUNTERS contents are not known; here a block is the
// processor's read sequence and the source's handles. See Image for the structure's bytes.
type Support struct {
	version winver.Version // immutable
	layout  Layout         // immutable
	hal     *HAL           // immutable

	// sources and set are written once by SetCounters, before the Support is published
	// to writers (session.Logger.SetPMC); read-only afterwards.
	sources []ProfileSource
	set     Set
	// hookIDs are written once by SetHooks before it stores hookIDCount; writers load
	// hookIDCount (atomic) and then read that many ids.
	hookIDs     [MaxHookIDs]uint16
	hookIDCount atomic.Uint32 // HookIdCount
	// ProcessorCtrs: one block per emulated processor; the slice is immutable.
	ctrs []Counters
	// closed is set once by Close (under the kernel's control lock).
	closed bool
}

// Counters models HAL_PMC_COUNTERS (PMC_HANDLE), one processor's counters for one
// logger. The kernel's contents are undocumented; the emulator keeps how many times the
// processor's counters were read.
type Counters struct {
	reads atomic.Uint64 // atomic; incremented by each writer that reads the counters
	_     [56]byte      // one cache line per processor
}

// MaxProcessors bounds the processors NewSupport keeps counters for: the emulator's
// limit, as emu.New's.
const MaxProcessors = 2048

// NewSupport creates an empty ETW_PMC_SUPPORT for a logger in version v on processors
// processors, or refuses before 6.2.
func NewSupport(v winver.Version, processors int, hal *HAL) (*Support, error) {
	if processors < 1 || processors > MaxProcessors {
		return nil, winerr.New(winerr.ErrInvalidParameter, "%d processors: a logger's PMC support is for 1 to %d", processors, MaxProcessors)
	}
	l, ok := LayoutFor(v)
	if !ok {
		return nil, Refuse(RuleUnsupported, "Windows %s has no PMC support for loggers (6.2 and later)", v)
	}
	return &Support{version: v, layout: l, hal: hal, ctrs: make([]Counters, processors)}, nil
}

// SetCounters nominates the profile sources (EventTraceProfileCounterListInformation,
// TracePmcCounterListInfo) and allocates them from the HAL on every processor.
//
// Refusals: ERROR_INVALID_PARAMETER for an empty list, more sources than the version's
// structure and the processor hold (HAL.MaxCounters), a value past ProfileMaximum or a
// source named twice; ERROR_NOT_SUPPORTED when the counter source cannot count one;
// ERROR_BUSY when the list was already set (it is set once per logger) or the
// processors' counters are taken by other loggers.
func (s *Support) SetCounters(sources []ProfileSource) error {
	if len(s.sources) > 0 {
		return Refuse(RuleBusy, "the logger's counters are already set (%d); the list is set once per logger", len(s.sources))
	}
	limit := s.hal.MaxCounters(s.version)
	switch {
	case len(sources) == 0:
		return Refuse(RuleInvalid, "the counter list is empty")
	case len(sources) > limit:
		return Refuse(RuleInvalid, "%d profile sources: %s", len(sources), s.limitReason(limit))
	}
	for i, src := range sources {
		if src >= ProfileMaximum {
			return Refuse(RuleInvalid, "profile source %d is not a KPROFILE_SOURCE (0 to %d)", uint32(src), ProfileMaximum-1)
		}
		for _, prev := range sources[:i] {
			if prev == src {
				return Refuse(RuleInvalid, "profile source %v is named twice", src)
			}
		}
		if err := s.hal.source.Counts(src); err != nil {
			return Refuse(RuleCannotCount, "the %s counter source cannot count %v: %v", s.hal.source.Name(), src, err)
		}
	}
	h := s.hal
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.inUse+len(sources) > h.counters {
		// Without fmt: a fuzzer meets this refusal often enough that Sprintf showed in its profile.
		return Because(RuleBusy, strconv.Itoa(len(sources))+" counters asked for, "+strconv.Itoa(h.inUse)+" of the processor's "+
			strconv.Itoa(h.counters)+" are in use by other loggers")
	}
	set, err := h.source.Open(sources, len(s.ctrs))
	if err != nil {
		return Refuse(RuleBusy, "the %s counter source could not open the counters: %v", h.source.Name(), err)
	}
	h.inUse += len(sources)
	s.sources, s.set = append([]ProfileSource(nil), sources...), set
	return nil
}

func (s *Support) limitReason(limit int) string {
	if s.layout.SourceSlots == limit {
		return fmt.Sprintf("ETW_PMC_SUPPORT in %s holds %d (Source[%d])", s.layout.Versions, limit, limit)
	}
	return fmt.Sprintf("the processor has %d counters (TraceMaxPmcCounterQuery)", limit)
}

// SetHooks sets the hook ids whose events carry counters
// (EventTraceProfileEventListInformation, TracePmcEventListInfo); counting starts.
//
// Refusals: ERROR_INVALID_PARAMETER when the counters are not set yet, for an empty list,
// more than four ids, or an id past 0xFFFF; ERROR_BUSY when the list was already set.
func (s *Support) SetHooks(ids []uint32) error {
	switch {
	case len(s.sources) == 0:
		return Refuse(RuleInvalid, "set the counter list before the event list")
	case s.hookIDCount.Load() != 0:
		return Refuse(RuleBusy, "the logger is counting on %d events; the event list is set once per logger", s.hookIDCount.Load())
	case len(ids) == 0:
		return Refuse(RuleInvalid, "the event list is empty")
	case len(ids) > MaxHookIDs:
		return Refuse(RuleInvalid, "%d events: ETW_PMC_SUPPORT holds %d hook ids", len(ids), MaxHookIDs)
	}
	for _, id := range ids {
		if id > 0xFFFF {
			return Refuse(RuleInvalid, "hook id %#x does not fit the USHORT HookId", id)
		}
	}
	for i, id := range ids {
		s.hookIDs[i] = uint16(id)
	}
	s.hookIDCount.Store(uint32(len(ids)))
	return nil
}

// Selects reports whether an event with this hook id (system events) or event id
// (EVENT_HEADER events) carries counters. Called by writers.
func (s *Support) Selects(id uint16) bool {
	n := s.hookIDCount.Load()
	for i := uint32(0); i < n && i < MaxHookIDs; i++ {
		if s.hookIDs[i] == id {
			return true
		}
	}
	return false
}

// Read stores the counters of processor proc into dst and returns how many it stored
// (CountersCount, at most len(dst)). Called by writers.
func (s *Support) Read(proc int, dst []uint64) int {
	n := min(len(s.sources), len(dst))
	if uint(proc) >= uint(len(s.ctrs)) {
		proc = int(uint(proc) % uint(len(s.ctrs)))
	}
	seq := s.ctrs[proc].reads.Add(1)
	// The emulator's own sources are called by their types, so dst (on the writer's
	// stack) does not escape; a slice handed to an interface method would be allocated
	// on every event. Other sources (perf events, whose read(2) costs microseconds) get a
	// copy.
	switch set := s.set.(type) {
	case syntheticSet:
		set.Read(proc, seq, dst[:n])
	case tscSet:
		set.Read(proc, seq, dst[:n])
	default:
		tmp := make([]uint64, n)
		s.set.Read(proc, seq, tmp)
		copy(dst, tmp)
	}
	return n
}

// Reads returns how many times processor proc's counters were read: 0 for a processor
// the session does not have (Read wraps such a number onto one it has, and counts the
// read there).
func (s *Support) Reads(proc int) uint64 {
	if uint(proc) >= uint(len(s.ctrs)) {
		return 0
	}
	return s.ctrs[proc].reads.Load()
}

// Sources returns the nominated profile sources (the Source array).
func (s *Support) Sources() []ProfileSource { return s.sources }

// CountersCount returns the number of counters each selected event carries.
func (s *Support) CountersCount() int { return len(s.sources) }

// HookIDs returns the hook ids set so far (HookId[0:HookIdCount]).
func (s *Support) HookIDs() []uint16 {
	return append([]uint16(nil), s.hookIDs[:s.hookIDCount.Load()]...)
}

// Layout returns the structure's layout in the logger's version.
func (s *Support) Layout() Layout { return s.layout }

// SourceName names the counter source the counters are read from.
func (s *Support) SourceName() string { return s.hal.source.Name() }

// Image returns the structure's bytes as the version keeps them on arch (X86 or X64),
// with one PMC_HANDLE per processor. Pointers hold emulated kernel addresses.
func (s *Support) Image(arch int) []byte {
	return s.layout.image(arch, s.sources, s.HookIDs(), len(s.ctrs))
}

// Close returns the counters to the HAL (when the logger stops). Called once, by the
// logger's owner, after writers are done.
func (s *Support) Close() {
	if s.closed || s.set == nil {
		return
	}
	s.closed = true
	s.set.Close()
	s.hal.mu.Lock()
	s.hal.inUse -= len(s.sources)
	s.hal.mu.Unlock()
}
