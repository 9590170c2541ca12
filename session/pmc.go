package session

import (
	"encoding/binary"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/pmc"
)

// SetPMC stores the logger's PMC configuration (WMI_LOGGER_CONTEXT.PmcData). The kernel
// calls it once, under its control lock, after the counters are set; writers pick it up
// on their next event.
func (l *Logger) SetPMC(s *pmc.Support) { l.pmcData.Store(s) }

// PMC returns the logger's PMC configuration, nil if none.
func (l *Logger) PMC() *pmc.Support { return l.pmcData.Load() }

// writeCounted is Write for an event the logger's PMC configuration selects: the counters
// of processor proc, read at write time, go into an EVENT_HEADER_EXT_TYPE_PMC_COUNTERS
// item (after a RELATED_ACTIVITYID item, if the event has one).
func (l *Logger) writeCounted(proc int, ev *Event, p *pmc.Support) error {
	var ctr [pmc.MaxPlatformCounters]uint64
	n := p.CountersCount()
	item := abi.ExtItemSize(8 * n)
	size := ev.Size + uint32(item)
	need := abi.Align(size)
	if need > l.maxRecord || size > abi.MaxEventSize {
		return l.refuseRecord()
	}
	b, rec, err := l.reserve(proc, need)
	if err != nil {
		return err
	}
	n = p.Read(proc, ctr[:])
	putEventHeader((*[abi.EventHeaderSize]byte)(rec), ev, size, l.stamp(ev))
	rec[abi.OffEventFlags] |= abi.EventFlagExtendedInfo // the counters are an extended item
	x := ev.Extra
	body := rec[abi.EventHeaderSize:]
	if x != nil && x.Related != nil {
		body = putRelatedItem(body, x.Related, true) // the counters' item follows
	}
	var data [8 * pmc.MaxPlatformCounters]byte
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint64(data[8*i:], ctr[i])
	}
	body = body[abi.PutExtItem(body, abi.ExtTypePMCCounters, false, data[:8*n]):]
	complete(b, body, ev.Data)
	return nil
}
