package session

import (
	"encoding/binary"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/pmc"
)

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
	b, w, rec, err := l.reserveRecord(proc, size, ev.Size >= abi.SystemHeaderSize)
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
	complete(b, w, body[8*n:], ev.Data)
	return nil
}
