package etl

import (
	"bytes"
	"encoding/binary"
	"fmt"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/guid"
)

// Kind is the header kind of a record.
type Kind uint8

// Record kinds the reader tells apart (phnt TRACE_HEADER_TYPE_*; the 0x90 marker is
// MESSAGE).
const (
	KindUnknown     Kind = iota // a marker the reader does not know; the buffer's walk ends there, damaged
	KindEventHeader             // EVENT_HEADER (manifest and TraceLogging events)
	KindSystem                  // SYSTEM_TRACE_HEADER (kernel events, the log-file header)
	KindCompact                 // the compact system header
	KindPerfInfo                // PERFINFO_TRACE_HEADER
	KindFullHeader              // EVENT_TRACE_HEADER (classic TraceEvent)
	KindInstance                // EVENT_INSTANCE_GUID_HEADER
	KindMessage                 // MESSAGE_TRACE_HEADER (WPP, TraceMessage)
	KindError                   // EVENT_HEADER_ERROR
)

var kindNames = [...]string{"unknown", "event", "system", "compact", "perfinfo", "classic", "instance", "message", "error"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", uint8(k))
}

// ExtItem is one extended data item after an EVENT_HEADER.
type ExtItem struct {
	Type uint16
	Data []byte
}

// Record is one decoded record. Which fields are set depends on Kind; Bytes always holds
// the record's stored (unpadded) bytes.
type Record struct {
	Offset int    // in the buffer's data, header included
	Kind   Kind   // header kind
	Marker uint32 // the first ULONG
	Size   int    // stored size, without the alignment padding
	Bytes  []byte

	// EVENT_HEADER records.
	Event abi.EventHeader
	Ext   []ExtItem

	// System, compact and perfinfo records.
	HookID uint16 // Group<<8 | Type

	// Every kind that has them.
	ThreadID, ProcessID uint32
	TimeStamp           int64
	Provider            guid.GUID // EVENT_HEADER and classic records with a GUID
	PMC                 []uint64  // counters after a system header, or the PMC_COUNTERS item
	Payload             []byte
}

// maxExtItems bounds the extended items of one event (dissect.etl stops at 13).
const maxExtItems = 64

// frameRecord reads the framing of the record at off in data, which ends at end: its
// marker, kind, size and bytes. It returns the record and false when the walk must stop
// there: an end-of-data fill (0xFFFFFFFF) gives no record at all (Size 0); an unknown
// marker gives a KindUnknown record. Malformed sizes are errors naming the offset.
func frameRecord(data []byte, off, end int) (Record, bool, error) {
	if end-off < 4 {
		return Record{}, false, fmt.Errorf("offset %#x: %d stray bytes before the end of data", off, end-off)
	}
	size, ok := frameAt(data, off, end)
	r := Record{Offset: off, Marker: binary.LittleEndian.Uint32(data[off:]), Size: size}
	if r.Marker == endOfData {
		return r, false, nil
	}
	var header, items int
	r.Kind, header, items, _ = frame(r.Marker)
	switch {
	case ok:
		r.Bytes = data[off : off+size]
		return r, true, nil
	case r.Kind == KindUnknown:
		r.Bytes = data[off:min(end, off+16)]
		return r, false, nil
	case end-off < 8:
		return r, false, fmt.Errorf("offset %#x: %s header needs %#x bytes, %#x left", off, r.Kind, header, end-off)
	}
	return r, false, fmt.Errorf("offset %#x: %s record of size %#x (header %#x) runs past the end of data %#x", off, r.Kind, size, header+items, end)
}

// frameAt reads the USHORT size of the record at off in data, which ends at end and
// holds at least 4 bytes there (0 when fewer than 8 are left to hold it, or the marker
// is the end-of-data fill or one frame does not know), and reports whether the record is
// well formed: a kind frame knows, 8 bytes or more left, and a size that covers its
// header and items and ends by end. The rules of every walk: frameRecord says what a
// record that fails them is, and CountRecords counts by them alone (returned whole,
// frameRecord's 240-byte Record made the walk of a full 64 KB buffer of 64-byte events
// take 28 ns a record, BenchmarkCountRecords).
func frameAt(data []byte, off, end int) (size int, ok bool) {
	m := binary.LittleEndian.Uint32(data[off:])
	if m == endOfData || end-off < 8 {
		return 0, false
	}
	kind, header, items, sizeAt := frame(m)
	if kind == KindUnknown {
		return 0, false
	}
	size = int(binary.LittleEndian.Uint16(data[off+sizeAt:]))
	return size, size >= header+items && off+size <= end
}

// endOfData is the marker word of the 0xFF fill after a sealed buffer's last record.
const endOfData = 0xFFFFFFFF

