package abi

import (
	"encoding/binary"
	"strconv"

	"github.com/etwemu/etwemu/guid"
)

// EventHeaderSize is sizeof(EVENT_HEADER), the same for 32- and 64-bit records.
const EventHeaderSize = 0x50

// MaxEventSize is the largest record ETW can hold: EVENT_HEADER.Size is a USHORT
// (MAX_ETW_EVENT_SIZE 0xFFFF).
const MaxEventSize = 0xFFFF

// HeaderType values stored in the second USHORT of an EVENT_HEADER record in a buffer.
const (
	EventHeaderEvent64 = 0xC013 // EVENT_HEADER_EVENT64: flags 0xC0, type 0x13
	EventHeaderEvent32 = 0xC012 // EVENT_HEADER_EVENT32
	EventHeaderError   = 0xC00D // EVENT_HEADER_ERROR
)

// EVENT_HEADER_FLAG_* values (evntcons.h).
const (
	EventFlagExtendedInfo   = 0x0001 // EVENT_HEADER_FLAG_EXTENDED_INFO
	EventFlagPrivateSession = 0x0002 // EVENT_HEADER_FLAG_PRIVATE_SESSION
	EventFlagStringOnly     = 0x0004 // EVENT_HEADER_FLAG_STRING_ONLY
	EventFlagTraceMessage   = 0x0008 // EVENT_HEADER_FLAG_TRACE_MESSAGE
	EventFlagNoCPUTime      = 0x0010 // EVENT_HEADER_FLAG_NO_CPUTIME
	EventFlag32BitHeader    = 0x0020 // EVENT_HEADER_FLAG_32_BIT_HEADER
	EventFlag64BitHeader    = 0x0040 // EVENT_HEADER_FLAG_64_BIT_HEADER
	EventFlagDecodeGUID     = 0x0080 // EVENT_HEADER_FLAG_DECODE_GUID
	EventFlagClassicHeader  = 0x0100 // EVENT_HEADER_FLAG_CLASSIC_HEADER
	EventFlagProcessorIndex = 0x0200 // EVENT_HEADER_FLAG_PROCESSOR_INDEX
)

// Offsets of the EVENT_HEADER members.
const (
	OffEventSize       = 0x00 // USHORT Size
	OffEventHeaderType = 0x02 // USHORT HeaderType
	OffEventFlags      = 0x04 // USHORT Flags
	OffEventProperty   = 0x06 // USHORT EventProperty
	OffEventThreadID   = 0x08 // ULONG ThreadId
	OffEventProcessID  = 0x0C // ULONG ProcessId
	OffEventTimeStamp  = 0x10 // LARGE_INTEGER TimeStamp
	OffEventProviderID = 0x18 // GUID ProviderId
	OffEventDescriptor = 0x28 // EVENT_DESCRIPTOR
	OffEventCPUTime    = 0x38 // KernelTime/UserTime or ProcessorTime
	OffEventActivityID = 0x40 // GUID ActivityId
)

// EventDescriptor is EVENT_DESCRIPTOR: what a provider says about one event.
type EventDescriptor struct {
	ID      uint16
	Version uint8
	Channel uint8
	Level   uint8
	Opcode  uint8
	Task    uint16
	Keyword uint64
}

// EventHeader is EVENT_HEADER as plain values.
type EventHeader struct {
	Size          uint16
	HeaderType    uint16
	Flags         uint16
	EventProperty uint16
	ThreadID      uint32
	ProcessID     uint32
	TimeStamp     int64
	ProviderID    guid.GUID
	Descriptor    EventDescriptor
	// ProcessorTime is KernelTime (low 32 bits) and UserTime (high 32 bits), or the
	// ProcessorTime of private sessions.
	ProcessorTime uint64
	ActivityID    guid.GUID
}

// Encode writes h into the first EventHeaderSize bytes of b.
func (h *EventHeader) Encode(b []byte) {
	_ = b[EventHeaderSize-1]
	le := binary.LittleEndian
	le.PutUint16(b[OffEventSize:], h.Size)
	le.PutUint16(b[OffEventHeaderType:], h.HeaderType)
	le.PutUint16(b[OffEventFlags:], h.Flags)
	le.PutUint16(b[OffEventProperty:], h.EventProperty)
	le.PutUint32(b[OffEventThreadID:], h.ThreadID)
	le.PutUint32(b[OffEventProcessID:], h.ProcessID)
	le.PutUint64(b[OffEventTimeStamp:], uint64(h.TimeStamp))
	h.ProviderID.Put(b[OffEventProviderID:])
	d := &h.Descriptor
	le.PutUint16(b[OffEventDescriptor:], d.ID)
	b[OffEventDescriptor+2] = d.Version
	b[OffEventDescriptor+3] = d.Channel
	b[OffEventDescriptor+4] = d.Level
	b[OffEventDescriptor+5] = d.Opcode
	le.PutUint16(b[OffEventDescriptor+6:], d.Task)
	le.PutUint64(b[OffEventDescriptor+8:], d.Keyword)
	le.PutUint64(b[OffEventCPUTime:], h.ProcessorTime)
	h.ActivityID.Put(b[OffEventActivityID:])
}

