package abi

import (
	"encoding/binary"
	"strconv"
)

// BufferHeaderSize is sizeof(WMI_BUFFER_HEADER) on every Windows version from 5.0 on.
const BufferHeaderSize = 0x48

// Offsets of the WMI_BUFFER_HEADER members (phnt ntwmi.h; Chappell, wmi_buffer_header).
const (
	OffBufferSize     = 0x00 // ULONG BufferSize
	OffSavedOffset    = 0x04 // ULONG SavedOffset
	OffCurrentOffset  = 0x08 // volatile ULONG CurrentOffset
	OffReferenceCount = 0x0C // volatile LONG ReferenceCount
	OffTimeStamp      = 0x10 // LARGE_INTEGER TimeStamp
	OffSequenceNumber = 0x18 // LONGLONG SequenceNumber
	OffClockFrequency = 0x20 // ClockType:3, Frequency:61 (6.2+) / SlistEntry / NextBuffer
	OffClientContext  = 0x28 // ETW_BUFFER_CONTEXT
	OffState          = 0x2C // ETW_BUFFER_STATE
	OffOffset         = 0x30 // ULONG Offset (filled bytes)
	OffBufferFlag     = 0x34 // USHORT BufferFlag
	OffBufferType     = 0x36 // USHORT BufferType
	OffReferenceTime  = 0x38 // ETW_REF_CLOCK {StartTime, StartPerfClock} / Padding1 / GlobalEntry
)

// BufferState is ETW_BUFFER_STATE.
type BufferState uint32

// ETW_BUFFER_STATE values (phnt; Chappell for the Windows 10 additions).
const (
	BufferStateFree               BufferState = 0 // EtwBufferStateFree
	BufferStateGeneralLogging     BufferState = 1 // EtwBufferStateGeneralLogging
	BufferStateCSwitch            BufferState = 2 // EtwBufferStateCSwitch
	BufferStateFlush              BufferState = 3 // EtwBufferStateFlush
	BufferStatePendingCompression BufferState = 4 // EtwBufferStatePendingCompression
	BufferStateCompressed         BufferState = 5 // EtwBufferStateCompressed
	BufferStatePlaceholder        BufferState = 6 // EtwBufferStatePlaceholder
)

var bufferStateNames = [...]string{"Free", "GeneralLogging", "CSwitch", "Flush", "PendingCompression", "Compressed", "Placeholder"}

func (s BufferState) String() string {
	if int(s) < len(bufferStateNames) {
		return bufferStateNames[s]
	}
	return "BufferState(" + itoa(uint64(s)) + ")"
}

// ETW_BUFFER_FLAG_* values (phnt).
const (
	BufferFlagNormal          = 0x0000 // ETW_BUFFER_FLAG_NORMAL
	BufferFlagFlushMarker     = 0x0001 // ETW_BUFFER_FLAG_FLUSH_MARKER
	BufferFlagEventsLost      = 0x0002 // ETW_BUFFER_FLAG_EVENTS_LOST
	BufferFlagBufferLost      = 0x0004 // ETW_BUFFER_FLAG_BUFFER_LOST
	BufferFlagRTBackupCorrupt = 0x0008 // ETW_BUFFER_FLAG_RTBACKUP_CORRUPT
	BufferFlagRTBackup        = 0x0010 // ETW_BUFFER_FLAG_RTBACKUP
	BufferFlagProcIndex       = 0x0020 // ETW_BUFFER_FLAG_PROC_INDEX
	BufferFlagCompressed      = 0x0040 // ETW_BUFFER_FLAG_COMPRESSED
)