// frame classifies a record by its marker (not the end-of-data fill): its kind
// (KindUnknown for a marker no kind has), its header kind's size, the size of the items
// the marker announces after a system, compact or perfinfo header (PMC counters, a PEBS
// index), and where in the header the USHORT record size is. The framing rules of every
// walk: frameRecord's, and CountRecords', which reads nothing else (its EVENT_HEADER fast
// path is these rules for that kind, which TestCountRecordsMatchesFrameRecord holds it to).
func frame(m uint32) (kind Kind, header, items, sizeAt int) {
	flags, typ := byte(m>>24), byte(m>>16)
	switch {
	case flags == flagsMessage:
		return KindMessage, messageHeaderSize, 0, 0
	case flags != flagsHeader:
		return KindUnknown, 0, 0, 0
	case typ == typeEvent64 || typ == typeEvent32:
		return KindEventHeader, abi.EventHeaderSize, 0, 0
	case typ == typeSystem64 || typ == typeSystem32:
		return KindSystem, SystemHeaderSize, abi.SystemItemsSize(m), 4
	case typ == typeCompact64 || typ == typeCompact32:
		return KindCompact, compactHeaderSize, abi.SystemItemsSize(m), 4
	case typ == typePerfInfo64 || typ == typePerfInfo32:
		return KindPerfInfo, perfInfoHeaderSize, abi.SystemItemsSize(m), 4
	case typ == typeFullHeader64 || typ == typeFullHeader32:
		return KindFullHeader, fullHeaderSize, 0, 0
	case typ == typeInstance64 || typ == typeInstance32:
		return KindInstance, instanceHeaderSize, 0, 0
	case typ == typeError:
		return KindError, 4, 0, 0
	}
	return KindUnknown, 0, 0, 0
}

// decodeRecord reads the record at off in data, which ends at end: frameRecord's framing,
// then the fields of its header kind, its extended items and its payload.
func decodeRecord(data []byte, off, end int) (Record, bool, error) {
	r, more, err := frameRecord(data, off, end)
	if !more || err != nil {
		return r, more, err
	}
	le := binary.LittleEndian
	b, m := r.Bytes, r.Marker
	switch r.Kind {
	case KindEventHeader:
		r.Event, _ = abi.DecodeEventHeader(b)
		r.ThreadID, r.ProcessID, r.TimeStamp = r.Event.ThreadID, r.Event.ProcessID, r.Event.TimeStamp
		r.Provider = r.Event.ProviderID
		p := abi.EventHeaderSize
		if r.Event.Flags&abi.EventFlagExtendedInfo != 0 {
			var err error
			if p, err = r.decodeExt(b, p); err != nil {
				return r, false, fmt.Errorf("offset %#x: %w", off, err)
			}
		}
		r.Payload = b[p:]
	case KindSystem, KindCompact, KindPerfInfo:
		r.HookID = uint16(b[7])<<8 | uint16(b[6])
		p := 0x10
		if r.Kind == KindPerfInfo {
			r.TimeStamp = int64(le.Uint64(b[8:]))
		} else {
			r.ThreadID, r.ProcessID = le.Uint32(b[8:]), le.Uint32(b[12:])
			r.TimeStamp = int64(le.Uint64(b[16:]))
			p = SystemHeaderSize
			if r.Kind == KindCompact {
				p = compactHeaderSize
			}
		}
		// [UNCERTAIN] order of the items: the PEBS index first, then the counters.
		if m&abi.TraceHeaderPEBS != 0 {
			p += 8
		}
		for i := 0; i < int(m&abi.TraceHeaderPMCMask>>abi.TraceHeaderPMCShift); i++ {
			r.PMC = append(r.PMC, le.Uint64(b[p:]))
			p += 8
		}
		r.Payload = b[p:]
	case KindFullHeader, KindInstance:
		// EVENT_TRACE_HEADER: Size, HeaderType, MarkerFlags, Class, ThreadId, ProcessId,
		// TimeStamp, then the GUID (or a pointer to it with WNODE_FLAG_USE_GUID_PTR).
		r.ThreadID, r.ProcessID = le.Uint32(b[8:]), le.Uint32(b[12:])
		r.TimeStamp = int64(le.Uint64(b[16:]))
		r.Provider = guid.FromBytes(b[24:40])
		r.Payload = b[fullHeaderSize:]
		if r.Kind == KindInstance {
			r.Payload = b[instanceHeaderSize:]
		}
	case KindMessage:
		r.Payload = b[messageHeaderSize:]
	case KindError:
		r.Payload = b[4:]
	}
	return r, true, nil
}

