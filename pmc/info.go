package pmc

import (
	"encoding/binary"

	"github.com/etwemu/etwemu/guid"
)

// Information classes of the two ways in.
const (
	// SystemPerformanceTraceInformation is the SYSTEM_INFORMATION_CLASS that
	// NtSetSystemInformation takes for ETW's system-logger settings.
	SystemPerformanceTraceInformation = 0x1F
	// EVENT_TRACE_INFORMATION_CLASS values, the first ULONG of its buffer.
	EventTraceProfileEventListInformation   = 0x0E // EVENT_TRACE_PROFILE_EVENT_INFORMATION: hook ids
	EventTraceProfileCounterListInformation = 0x0F // EVENT_TRACE_PROFILE_COUNTER_INFORMATION: sources

	// TRACE_INFO_CLASS values of TraceSetInformation and TraceQueryInformation.
	TracePmcEventListInfo   = 8  // CLASSIC_EVENT_ID array
	TracePmcCounterListInfo = 9  // ULONG array of profile sources
	TraceMaxPmcCounterQuery = 22 // ULONG out: counters per processor (1903+)
)

// ListHeaderSize is the fixed part of EVENT_TRACE_PROFILE_COUNTER_INFORMATION and of
// EVENT_TRACE_SYSTEM_EVENT_INFORMATION (which EVENT_TRACE_PROFILE_EVENT_INFORMATION is):
// EventTraceInformationClass (ULONG, padded), TraceHandle (TRACEHANDLE), then the ULONG
// array. 0x18 bytes with one element, on x86 and x64 alike.
const ListHeaderSize = 0x10

// ClassicEventIDSize is sizeof(CLASSIC_EVENT_ID): GUID EventGuid, UCHAR Type, UCHAR
// Reserved[7].
const ClassicEventIDSize = 0x18

// CounterInformation builds the EVENT_TRACE_PROFILE_COUNTER_INFORMATION buffer that
// nominates sources for the logger with handle h.
func CounterInformation(h uint64, sources ...ProfileSource) []byte {
	v := make([]uint32, len(sources))
	for i, s := range sources {
		v[i] = uint32(s)
	}
	return listInformation(EventTraceProfileCounterListInformation, h, v)
}

// EventInformation builds the EVENT_TRACE_PROFILE_EVENT_INFORMATION buffer that selects
// hook ids for the logger with handle h.
func EventInformation(h uint64, hooks ...uint32) []byte {
	return listInformation(EventTraceProfileEventListInformation, h, hooks)
}

func listInformation(class uint32, h uint64, v []uint32) []byte {
	b := make([]byte, ListHeaderSize+4*len(v))
	le := binary.LittleEndian
	le.PutUint32(b, class)
	le.PutUint64(b[8:], h)
	for i, x := range v {
		le.PutUint32(b[ListHeaderSize+4*i:], x)
	}
	return b
}

// ParseInformation reads a SystemPerformanceTraceInformation buffer of one of the two PMC
// classes: the class, the trace handle and the ULONG list. Refusals: ERROR_BAD_LENGTH
// (STATUS_INFO_LENGTH_MISMATCH) for a buffer shorter than one element or not a whole
// number of ULONGs; ERROR_NOT_SUPPORTED (STATUS_INVALID_INFO_CLASS) for another class.
func ParseInformation(b []byte) (class uint32, h uint64, list []uint32, err *Refusal) {
	if len(b) < 4 {
		return 0, 0, nil, Refuse(RuleLength, "%d bytes hold no EVENT_TRACE_INFORMATION_CLASS", len(b))
	}
	le := binary.LittleEndian
	class = le.Uint32(b)
	if class != EventTraceProfileCounterListInformation && class != EventTraceProfileEventListInformation {
		return class, 0, nil, Refuse(RuleUnsupported, "EVENT_TRACE_INFORMATION_CLASS %#x is not emulated (only 0x0E and 0x0F, the PMC lists)", class)
	}
	if len(b) == ListHeaderSize {
		return class, 0, nil, Refuse(RuleLength, "%d bytes are the %#x-byte header and an empty list: the information takes at least one ULONG", len(b), ListHeaderSize)
	}
	if len(b) < ListHeaderSize+4 || (len(b)-ListHeaderSize)%4 != 0 {
		return class, 0, nil, Refuse(RuleLength, "%d bytes are not the %#x-byte header and a whole number of ULONGs", len(b), ListHeaderSize)
	}
	h = le.Uint64(b[8:])
	list, _ = ParseULONGs(b[ListHeaderSize:])
	return class, h, list, nil
}