// ETW_BUFFER_TYPE_* values (phnt).
const (
	BufferTypeGeneric     = 0 // ETW_BUFFER_TYPE_GENERIC
	BufferTypeRundown     = 1 // ETW_BUFFER_TYPE_RUNDOWN
	BufferTypeCtxSwap     = 2 // ETW_BUFFER_TYPE_CTX_SWAP
	BufferTypeRefTime     = 3 // ETW_BUFFER_TYPE_REFTIME
	BufferTypeHeader      = 4 // ETW_BUFFER_TYPE_HEADER
	BufferTypeBatched     = 5 // ETW_BUFFER_TYPE_BATCHED
	BufferTypeEmptyMarker = 6 // ETW_BUFFER_TYPE_EMPTY_MARKER
	BufferTypeDbgInfo     = 7 // ETW_BUFFER_TYPE_DBG_INFO
)

var bufferFlagNames = [...]string{"FLUSH_MARKER", "EVENTS_LOST", "BUFFER_LOST", "RTBACKUP_CORRUPT", "RTBACKUP", "PROC_INDEX", "COMPRESSED"}

// BufferFlagNames returns a BufferFlag as its ETW_BUFFER_FLAG_ names without the prefix,
// joined by "|" ("NORMAL" for 0; unknown bits in hex).
func BufferFlagNames(f uint16) string {
	if f == BufferFlagNormal {
		return "NORMAL"
	}
	s := ""
	for i, name := range bufferFlagNames {
		if f&(1<<i) != 0 {
			s += "|" + name
			f &^= 1 << i
		}
	}
	if f != 0 {
		s += "|0x" + strconv.FormatUint(uint64(f), 16)
	}
	return s[1:]
}

var bufferTypeNames = [...]string{"GENERIC", "RUNDOWN", "CTX_SWAP", "REFTIME", "HEADER", "BATCHED", "EMPTY_MARKER", "DBG_INFO"}

// BufferTypeName returns a BufferType's ETW_BUFFER_TYPE_ name without the prefix.
func BufferTypeName(t uint16) string {
	if int(t) < len(bufferTypeNames) {
		return bufferTypeNames[t]
	}
	return "BufferType(" + itoa(uint64(t)) + ")"
}

// TraceAlignment is the record alignment (DEFAULT_TRACE_ALIGNMENT); it is also written
// into ETW_BUFFER_CONTEXT.Alignment.
const TraceAlignment = 8

// KernelLoggerBufferID is the LoggerId that buffers of logger 0, the NT Kernel Logger,
// carry in their ClientContext (KERNEL_LOGGER_ID).
const KernelLoggerBufferID = 0xFFFF

// BufferHeader is WMI_BUFFER_HEADER as plain values, for encoding into and decoding from
// the first 0x48 bytes of a buffer. The live buffer keeps CurrentOffset and
// ReferenceCount in atomics; this struct is a snapshot.
type BufferHeader struct {
	BufferSize     uint32
	SavedOffset    uint32
	CurrentOffset  uint32
	ReferenceCount int32
	TimeStamp      int64
	SequenceNumber int64
	// ClockFrequency is the 8 bytes at 0x20: ClockType in bits 0-2 and Frequency in bits
	// 3-63 (6.2+), or the list link while the buffer is queued.
	ClockFrequency uint64
	// ClientContext: ETW_BUFFER_CONTEXT. ProcessorIndex is ProcessorNumber (low byte) and
	// Alignment (high byte) read together, as 6.2+ does with ETW_BUFFER_FLAG_PROC_INDEX.
	ProcessorNumber uint8
	Alignment       uint8
	LoggerID        uint16
	State           BufferState
	Offset          uint32
	BufferFlag      uint16
	BufferType      uint16
	// ReferenceTime is ETW_REF_CLOCK: system time (FILETIME) and raw clock at one instant.
	StartTime      int64
	StartPerfClock int64
}

// ProcessorIndex is ETW_BUFFER_CONTEXT's processor as EVENT_RECORD.BufferContext gives
// it: ProcessorNumber and Alignment read as one USHORT when the buffer has
// ETW_BUFFER_FLAG_PROC_INDEX (6.2 and later), else ProcessorNumber alone (Alignment is
// then the record alignment, not part of the number).
func (h *BufferHeader) ProcessorIndex() int {
	if h.BufferFlag&BufferFlagProcIndex == 0 {
		return int(h.ProcessorNumber)
	}
	return int(h.ProcessorNumber) | int(h.Alignment)<<8
}

