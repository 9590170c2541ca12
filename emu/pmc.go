package emu

import (
	"encoding/binary"
	"errors"
	"strconv"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// maxPmcCounterQuerySince is the first version with TraceMaxPmcCounterQuery (19H1).
const maxPmcCounterQuerySince = winver.V1903

// HAL returns the kernel's PMC counter pool, creating it on first use from
// Config.PMCSource (or, without one, the source Detect picks for this machine).
func (k *Kernel) HAL() (*pmc.HAL, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.halLocked()
}

func (k *Kernel) halLocked() (*pmc.HAL, error) {
	if k.hal != nil {
		return k.hal, nil
	}
	src := k.pmcSource
	if src == nil {
		var err error
		if src, _, err = pmc.Choose(pmc.NameAuto); err != nil {
			return nil, err
		}
	}
	h, err := pmc.NewHAL(src, k.pmcCounters)
	if err != nil {
		return nil, err
	}
	k.hal = h
	return h, nil
}

// SetSystemInformation is NtSetSystemInformation for the class ETW's PMC support arrives
// by: SystemPerformanceTraceInformation (0x1F) with a buffer whose first ULONG is
// EventTraceProfileCounterListInformation (0x0F, EVENT_TRACE_PROFILE_COUNTER_INFORMATION)
// or EventTraceProfileEventListInformation (0x0E, EVENT_TRACE_PROFILE_EVENT_INFORMATION),
// each naming the logger by its TRACEHANDLE. Errors are NTSTATUS values:
// STATUS_INVALID_INFO_CLASS for another class or before 6.2, STATUS_INFO_LENGTH_MISMATCH,
// STATUS_WMI_INSTANCE_NOT_FOUND, STATUS_INVALID_PARAMETER, STATUS_DEVICE_BUSY (lists are
// set once; counters in use), STATUS_NOT_SUPPORTED (the counter source cannot count a
// profile source). See pmc.Support for the checks.
func (k *Kernel) SetSystemInformation(class uint32, buf []byte) error {
	if class != pmc.SystemPerformanceTraceInformation {
		return winerr.New(winerr.StatusInvalidInfoClass, "SYSTEM_INFORMATION_CLASS %#x is not emulated (only SystemPerformanceTraceInformation 0x1F)", class)
	}
	c, h, list, r := pmc.ParseInformation(buf)
	if r != nil {
		return r.Native()
	}
	err := k.setPMC(TraceHandle(h), c == pmc.EventTraceProfileCounterListInformation, list)
	var ref *pmc.Refusal
	if errors.As(err, &ref) {
		return ref.Native()
	}
	return err
}

// TraceSetInformation is the documented way in (ADVAPI32/SECHOST): TracePmcCounterListInfo
// takes a ULONG array of profile sources, TracePmcEventListInfo a CLASSIC_EVENT_ID array
// that becomes hook ids (kernel event class group and type). Both lists are set once per
// logger, counters first. Errors are Win32 codes: ERROR_NOT_SUPPORTED (another class,
// before 6.2, or a source the counter source cannot count), ERROR_BAD_LENGTH,
// ERROR_WMI_INSTANCE_NOT_FOUND, ERROR_INVALID_PARAMETER, ERROR_BUSY.
func (k *Kernel) TraceSetInformation(h TraceHandle, class uint32, buf []byte) error {
	var list []uint32
	var r *pmc.Refusal
	switch class {
	case pmc.TracePmcCounterListInfo:
		list, r = pmc.ParseULONGs(buf)
	case pmc.TracePmcEventListInfo:
		list, r = pmc.ParseClassicEventIDs(buf)
	default:
		return winerr.New(winerr.ErrNotSupported, "TRACE_INFO_CLASS %d is not emulated (only TracePmcEventListInfo 8 and TracePmcCounterListInfo 9)", class)
	}
	if r != nil {
		return r
	}
	return k.setPMC(h, class == pmc.TracePmcCounterListInfo, list)
}

// TraceQueryInformation answers TraceMaxPmcCounterQuery (1903 and later): the counters
// each processor has, as a ULONG. Other classes are ERROR_NOT_SUPPORTED.
func (k *Kernel) TraceQueryInformation(class uint32) ([]byte, error) {
	if class != pmc.TraceMaxPmcCounterQuery {
		return nil, winerr.New(winerr.ErrNotSupported, "TRACE_INFO_CLASS %d is not emulated for queries (only TraceMaxPmcCounterQuery 22)", class)
	}
	if k.version < maxPmcCounterQuerySince {
		return nil, winerr.New(winerr.ErrNotSupported, "TraceMaxPmcCounterQuery arrived in %s; this is %s", maxPmcCounterQuerySince, k.version)
	}
	hal, err := k.HAL()
	if err != nil {
		return nil, winerr.New(winerr.ErrNotSupported, "no counter source: %v", err)
	}
	return binary.LittleEndian.AppendUint32(nil, uint32(hal.Counters())), nil
}

// setPMC is the kernel side of both ways in: find the logger, then set its counter list
// (creating its ETW_PMC_SUPPORT) or its event list.
func (k *Kernel) setPMC(h TraceHandle, counters bool, list []uint32) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := pmc.LayoutFor(k.version); !ok {
		return pmc.Refuse(pmc.RuleUnsupported, "Windows %s has no PMC support for loggers (6.2 and later)", k.version)
	}
	l := k.byHandle(h)
	if l == nil {
		return pmc.Because(pmc.RuleNoLogger, "no running session has handle 0x"+strconv.FormatUint(uint64(h), 16))
	}
	s := l.PMC()
	switch {
	case !counters && s == nil:
		return pmc.Because(pmc.RuleInvalid, "session "+strconv.Quote(l.Name())+" has no counters; set the counter list before the event list")
	case !counters:
		return s.SetHooks(list)
	case s != nil:
		return pmc.Because(pmc.RuleBusy, "session "+strconv.Quote(l.Name())+"'s counters are already set ("+strconv.Itoa(s.CountersCount())+"); the list is set once per logger")
	}
	hal, err := k.halLocked()
	if err != nil {
		return pmc.Refuse(pmc.RuleCannotCount, "no counter source: %v", err)
	}
	s, err = pmc.NewSupport(k.version, k.nproc, hal)
	if err != nil {
		return err
	}
	srcs := make([]pmc.ProfileSource, len(list))
	for i, v := range list {
		srcs[i] = pmc.ProfileSource(v)
	}
	if err := s.SetCounters(srcs); err != nil {
		return err
	}
	l.SetPMC(s)
	return nil
}

