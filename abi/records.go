package abi

import "encoding/binary"

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