// ULONGs builds a ULONG array, as TracePmcCounterListInfo takes its profile sources; the
// inverse of ParseULONGs.
func ULONGs(v ...uint32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], x)
	}
	return b
}

// ParseULONGs reads the ULONG array TracePmcCounterListInfo takes. Refusal:
// ERROR_BAD_LENGTH for an empty buffer or one that is not a whole number of ULONGs.
func ParseULONGs(b []byte) ([]uint32, *Refusal) {
	if len(b) == 0 {
		return nil, Refuse(RuleLength, "an empty list: the information takes at least one ULONG")
	}
	if len(b)%4 != 0 {
		return nil, Refuse(RuleLength, "%d bytes are not a whole number of ULONGs", len(b))
	}
	v := make([]uint32, len(b)/4)
	for i := range v {
		v[i] = binary.LittleEndian.Uint32(b[4*i:])
	}
	return v, nil
}

// ClassicEventID is CLASSIC_EVENT_ID: a kernel event named by its event class GUID and
// its type (opcode).
type ClassicEventID struct {
	EventGUID guid.GUID
	Type      uint8
}

// ClassicEventIDs builds the CLASSIC_EVENT_ID array TracePmcEventListInfo takes.
func ClassicEventIDs(ids ...ClassicEventID) []byte {
	b := make([]byte, ClassicEventIDSize*len(ids))
	for i, id := range ids {
		id.EventGUID.Put(b[ClassicEventIDSize*i:])
		b[ClassicEventIDSize*i+16] = id.Type
	}
	return b
}

// ParseClassicEventIDs reads a CLASSIC_EVENT_ID array and turns each into the hook id
// the kernel keeps: the event class's group in the high byte, the type in the low byte.
// Refusals: ERROR_BAD_LENGTH for a buffer that is not whole CLASSIC_EVENT_IDs;
// ERROR_INVALID_PARAMETER for a GUID that is not a kernel event class.
func ParseClassicEventIDs(b []byte) ([]uint32, *Refusal) {
	if len(b) == 0 || len(b)%ClassicEventIDSize != 0 {
		return nil, Refuse(RuleLength, "%d bytes are not a whole number of %#x-byte CLASSIC_EVENT_IDs", len(b), ClassicEventIDSize)
	}
	hooks := make([]uint32, len(b)/ClassicEventIDSize)
	for i := range hooks {
		g := guid.FromBytes(b[ClassicEventIDSize*i : ClassicEventIDSize*i+16])
		group, ok := kernelGroup(g)
		if !ok {
			return nil, Refuse(RuleInvalid, "CLASSIC_EVENT_ID %d: %v is not a kernel event class; PMCs are collected on system events", i, g)
		}
		hooks[i] = uint32(HookID(group, b[ClassicEventIDSize*i+16]))
	}
	return hooks, nil
}

// HookID is a system event's hook id: EVENT_TRACE_GROUP_* (the group byte) and the type.
func HookID(group, typ uint8) uint16 { return uint16(group)<<8 | uint16(typ) }

