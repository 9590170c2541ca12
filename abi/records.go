package abi

import (
	"encoding/binary"
	"fmt"
)

// Record is one record found in a sealed buffer.
type Record struct {
	Offset int    // byte offset of the record in the buffer
	Size   int    // stored (unpadded) size
	Type   uint16 // the marker word: EventHeaderEvent64 for EVENT_HEADER records
	Bytes  []byte // the record's Size bytes
}

// SYSTEM_TRACE_HEADER, the header of kernel (system) events, x64 form: the marker
// ULONG (version 2 in the low byte, PMC and PEBS item bits above it, then 0xC002), the
// USHORT size, the hook id, thread and process id, the timestamp, kernel and user time.
const (
	SystemHeaderSize    = 0x20
	SystemHeaderType64  = 0xC002     // the marker's high word: flags 0xC0, TRACE_HEADER_TYPE_SYSTEM64
	SystemTraceMarker64 = 0xC0020002 // SYSTEM_TRACE_MARKER64
	OffSystemSize       = 0x04
	OffSystemHookID     = 0x06
	OffSystemThreadID   = 0x08
	OffSystemProcessID  = 0x0C
	OffSystemTimeStamp  = 0x10
)

// SystemHeader is SYSTEM_TRACE_HEADER, the fixed header of kernel (system) events and of
// the log-file header event, x64 form.
type SystemHeader struct {
	Marker     uint32 // SystemTraceMarker64, plus PMC/PEBS item bits
	Size       uint16 // Packet.Size: the whole record, unpadded
	HookID     uint16 // Packet.Group<<8 | Packet.Type
	ThreadID   uint32
	ProcessID  uint32
	SystemTime int64 // the session clock
	KernelTime uint32
	UserTime   uint32
}

// Encode writes h into the first SystemHeaderSize bytes of b.
func (h *SystemHeader) Encode(b []byte) {
	_ = b[SystemHeaderSize-1]
	le := binary.LittleEndian
	le.PutUint32(b[0x00:], h.Marker)
	le.PutUint16(b[OffSystemSize:], h.Size)
	le.PutUint16(b[OffSystemHookID:], h.HookID) // Packet.Type, then Packet.Group
	le.PutUint32(b[OffSystemThreadID:], h.ThreadID)
	le.PutUint32(b[OffSystemProcessID:], h.ProcessID)
	le.PutUint64(b[OffSystemTimeStamp:], uint64(h.SystemTime))
	le.PutUint32(b[0x18:], h.KernelTime)
	le.PutUint32(b[0x1C:], h.UserTime)
}

// Marker bits for the items that follow a system header (phnt): the PMC counter count
// (TRACE_HEADER_PMC_COUNTERS_MASK, shift 8) and the PEBS index flag.
const (
	TraceHeaderPMCMask  = 0x0700
	TraceHeaderPMCShift = 8
	TraceHeaderPEBS     = 0x8000
)

// SystemItemsSize is the size of the items a system header's marker announces: 8 bytes
// per PMC counter, 8 for a PEBS index.
func SystemItemsSize(marker uint32) int {
	n := 8 * int(marker&TraceHeaderPMCMask>>TraceHeaderPMCShift)
	if marker&TraceHeaderPEBS != 0 {
		n += 8
	}
	return n
}

// Records walks the records of a sealed buffer: from the end of the header to the
// header's Offset (filled bytes), stepping by each record's size rounded up to 8. It
// understands the kinds the emulator writes, EVENT_HEADER and SYSTEM_TRACE_HEADER
// records, and stops with an error naming the offset at anything else or at a size that
// runs past the filled bytes.
func Records(buf []byte, fn func(Record) error) error {
	h, ok := DecodeBufferHeader(buf)
	if !ok {
		return fmt.Errorf("abi: buffer of %d bytes is shorter than its header", len(buf))
	}
	return RecordsTo(buf, int(h.Offset), fn)
}

// RecordsTo walks the records of buf from the end of the header to end, as Records does
// for a sealed buffer; it serves buffers still being filled, whose header is not written.
func RecordsTo(buf []byte, end int, fn func(Record) error) error {
	if end < BufferHeaderSize || end > len(buf) {
		return fmt.Errorf("abi: buffer Offset %#x outside [%#x, %#x]", end, BufferHeaderSize, len(buf))
	}
	for off := BufferHeaderSize; off < end; {
		if end-off < 4 {
			return fmt.Errorf("abi: %d stray bytes at offset %#x", end-off, off)
		}
		size := int(binary.LittleEndian.Uint16(buf[off:]))
		typ := binary.LittleEndian.Uint16(buf[off+2:])
		least := EventHeaderSize
		switch typ {
		case EventHeaderEvent64, EventHeaderEvent32:
		case SystemHeaderType64:
			if end-off < SystemHeaderSize {
				return fmt.Errorf("abi: system header at offset %#x runs past filled bytes %#x", off, end)
			}
			size = int(binary.LittleEndian.Uint16(buf[off+OffSystemSize:]))
			least = SystemHeaderSize + SystemItemsSize(binary.LittleEndian.Uint32(buf[off:]))
		default:
			return fmt.Errorf("abi: unknown record marker %#04x at offset %#x", typ, off)
		}
		if size < least || off+size > end {
			return fmt.Errorf("abi: record at offset %#x has size %#x, past filled bytes %#x", off, size, end)
		}
		if err := fn(Record{Offset: off, Size: size, Type: typ, Bytes: buf[off : off+size]}); err != nil {
			return err
		}
		off += Align(size)
	}
	return nil
}