// decodeExt reads the extended items after the EVENT_HEADER of b from p, and returns
// where the user data starts. Each item is {USHORT size of the item (8-aligned, head
// included); USHORT ExtType; USHORT Linkage (bit 0: another item follows); USHORT
// DataSize}, as abi.PutExtItem writes it. [UNCERTAIN] see abi.PutExtItem.
func (r *Record) decodeExt(b []byte, p int) (int, error) {
	le := binary.LittleEndian
	for n := 0; ; n++ {
		if n == maxExtItems {
			return 0, fmt.Errorf("more than %d extended items", maxExtItems)
		}
		if len(b)-p < abi.ExtItemHeaderSize {
			return 0, fmt.Errorf("extended item at record offset %#x: head runs past the record's %#x bytes", p, len(b))
		}
		size := int(le.Uint16(b[p:]))
		typ := le.Uint16(b[p+2:])
		link := le.Uint16(b[p+4:])
		dsize := int(le.Uint16(b[p+6:]))
		if size < abi.ExtItemHeaderSize+dsize || size%8 != 0 || p+size > len(b) {
			return 0, fmt.Errorf("extended item at record offset %#x: size %#x for %#x data bytes does not fit the record's %#x bytes", p, size, dsize, len(b))
		}
		item := ExtItem{Type: typ, Data: b[p+abi.ExtItemHeaderSize : p+abi.ExtItemHeaderSize+dsize]}
		r.Ext = append(r.Ext, item)
		if typ == abi.ExtTypePMCCounters {
			for i := 0; i+8 <= len(item.Data); i += 8 {
				r.PMC = append(r.PMC, le.Uint64(item.Data[i:]))
			}
		}
		p += size
		if link&1 == 0 {
			return p, nil
		}
	}
}

// eventTraceHooks names the hooks of EVENT_TRACE_GROUP_HEADER (group 0) that files carry,
// as the kernel provider's consumers name them (EventTrace task, by opcode).
var eventTraceHooks = map[uint16]string{
	hookLogfileInfo:     "EventTrace/Header",
	HookHeaderExtension: "EventTrace/Extension",
	0x0008:              "EventTrace/RDComplete",
	0x0020:              "EventTrace/EndExtension",
	HookPartitionInfo:   "EventTrace/PartitionInfoExtension",
	HookDbgIDRSDS:       "EventTrace/DbgIdRsds",
	HookBuildLab:        "EventTrace/BuildLab",
}

// HookName returns the name of an EventTrace hook id, or "" for a hook of another group.
func HookName(hook uint16) string { return eventTraceHooks[hook] }

// HeaderExtension is the payload of EventTrace/Extension (hook 0x0005): the kernel group
// masks (PERFINFO_GROUPMASK) and KernelEventVersion.
type HeaderExtension struct {
	GroupMasks         [8]uint32
	KernelEventVersion uint32
}

// DecodeHeaderExtension decodes an EventTrace/Extension payload.
func DecodeHeaderExtension(p []byte) (HeaderExtension, error) {
	var x HeaderExtension
	if len(p) < headerExtensionSize {
		return x, fmt.Errorf("EventTrace/Extension payload of %d bytes, want %d", len(p), headerExtensionSize)
	}
	for i := range x.GroupMasks {
		x.GroupMasks[i] = binary.LittleEndian.Uint32(p[4*i:])
	}
	x.KernelEventVersion = binary.LittleEndian.Uint32(p[32:])
	return x, nil
}

// PartitionInfo is the payload of EventTrace/PartitionInfoExtension (hook 0x0050),
// ETW_TRACE_PARTITION_INFORMATION: the partition that traced (all zero on a host).
type PartitionInfo struct {
	PartitionID       guid.GUID
	ParentID          guid.GUID // GUID_NULL when the traced partition is the host
	QpcOffsetFromRoot int64
	PartitionType     uint32 // 1 process (Windows Server container), 2 VM host, 3 hosted UVM, 4 direct UVM
}

// DecodePartitionInfo decodes an EventTrace/PartitionInfoExtension payload.
func DecodePartitionInfo(p []byte) (PartitionInfo, error) {
	var x PartitionInfo
	if len(p) < partitionInfoSize-4 {
		return x, fmt.Errorf("EventTrace/PartitionInfoExtension payload of %d bytes, want %d", len(p), partitionInfoSize)
	}
	x.PartitionID = guid.FromBytes(p[0:16])
	x.ParentID = guid.FromBytes(p[16:32])
	x.QpcOffsetFromRoot = int64(binary.LittleEndian.Uint64(p[32:]))
	x.PartitionType = binary.LittleEndian.Uint32(p[40:])
	return x, nil
}

// DbgIDRSDS is the payload of EventTrace/DbgIdRsds (hook 0x0040): a binary's CodeView
// RSDS identity, as a debugger matches it to its PDB.
type DbgIDRSDS struct {
	Signature guid.GUID
	Age       uint32
	PdbName   string
}