// Encode writes h into the first BufferHeaderSize bytes of b.
func (h *BufferHeader) Encode(b []byte) {
	_ = b[BufferHeaderSize-1]
	le := binary.LittleEndian
	le.PutUint32(b[OffBufferSize:], h.BufferSize)
	le.PutUint32(b[OffSavedOffset:], h.SavedOffset)
	le.PutUint32(b[OffCurrentOffset:], h.CurrentOffset)
	le.PutUint32(b[OffReferenceCount:], uint32(h.ReferenceCount))
	le.PutUint64(b[OffTimeStamp:], uint64(h.TimeStamp))
	le.PutUint64(b[OffSequenceNumber:], uint64(h.SequenceNumber))
	le.PutUint64(b[OffClockFrequency:], h.ClockFrequency)
	b[OffClientContext] = h.ProcessorNumber
	b[OffClientContext+1] = h.Alignment
	le.PutUint16(b[OffClientContext+2:], h.LoggerID)
	le.PutUint32(b[OffState:], uint32(h.State))
	le.PutUint32(b[OffOffset:], h.Offset)
	le.PutUint16(b[OffBufferFlag:], h.BufferFlag)
	le.PutUint16(b[OffBufferType:], h.BufferType)
	le.PutUint64(b[OffReferenceTime:], uint64(h.StartTime))
	le.PutUint64(b[OffReferenceTime+8:], uint64(h.StartPerfClock))
}

// DecodeBufferHeader reads a WMI_BUFFER_HEADER from the first BufferHeaderSize bytes of b.
// It returns false when b is shorter than a header.
func DecodeBufferHeader(b []byte) (BufferHeader, bool) {
	if len(b) < BufferHeaderSize {
		return BufferHeader{}, false
	}
	le := binary.LittleEndian
	return BufferHeader{
		BufferSize:      le.Uint32(b[OffBufferSize:]),
		SavedOffset:     le.Uint32(b[OffSavedOffset:]),
		CurrentOffset:   le.Uint32(b[OffCurrentOffset:]),
		ReferenceCount:  int32(le.Uint32(b[OffReferenceCount:])),
		TimeStamp:       int64(le.Uint64(b[OffTimeStamp:])),
		SequenceNumber:  int64(le.Uint64(b[OffSequenceNumber:])),
		ClockFrequency:  le.Uint64(b[OffClockFrequency:]),
		ProcessorNumber: b[OffClientContext],
		Alignment:       b[OffClientContext+1],
		LoggerID:        le.Uint16(b[OffClientContext+2:]),
		State:           BufferState(le.Uint32(b[OffState:])),
		Offset:          le.Uint32(b[OffOffset:]),
		BufferFlag:      le.Uint16(b[OffBufferFlag:]),
		BufferType:      le.Uint16(b[OffBufferType:]),
		StartTime:       int64(le.Uint64(b[OffReferenceTime:])),
		StartPerfClock:  int64(le.Uint64(b[OffReferenceTime+8:])),
	}, true
}

// ClockFrequency packs a clock type (3 bits) and frequency (61 bits) the way 6.2+ stores
// them at offset 0x20.
func ClockFrequency(clockType uint32, frequency int64) uint64 {
	return uint64(clockType)&7 | uint64(frequency)<<3
}

func itoa(v uint64) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + v%10)
		v /= 10
		if v == 0 {
			return string(b[i:])
		}
	}
}

// FillUnused fills b, the bytes of a buffer past its filled bytes, with 0xFF, as ETW
// leaves them. It copies a 4 KB block at a time rather than writing a byte at a time.
func FillUnused(b []byte) {
	for len(b) > 0 {
		b = b[copy(b, unusedBlock[:]):]
	}
}

// unusedBlock is the 0xFF that FillUnused copies.
var unusedBlock = func() (b [4096]byte) {
	for i := range b {
		b[i] = 0xFF
	}
	return
}()
