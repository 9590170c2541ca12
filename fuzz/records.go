package fuzz

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/session"
)

// rec is what the harness compares of one record a session wrote: the header fields
// the writer chose and the record's size. tail is the record's last eight bytes, which
// for a payload of eight bytes or more is the write's serial number (see payloadFor):
// it tells one event from another, so a record lost, doubled or moved is seen.
type rec struct {
	system   bool
	provider guid.GUID // EVENT_HEADER.ProviderId
	hook     uint16    // SYSTEM_TRACE_HEADER's hook id, or EVENT_DESCRIPTOR.Id
	level    uint8
	keyword  uint64
	pid, tid uint32
	activity guid.GUID
	size     uint16
	tail     uint64
	hasTail  bool // the model's prediction: the payload ends the record with the serial
	// items are the itemProps bits whose extended items the record carries, each with
	// the value the emulated process has (badItem: one with another value).
	items uint32
}

// badItem marks, in rec.items, an enable property's item whose data is not the value
// the emulated process has: S-1-5-18, terminal session 1, start key 1<<48 | processID
// (emu's [emulator choice] values), an EVENT_KEY that is not 8 bytes, or a stack that is
// not MatchId 0 and stackFrames return addresses.
const badItem = 1 << 31

// localSystem is S-1-5-18 as a binary SID: the harness's own copy of the value, not
// emu's, so that a wrong SID there is seen.
var localSystem = []byte{1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0}

// itemsOf reads the enable properties' items among a record's extended items into
// rec.items bits.
func itemsOf(ext []etl.ExtItem) uint32 {
	var bits uint32
	for _, x := range ext {
		for _, it := range itemProps {
			if x.Type != it.typ {
				continue
			}
			bits |= it.prop
			ok := len(x.Data) == it.size
			switch {
			case !ok:
			case it.prop == guidtable.PropertySID:
				ok = bytes.Equal(x.Data, localSystem)
			case it.prop == guidtable.PropertyTSID:
				ok = binary.LittleEndian.Uint32(x.Data) == 1
			case it.prop == guidtable.PropertyProcessStartKey:
				ok = binary.LittleEndian.Uint64(x.Data) == 1<<48|processID
			case it.prop == guidtable.PropertyStackTrace: // MatchId 0 (the stack is not keyed), then return addresses
				ok = binary.LittleEndian.Uint64(x.Data) == 0
				for i := 8; ok && i < len(x.Data); i += 8 {
					ok = binary.LittleEndian.Uint64(x.Data[i:]) != 0
				}
			}
			if !ok {
				bits |= badItem
			}
		}
	}
	return bits
}

func (r rec) String() string {
	if r.system {
		return fmt.Sprintf("{system hook %#04x pid %d tid %d size %d tail %#x}", r.hook, r.pid, r.tid, r.size, r.tail)
	}
	items := propsOption(r.items &^ badItem) // " props=..." or nothing
	if r.items&badItem != 0 {
		items += " (an item with a wrong value)"
	}
	return fmt.Sprintf("{provider %v id %d level %d keyword %#x pid %d tid %d activity %v size %d tail %#x%s}",
		r.provider, r.hook, r.level, r.keyword, r.pid, r.tid, r.activity, r.size, r.tail, items)
}

// matches compares a record the sink received (r) with the model's (w).
func (r rec) matches(w rec) bool {
	if !w.hasTail {
		r.tail, w.tail = 0, 0
	}
	r.hasTail = w.hasTail
	return r == w
}

// recSink is a session's sink in a fuzz run: it counts and walks the buffers as
// session.Counter does, and keeps each record's rec by the stream (ProcessorNumber) of
// the buffer it came in. The synchronous kernel calls it on the harness's goroutine.
type recSink struct {
	session.Counter
	got    [][]rec // per stream
	seen   []int   // per stream: the records already compared with the model's
	bad    error   // the first record that did not decode
	stacks uint64  // records received with a STACK_TRACE item (Coverage.Stacks)
}

// WriteBuffer implements session.Sink.
func (s *recSink) WriteBuffer(buf []byte) error {
	if err := s.Counter.WriteBuffer(buf); err != nil {
		return err
	}
	h, _ := abi.DecodeBufferHeader(buf)
	stream := h.ProcessorIndex()
	for len(s.got) <= stream {
		s.got, s.seen = append(s.got, nil), append(s.seen, 0)
	}
	return etl.SealedRecords(buf, func(r etl.Record) error {
		var x rec
		b := r.Bytes
		x.size = uint16(r.Size)
		x.tail = binary.LittleEndian.Uint64(b[len(b)-8:])
		if r.Kind == etl.KindEventHeader {
			e := r.Event
			x.provider, x.hook, x.level, x.keyword = e.ProviderID, e.Descriptor.ID, e.Descriptor.Level, e.Descriptor.Keyword
			x.pid, x.tid, x.activity = e.ProcessID, e.ThreadID, e.ActivityID
			x.items = itemsOf(r.Ext)
			if x.items&guidtable.PropertyStackTrace != 0 {
				s.stacks++
			}
		} else {
			x.system = true
			x.hook, x.tid, x.pid = r.HookID, r.ThreadID, r.ProcessID
		}
		s.got[stream] = append(s.got[stream], x)
		return nil
	})
}

// compare checks the records the sink received since the last compare against the
// session's accepted records, stream by stream: each must be the next one the model
// has. With final (the session stopped), every accepted record must have arrived.
func (s *recSink) compare(want [][]rec, final bool) error {
	if s.bad != nil {
		return s.bad
	}
	for i := range max(len(want), len(s.got)) {
		var got, w []rec
		seen := 0
		if i < len(s.got) {
			got, seen = s.got[i], s.seen[i]
		}
		if i < len(want) {
			w = want[i]
		}
		for j := seen; j < len(got); j++ {
			if j >= len(w) {
				return fmt.Errorf("stream %d: record %d %v arrived, but the session accepted only %d", i, j, got[j], len(w))
			}
			if !got[j].matches(w[j]) {
				return fmt.Errorf("stream %d record %d:\n  sink  %v\n  model %v", i, j, got[j], w[j])
			}
		}
		if i < len(s.got) {
			s.seen[i] = len(got)
		}
		if final && len(got) != len(w) {
			return fmt.Errorf("stream %d: the session stopped with %d records in its sink, the model has %d accepted", i, len(got), len(w))
		}
	}
	return nil
}