// Kernel event classes (evntrace.h) and their EVENT_TRACE_GROUP_* (ntwmi.h), the map
// ADVAPI uses to turn a CLASSIC_EVENT_ID into a hook id.
var (
	EventTraceGUID = guid.MustParse("68fdd900-4a3e-11d1-84f4-0000f80464e3")
	DiskIoGUID     = guid.MustParse("3d6fa8d4-fe05-11d0-9dda-00c04fd7ba7c")
	PageFaultGUID  = guid.MustParse("3d6fa8d3-fe05-11d0-9dda-00c04fd7ba7c")
	ProcessGUID    = guid.MustParse("3d6fa8d0-fe05-11d0-9dda-00c04fd7ba7c")
	FileIoGUID     = guid.MustParse("90cbdc39-4a3e-11d1-84f4-0000f80464e3")
	ThreadGUID     = guid.MustParse("3d6fa8d1-fe05-11d0-9dda-00c04fd7ba7c")
	TcpIpGUID      = guid.MustParse("9a280ac0-c8e0-11d1-84e2-00c04fb998a2")
	UdpIpGUID      = guid.MustParse("bf3a50c5-a9c9-4988-a005-2df0b7c80f80")
	RegistryGUID   = guid.MustParse("ae53722e-c863-11d2-8659-00c04fa321a1")
	PerfInfoGUID   = guid.MustParse("ce1dbfb4-137e-4da6-87b0-3f59aa102cbc")
)

var kernelGroups = []struct {
	g     guid.GUID
	group uint8
	name  string // the class's name in the kernel's MOF (tracerpt prints it)
}{
	{EventTraceGUID, 0x00, "EventTrace"}, {DiskIoGUID, 0x01, "DiskIo"}, {PageFaultGUID, 0x02, "PageFault"},
	{ProcessGUID, 0x03, "Process"}, {FileIoGUID, 0x04, "FileIo"}, {ThreadGUID, 0x05, "Thread"},
	{TcpIpGUID, 0x06, "TcpIp"}, {UdpIpGUID, 0x08, "UdpIp"}, {RegistryGUID, 0x09, "Registry"},
	{PerfInfoGUID, 0x0F, "PerfInfo"},
}

// KernelClassName returns the name of a kernel event class GUID, or "".
func KernelClassName(g guid.GUID) string {
	for _, k := range kernelGroups {
		if k.g == g {
			return k.name
		}
	}
	return ""
}

func kernelGroup(g guid.GUID) (uint8, bool) {
	for _, k := range kernelGroups {
		if k.g == g {
			return k.group, true
		}
	}
	return 0, false
}

// ClassicEventIDOf is the CLASSIC_EVENT_ID that names a system event's hook id: the
// class of its group and its type. False for a group without a known class.
func ClassicEventIDOf(hook uint32) (ClassicEventID, bool) {
	for _, k := range kernelGroups {
		if uint32(k.group) == hook>>8&0xFF {
			return ClassicEventID{EventGUID: k.g, Type: uint8(hook)}, true
		}
	}
	return ClassicEventID{}, false
}

// HookEventIDs builds the CLASSIC_EVENT_ID array that names the given hook ids, for
// TracePmcEventListInfo; an error names the first hook whose group has no event class
// (NtSetSystemInformation's EventInformation takes any hook id).
func HookEventIDs(hooks ...uint32) ([]byte, error) {
	ids := make([]ClassicEventID, len(hooks))
	for i, h := range hooks {
		id, ok := ClassicEventIDOf(h)
		if !ok {
			return nil, Refuse(RuleInvalid, "hook %#04x: group %#02x has no kernel event class a CLASSIC_EVENT_ID can name", h, h>>8&0xFF)
		}
		ids[i] = id
	}
	return ClassicEventIDs(ids...), nil
}

// Well-known hook ids, for examples and tests.
const (
	HookCSwitch        = 0x0524 // Thread, type 36: context switch
	HookSampledProfile = 0x0F2E // PerfInfo, type 46
	HookSysClEnter     = 0x0F33 // PerfInfo, type 51: system call enter
)