// DecodeDbgIDRSDS decodes an EventTrace/DbgIdRsds payload: the GUID, the age and the
// NUL-terminated ANSI name of the PDB.
func DecodeDbgIDRSDS(p []byte) (DbgIDRSDS, error) {
	var x DbgIDRSDS
	if len(p) < 16+4+1 {
		return x, fmt.Errorf("EventTrace/DbgIdRsds payload of %d bytes, want at least %d", len(p), 16+4+1)
	}
	x.Signature = guid.FromBytes(p[0:16])
	x.Age = binary.LittleEndian.Uint32(p[16:])
	x.PdbName = ansiString(p[20:])
	return x, nil
}

// DecodeBuildLab decodes an EventTrace/BuildLab payload: one NUL-terminated ANSI string.
func DecodeBuildLab(p []byte) string { return ansiString(p) }

// ansiString returns p up to its first NUL (all of p if it has none).
func ansiString(p []byte) string {
	if i := bytes.IndexByte(p, 0); i >= 0 {
		p = p[:i]
	}
	return string(p)
}

// SealedRecords walks the records of a sealed buffer, up to its header's Offset (its
// filled bytes), as RecordsTo does.
func SealedRecords(buf []byte, fn func(Record) error) error {
	h, ok := abi.DecodeBufferHeader(buf)
	if !ok {
		return fmt.Errorf("etl: buffer of %d bytes is shorter than its header", len(buf))
	}
	return RecordsTo(buf, int(h.Offset), fn)
}

// RecordsTo walks the records of buffer data from the end of its header to end, as
// Buffer.Records does, for a buffer in memory: one sealed, or one still being filled,
// whose header is not written. A marker it does not know is an error naming the offset,
// not a KindUnknown record: the emulator's own buffers hold only the kinds it writes.
func RecordsTo(data []byte, end int, fn func(Record) error) error {
	if err := checkEnd(data, end); err != nil {
		return err
	}
	b := Buffer{Data: data[:end]}
	return b.Records(func(r Record) error {
		if r.Kind == KindUnknown {
			return fmt.Errorf("etl: unknown record marker %#08x at offset %#x", r.Marker, r.Offset)
		}
		return fn(r)
	})
}

// CountRecords counts the records of buffer data from the end of its header to end by
// their framing alone (kind and size, no field decoded), with RecordsTo's rules: a marker
// it does not know, or a size past end, is an error, and the count is of the records
// before it.
//
// An EVENT_HEADER, whose marker word holds its size, is framed from that one load, the
// rest by frameAt; TestCountRecordsMatchesFrameRecord holds the two to frameRecord's
// answers. A full 64 KB buffer of 64-byte events took 4.6 ns a record instead of 10.9
// (BenchmarkCountRecords, medians of five paired runs). The demo's counting sink did not
// get faster with it: there each buffer comes from the writers' caches, and reading its
// lines, not the walk's instructions, takes the logger's time (bench/HISTORY.md).
func CountRecords(data []byte, end int) (int, error) {
	if err := checkEnd(data, end); err != nil {
		return 0, err
	}
	n := 0
	for off := abi.BufferHeaderSize; off < end; n++ {
		if end-off >= 8 {
			// An EVENT_HEADER, the record a buffer holds most: its marker word is its size.
			if m := binary.LittleEndian.Uint32(data[off:]); m>>16 == eventMarker64 || m>>16 == eventMarker32 {
				if size := int(m & 0xFFFF); size >= abi.EventHeaderSize && size <= end-off {
					off += abi.Align(size)
					continue
				}
			}
		}
		if end-off >= 4 {
			if size, ok := frameAt(data, off, end); ok {
				off += abi.Align(size)
				continue
			}
		}
		// The end, or a record the walk stops at: frameRecord says which, and why.
		r, more, err := frameRecord(data, off, end)
		switch {
		case err != nil:
			return n, fmt.Errorf("etl: %w", err)
		case r.Kind == KindUnknown:
			return n, fmt.Errorf("etl: unknown record marker %#08x at offset %#x", r.Marker, r.Offset)
		case !more:
			return n, nil
		}
		off += abi.Align(r.Size)
	}
	return n, nil
}

// The high halves of an EVENT_HEADER's marker word (its HeaderType and Flags bytes), by
// pointer size: CountRecords' fast path.
const (
	eventMarker64 = flagsHeader<<8 | typeEvent64
	eventMarker32 = flagsHeader<<8 | typeEvent32
)

// checkEnd refuses an end of data that a buffer of len(data) bytes cannot have.
func checkEnd(data []byte, end int) error {
	if end < abi.BufferHeaderSize || end > len(data) {
		return fmt.Errorf("etl: buffer Offset %#x outside [%#x, %#x]", end, abi.BufferHeaderSize, len(data))
	}
	return nil
}
