package session

import (
	"encoding/binary"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/internal/hw"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/winerr"
)

// SetPMC stores the logger's PMC configuration (WMI_LOGGER_CONTEXT.PmcData). The kernel
// calls it once, under its control lock, after the counters are set; writers pick it up
// on their next event.
func (l *Logger) SetPMC(s *pmc.Support) { l.pmcData.Store(s) }

// PMC returns the logger's PMC configuration, nil if none.
func (l *Logger) PMC() *pmc.Support { return l.pmcData.Load() }

// SystemEvent is one kernel event to be written with a SYSTEM_TRACE_HEADER: the hook id
// (group and type), thread and process, and the data blocks. Size is the header and the
// data, unaligned, without the counters a PMC configuration adds.
type SystemEvent struct {
	HookID    uint16
	ThreadID  uint32
	ProcessID uint32
	Data      [][]byte
	Size      uint32
}

// reserve takes need bytes (aligned) on processor proc's current buffer, switching
// buffers as Write does, and returns the buffer (holding a reference the caller drops
// with b.word.Add(refRelease)) and the record's bytes. Write has the same first attempt
// written out in line.
func (l *Logger) reserve(proc int, need uint32) (*Buffer, []byte, error) {
	idx := l.streamOf(proc)
	s := &l.streams[idx]
	b := s.cur.Load()
	var end uint32
	if b != nil {
		end = uint32(b.word.Add(uint64(need) | refOne))
	}
	if b == nil || int(end) > len(b.data) {
		var err error
		if b, end, err = l.reserveSlow(s, int(idx), b, end, need); err != nil {
			return nil, nil, err
		}
	}
	return b, b.data[int(end)-int(need) : int(end)], nil
}

// stamp returns ev's timestamp on the session clock. A clock that reads the time-stamp
// counter takes the reading the kernel made with the processor number (Event.TSC), so
// the sessions an event goes to share one RDTSC; without one it reads the counter itself.
func (l *Logger) stamp(ev *Event) int64 {
	if l.tsc && ev.TSC != 0 {
		return ev.TSC
	}
	return l.now()
}

// now reads the session clock.
func (l *Logger) now() int64 {
	if l.tsc {
		return hw.TSC()
	}
	return l.clock.Now()
}

// refuseRecord handles a record that cannot fit any buffer of the session: counted lost
// (ERROR_MORE_DATA) unless the session stopped.
func (l *Logger) refuseRecord() error {
	if !l.Lose() {
		return ErrStopped
	}
	return winerr.ErrMoreData
}

// writeCounted is Write for an event the logger's PMC configuration selects: the counters
// of processor proc, read at write time, go into an EVENT_HEADER_EXT_TYPE_PMC_COUNTERS
// item (after a RELATED_ACTIVITYID item, if the event has one).
func (l *Logger) writeCounted(proc int, ev *Event, p *pmc.Support) error {
	var ctr [pmc.MaxPlatformCounters]uint64
	n := p.CountersCount()
	item := abi.ExtItemSize(8 * n)
	size := ev.Size + uint32(item)
	need := (size + abi.TraceAlignment - 1) &^ (abi.TraceAlignment - 1)
	if need > l.maxRecord || size > abi.MaxEventSize {
		return l.refuseRecord()
	}
	b, rec, err := l.reserve(proc, need)
	if err != nil {
		return err
	}
	n = p.Read(proc, ctr[:])
	h := abi.EventHeader{
		Size: uint16(size), HeaderType: abi.EventHeaderEvent64,
		Flags:    abi.EventFlag64BitHeader | abi.EventFlagExtendedInfo,
		ThreadID: ev.ThreadID, ProcessID: ev.ProcessID, TimeStamp: l.stamp(ev),
		Descriptor: *ev.Descriptor,
	}
	h.ProviderID = guid.FromBytes(ev.Provider[:])
	x := ev.Extra
	if x != nil && x.Activity != nil {
		h.ActivityID = *x.Activity
	}
	h.Encode(rec)
	body := rec[abi.EventHeaderSize:]
	if x != nil && x.Related != nil {
		var rel [16]byte
		x.Related.Put(rel[:])
		body = body[abi.PutExtItem(body, abi.ExtTypeRelatedActivityID, true, rel[:]):]
	}
	var data [8 * pmc.MaxPlatformCounters]byte
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint64(data[8*i:], ctr[i])
	}
	body = body[abi.PutExtItem(body, abi.ExtTypePMCCounters, false, data[:8*n]):]
	complete(b, body, ev.Data)
	return nil
}

// complete copies the data blocks into body, zeroes the alignment padding after them,
// and drops the writer's reference on b: the record is done.
func complete(b *Buffer, body []byte, data [][]byte) {
	p := 0
	for _, d := range data {
		p += copy(body[p:], d)
	}
	clear(body[p:])
	b.word.Add(refRelease)
}

// WriteSystem writes a kernel event with a SYSTEM_TRACE_HEADER into processor proc's
// buffer, as the kernel's own event sites log into the NT Kernel Logger and
// SystemTraceProvider sessions. When the logger's PMC configuration selects the hook
// id, the counters of processor proc follow the header and the marker says how many
// (bits 8-10). Errors as Write.
func (l *Logger) WriteSystem(proc int, ev *SystemEvent) error {
	var ctr [pmc.MaxPlatformCounters]uint64
	n := 0
	p := l.pmcData.Load()
	if p != nil && p.Selects(ev.HookID) {
		// [UNCERTAIN] The marker's three bits cannot say eight: with eight sources (1703
		// to 1809 allow them) a system event carries the first seven.
		n = min(p.CountersCount(), pmc.MaxSystemHeaderCounters)
	}
	size := ev.Size + uint32(8*n)
	need := (size + abi.TraceAlignment - 1) &^ (abi.TraceAlignment - 1)
	if need > l.maxRecord || size > abi.MaxEventSize || ev.Size < abi.SystemHeaderSize {
		return l.refuseRecord()
	}
	b, rec, err := l.reserve(proc, need)
	if err != nil {
		return err
	}
	if n > 0 {
		p.Read(proc, ctr[:n])
	}
	h := abi.SystemHeader{ // KernelTime, UserTime: not modelled
		Marker: abi.SystemTraceMarker64 | uint32(n)<<abi.TraceHeaderPMCShift, Size: uint16(size),
		HookID: ev.HookID, ThreadID: ev.ThreadID, ProcessID: ev.ProcessID, SystemTime: l.now(),
	}
	h.Encode(rec)
	body := rec[abi.SystemHeaderSize:]
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint64(body[8*i:], ctr[i])
	}
	complete(b, body[8*n:], ev.Data)
	return nil
}
