package layout

import "github.com/etwemu/etwemu/winver"

// WnodeHeader is WNODE_HEADER, the head of EVENT_TRACE_PROPERTIES (public, wmistr.h).
// Its layout is the same on x86 and x64: the pointer-sized KernelHandle shares eight
// bytes with TimeStamp.
var WnodeHeader = Struct{
	Name:   "WNODE_HEADER",
	Source: "wmistr.h (Windows SDK)",
	Sizes:  winver.Steps[[2]int]{{Since: winver.V5_0, Value: [2]int{0x30, 0x30}}},
	Members: since(winver.V5_0, []Member{
		{Name: "BufferSize", Type: "ULONG", Off: [2]int{0x00, 0x00}, Remark: "the whole EVENT_TRACE_PROPERTIES block with its names"},
		{Name: "ProviderId", Type: "ULONG", Off: [2]int{0x04, 0x04}},
		{Name: "HistoricalContext", Type: "ULONGLONG", Off: [2]int{0x08, 0x08}, Remark: "the session handle StartTrace returns; in a union with {Version; Linkage}"},
		{Name: "TimeStamp", Type: "LARGE_INTEGER", Off: [2]int{0x10, 0x10}, Remark: "in a union with CountLost and KernelHandle"},
		{Name: "Guid", Type: "GUID", Off: [2]int{0x18, 0x18}, Remark: "the session's GUID; SystemTraceControlGuid for the kernel logger"},
		{Name: "ClientContext", Type: "ULONG", Off: [2]int{0x28, 0x28}, Remark: "the clock type: 1 QPC, 2 system time, 3 CPU cycle counter"},
		{Name: "Flags", Type: "ULONG", Off: [2]int{0x2C, 0x2C}, Remark: "must include WNODE_FLAG_TRACED_GUID (0x00020000)"},
	}),
}

// TraceProperties is EVENT_TRACE_PROPERTIES, what StartTrace, ControlTrace and QueryTrace
// take and fill (the Windows SDK's evntrace.h; Microsoft Learn, "EVENT_TRACE_PROPERTIES
// structure"). The x86 offsets
// follow from the declaration by the C layout rules: LoggerThreadId is a 4-byte HANDLE
// there, and the structure is padded to 8 bytes for the LARGE_INTEGER in its Wnode.
// EVENT_TRACE_PROPERTIES_V2 (1703 and later), which appends filter descriptors, is not
// catalogued.
var TraceProperties = Struct{
	Name:   "EVENT_TRACE_PROPERTIES",
	Source: "evntrace.h (Windows SDK); Microsoft Learn, \"EVENT_TRACE_PROPERTIES structure\"",
	Sizes:  winver.Steps[[2]int]{{Since: winver.V5_0, Value: [2]int{0x78, 0x78}}},
	Members: since(winver.V5_0, []Member{
		{Name: "Wnode", Type: "WNODE_HEADER", Off: [2]int{0x00, 0x00}},
		{Name: "BufferSize", Type: "ULONG", Off: [2]int{0x30, 0x30}, Remark: "KB"},
		{Name: "MinimumBuffers", Type: "ULONG", Off: [2]int{0x34, 0x34}},
		{Name: "MaximumBuffers", Type: "ULONG", Off: [2]int{0x38, 0x38}},
		{Name: "MaximumFileSize", Type: "ULONG", Off: [2]int{0x3C, 0x3C}, Remark: "MB, or KB with EVENT_TRACE_USE_KBYTES_FOR_SIZE"},
		{Name: "LogFileMode", Type: "ULONG", Off: [2]int{0x40, 0x40}},
		{Name: "FlushTimer", Type: "ULONG", Off: [2]int{0x44, 0x44}, Remark: "seconds"},
		{Name: "EnableFlags", Type: "ULONG", Off: [2]int{0x48, 0x48}, Remark: "kernel providers, for system loggers"},
		{Name: "AgeLimit", Type: "LONG", Off: [2]int{0x4C, 0x4C}, Remark: "obsolete; in a union with LONG FlushThreshold in newer headers"},
		{Name: "NumberOfBuffers", Type: "ULONG", Off: [2]int{0x50, 0x50}, Remark: "out"},
		{Name: "FreeBuffers", Type: "ULONG", Off: [2]int{0x54, 0x54}, Remark: "out"},
		{Name: "EventsLost", Type: "ULONG", Off: [2]int{0x58, 0x58}, Remark: "out"},
		{Name: "BuffersWritten", Type: "ULONG", Off: [2]int{0x5C, 0x5C}, Remark: "out"},
		{Name: "LogBuffersLost", Type: "ULONG", Off: [2]int{0x60, 0x60}, Remark: "out"},
		{Name: "RealTimeBuffersLost", Type: "ULONG", Off: [2]int{0x64, 0x64}, Remark: "out"},
		{Name: "LoggerThreadId", Type: "HANDLE", Off: [2]int{0x68, 0x68}, Remark: "out"},
		{Name: "LogFileNameOffset", Type: "ULONG", Off: [2]int{0x6C, 0x70}, Remark: "from the start of the block to the log file's name"},
		{Name: "LoggerNameOffset", Type: "ULONG", Off: [2]int{0x70, 0x74}, Remark: "from the start of the block to the session's name"},
	}),
}
