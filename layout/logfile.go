package layout

import "github.com/etwemu/etwemu/winver"

// LogfileHeader is TRACE_LOGFILE_HEADER, the payload of an ETL file's first event
// (public, evntrace.h). The two unions are shown by the arms files use: VersionDetail's
// four bytes for ULONG Version, and {StartBuffers; PointerSize; EventsLost; CpuSpeedInMHz}
// for GUID LogInstanceGuid. The x86 offsets follow from the declaration by the C layout
// rules (4-byte pointers, 8-byte alignment of LARGE_INTEGER).
var LogfileHeader = Struct{
	Name:   "TRACE_LOGFILE_HEADER",
	Source: "evntrace.h (Windows SDK)",
	Sizes:  winver.Steps[[2]int]{{Since: winver.V5_0, Value: [2]int{0x110, 0x118}}},
	Members: since(winver.V5_0, []Member{
		{Name: "BufferSize", Type: "ULONG", Off: [2]int{0x00, 0x00}},
		{Name: "MajorVersion", Type: "UCHAR", Off: [2]int{0x04, 0x04}, Remark: "VersionDetail, in a union with ULONG Version"},
		{Name: "MinorVersion", Type: "UCHAR", Off: [2]int{0x05, 0x05}},
		{Name: "SubVersion", Type: "UCHAR", Off: [2]int{0x06, 0x06}},
		{Name: "SubMinorVersion", Type: "UCHAR", Off: [2]int{0x07, 0x07}},
		{Name: "ProviderVersion", Type: "ULONG", Off: [2]int{0x08, 0x08}, Remark: "the build number"},
		{Name: "NumberOfProcessors", Type: "ULONG", Off: [2]int{0x0C, 0x0C}},
		{Name: "EndTime", Type: "LARGE_INTEGER", Off: [2]int{0x10, 0x10}},
		{Name: "TimerResolution", Type: "ULONG", Off: [2]int{0x18, 0x18}},
		{Name: "MaximumFileSize", Type: "ULONG", Off: [2]int{0x1C, 0x1C}},
		{Name: "LogFileMode", Type: "ULONG", Off: [2]int{0x20, 0x20}},
		{Name: "BuffersWritten", Type: "ULONG", Off: [2]int{0x24, 0x24}},
		{Name: "StartBuffers", Type: "ULONG", Off: [2]int{0x28, 0x28}, Remark: "in a union with GUID LogInstanceGuid"},
		{Name: "PointerSize", Type: "ULONG", Off: [2]int{0x2C, 0x2C}},
		{Name: "EventsLost", Type: "ULONG", Off: [2]int{0x30, 0x30}},
		{Name: "CpuSpeedInMHz", Type: "ULONG", Off: [2]int{0x34, 0x34}},
		{Name: "LoggerName", Type: "WCHAR *", Off: [2]int{0x38, 0x38}, Remark: "meaningless in a file; the names follow the structure"},
		{Name: "LogFileName", Type: "WCHAR *", Off: [2]int{0x3C, 0x40}},
		{Name: "TimeZone", Type: "TIME_ZONE_INFORMATION", Off: [2]int{0x40, 0x48}},
		{Name: "BootTime", Type: "LARGE_INTEGER", Off: [2]int{0xF0, 0xF8}},
		{Name: "PerfFreq", Type: "LARGE_INTEGER", Off: [2]int{0xF8, 0x100}},
		{Name: "StartTime", Type: "LARGE_INTEGER", Off: [2]int{0x100, 0x108}},
		{Name: "ReservedFlags", Type: "ULONG", Off: [2]int{0x108, 0x110}, Remark: "the clock type"},
		{Name: "BuffersLost", Type: "ULONG", Off: [2]int{0x10C, 0x114}},
	}),
}