// WriteSystemEvent logs a kernel event (SYSTEM_TRACE_HEADER with hook id hook) straight
// into the session with handle h, as the kernel's own event sites log into the NT Kernel
// Logger and SystemTraceProvider sessions. o chooses the processor and thread and may
// carry a Tally; nil means the current processor. If the session's PMC configuration
// selects the hook id, the counters of the processor follow the header.
//
// Errors: ERROR_INVALID_HANDLE when no session has the handle; ERROR_INVALID_PARAMETER
// for more than 128 data blocks; ERROR_ARITHMETIC_OVERFLOW over 64 KB; then as EventWrite
// (ERROR_MORE_DATA, ERROR_NOT_ENOUGH_MEMORY, ERROR_LOG_FILE_FULL, ERROR_CANCELLED).
func (k *Kernel) WriteSystemEvent(h TraceHandle, hook uint16, o *WriteOptions, data ...[]byte) error {
	l := k.byHandle(h)
	if l == nil {
		return winerr.Because(winerr.ErrInvalidHandle, "no running session has handle 0x"+strconv.FormatUint(uint64(h), 16))
	}
	if len(data) > MaxDataDescriptors {
		return winerr.ErrInvalidParameter
	}
	size := abi.SystemHeaderSize
	for _, b := range data {
		size += len(b)
	}
	proc, tally := AnyProcessor, (*Tally)(nil)
	ev := session.SystemEvent{HookID: hook, ProcessID: k.pid, Data: data, Size: uint32(size)}
	if o != nil {
		proc, tally, ev.ThreadID = o.Processor, o.Tally, o.ThreadID
	}
	if proc < 0 {
		proc = k.CurrentProcessor()
	}
	id := l.ID()
	if size > abi.MaxEventSize {
		if l.Lose() {
			tally.count(id, false)
		}
		return errTooBig
	}
	switch err := l.WriteSystem(proc, &ev); err {
	case nil:
		tally.count(id, true)
		return nil
	case session.ErrStopped:
		return winerr.Because(winerr.ErrInvalidHandle, "session "+strconv.Quote(l.Name())+" stopped")
	case session.ErrCancelled:
		return err
	default:
		tally.count(id, false)
		return err
	}
}