// DecodeEventHeader reads an EVENT_HEADER from the first EventHeaderSize bytes of b.
func DecodeEventHeader(b []byte) (EventHeader, bool) {
	if len(b) < EventHeaderSize {
		return EventHeader{}, false
	}
	le := binary.LittleEndian
	return EventHeader{
		Size:          le.Uint16(b[OffEventSize:]),
		HeaderType:    le.Uint16(b[OffEventHeaderType:]),
		Flags:         le.Uint16(b[OffEventFlags:]),
		EventProperty: le.Uint16(b[OffEventProperty:]),
		ThreadID:      le.Uint32(b[OffEventThreadID:]),
		ProcessID:     le.Uint32(b[OffEventProcessID:]),
		TimeStamp:     int64(le.Uint64(b[OffEventTimeStamp:])),
		ProviderID:    guid.FromBytes(b[OffEventProviderID:]),
		Descriptor: EventDescriptor{
			ID:      le.Uint16(b[OffEventDescriptor:]),
			Version: b[OffEventDescriptor+2],
			Channel: b[OffEventDescriptor+3],
			Level:   b[OffEventDescriptor+4],
			Opcode:  b[OffEventDescriptor+5],
			Task:    le.Uint16(b[OffEventDescriptor+6:]),
			Keyword: le.Uint64(b[OffEventDescriptor+8:]),
		},
		ProcessorTime: le.Uint64(b[OffEventCPUTime:]),
		ActivityID:    guid.FromBytes(b[OffEventActivityID:]),
	}, true
}

// EVENT_HEADER_EXT_TYPE_* values (evntcons.h).
const (
	ExtTypeRelatedActivityID = 0x0001 // EVENT_HEADER_EXT_TYPE_RELATED_ACTIVITYID
	ExtTypeSID               = 0x0002 // EVENT_HEADER_EXT_TYPE_SID
	ExtTypeTSID              = 0x0003 // EVENT_HEADER_EXT_TYPE_TS_ID
	ExtTypeInstanceInfo      = 0x0004 // EVENT_HEADER_EXT_TYPE_INSTANCE_INFO
	ExtTypeStackTrace32      = 0x0005 // EVENT_HEADER_EXT_TYPE_STACK_TRACE32
	ExtTypeStackTrace64      = 0x0006 // EVENT_HEADER_EXT_TYPE_STACK_TRACE64
	ExtTypePEBSIndex         = 0x0007 // EVENT_HEADER_EXT_TYPE_PEBS_INDEX
	ExtTypePMCCounters       = 0x0008 // EVENT_HEADER_EXT_TYPE_PMC_COUNTERS
	ExtTypeEventKey          = 0x000A // EVENT_HEADER_EXT_TYPE_EVENT_KEY
	ExtTypeEventSchemaTL     = 0x000B // EVENT_HEADER_EXT_TYPE_EVENT_SCHEMA_TL
	ExtTypeProvTraits        = 0x000C // EVENT_HEADER_EXT_TYPE_PROV_TRAITS
	ExtTypeProcessStartKey   = 0x000D // EVENT_HEADER_EXT_TYPE_PROCESS_START_KEY
)

// extTypeNames names every EVENT_HEADER_EXT_TYPE_* value evntcons.h has.
var extTypeNames = [...]string{
	1: "RELATED_ACTIVITYID", 2: "SID", 3: "TS_ID", 4: "INSTANCE_INFO", 5: "STACK_TRACE32", 6: "STACK_TRACE64",
	7: "PEBS_INDEX", 8: "PMC_COUNTERS", 9: "PSM_KEY", 10: "EVENT_KEY", 11: "EVENT_SCHEMA_TL", 12: "PROV_TRAITS",
	13: "PROCESS_START_KEY", 14: "CONTROL_GUID", 15: "QPC_DELTA", 16: "CONTAINER_ID", 17: "STACK_KEY32", 18: "STACK_KEY64",
}

// ExtTypeName names an extended item type without its EVENT_HEADER_EXT_TYPE_ prefix
// ("PROV_TRAITS"), or gives its number in hexadecimal for a type evntcons.h does not have.
func ExtTypeName(t uint16) string {
	if int(t) < len(extTypeNames) && extTypeNames[t] != "" {
		return extTypeNames[t]
	}
	return "0x" + strconv.FormatUint(uint64(t), 16)
}

// ExtItemHeaderSize is the size of the head of an extended data item in a buffer.
const ExtItemHeaderSize = 8

// ExtItemSize is the in-buffer size of an extended item carrying dataSize bytes: the
// 8-byte head plus the data, rounded up to 8.
func ExtItemSize(dataSize int) int { return Align(ExtItemHeaderSize + dataSize) }

// PutExtItem writes one extended data item at the start of b and returns its size.
//
// [UNCERTAIN] The in-buffer head is read as {USHORT ItemSize (8-aligned, head included);
// USHORT ExtType; USHORT Linkage (bit 0: another item follows); USHORT DataSize}. That
// reconciles dissect.etl (which walks by ItemSize) and etl-parser (which follows Linkage);
// no public Windows source states it.
func PutExtItem(b []byte, extType uint16, more bool, data []byte) int {
	n := ExtItemSize(len(data))
	le := binary.LittleEndian
	le.PutUint16(b[0:], uint16(n))
	le.PutUint16(b[2:], extType)
	var link uint16
	if more {
		link = 1
	}
	le.PutUint16(b[4:], link)
	le.PutUint16(b[6:], uint16(len(data)))
	copy(b[8:], data)
	clear(b[8+len(data) : n])
	return n
}

// Align rounds n up to the trace alignment of 8 bytes: a record's size in the buffer.
func Align[T ~int | ~uint32](n T) T { return (n + TraceAlignment - 1) &^ (TraceAlignment - 1) }
