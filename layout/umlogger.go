package layout

import (
	"fmt"
	"strings"

	"github.com/etwemu/etwemu/layout/internal/cells"
	"github.com/etwemu/etwemu/winver"
)

// UMLoggerContext is ETW_UM_LOGGER_CONTEXT, the context NTDLL (ADVAPI32 before 5.2) keeps
// for a private (user-mode) logger, from Geoff Chappell, "ETW_UM_LOGGER_CONTEXT": every
// member row of the article's tables and its size table, 5.0 to 10.0, x86 and x64. Rows
// the article marks as unknown or unaccounted keep its words as their name, in angle
// brackets. The article knows no release of Windows 10 after 10.0; later releases are
// taken to keep 10.0's layout [UNCERTAIN].
//
// Where a cell of the published table lost values, the row below carries the reading that
// the rows around it force, and umLost says which: its remark in those versions says the
// offset was rebuilt and what the published table's cell reads.
var UMLoggerContext = Struct{
	Name:   "ETW_UM_LOGGER_CONTEXT",
	Source: "Geoff Chappell, \"ETW_UM_LOGGER_CONTEXT\" (NTDLL and ADVAPI32 binaries; names by correspondence with WMI_LOGGER_CONTEXT)",
	Sizes: winver.Steps[[2]int]{
		{Since: winver.V5_0, Value: [2]int{0xD0, 0}},
		{Since: winver.V5_1, Value: [2]int{0xD8, 0}}, // the article's x64 size for 5.1 to 5.2 is 5.2's: x64 starts there
		{Since: winver.V5_2, Value: [2]int{0xD8, 0x120}},
		{Since: winver.V6_0, Value: [2]int{0xF8, 0x150}},
		{Since: winver.V6_1, Value: [2]int{0x120, 0x1A0}},
		{Since: winver.V6_2, Value: [2]int{0x160, 0x210}},
		{Since: winver.V6_3, Value: [2]int{0x170, 0x220}},
	},
	Members: fromCells(winver.V5_2, umLost, []cellRow{
		{"StartTime", "LARGE_INTEGER", "0x00 (5.0 to 6.0)", "0x00 (5.2 to 6.0)", "5.0 to 6.0", ""},
		{"ReferenceTime", "ETW_REF_CLOCK", "0x00", "0x00", "6.1 and higher", ""},
		{"ClockType", "ULONG", "0x10", "0x10", "6.1 and higher", "previously at 0x94 and 0xD4"},
		{"LogFileHandle", "HANDLE", "0x08 (5.0 to 6.0)", "0x08 (5.2 to 6.0)", "5.0 to 6.0", "next at 0x5C and 0x80"},
		{"<unaccounted four or eight bytes>", "[4 or 8 bytes]", "0x0C (5.0 to 6.0)", "0x10 (5.2 to 6.0)", "5.0 to 6.0", ""},
		{"LoggerId", "ULONG", "0x10 (5.0 to 6.0); 0x14", "0x18 (5.2 to 6.0); 0x14", "5.0 and higher", ""},
		{"LocalSequence", "ULONG", "0x14 (5.1 to 6.0)", "0x1C (5.2 to 6.0)", "5.1 to 6.0", "next at 0x0108 and 0x0180"},
		{"LoggerSemaphore", "HANDLE", "0x14 (5.0); 0x18 (5.1 to 6.0)", "0x20 (5.2 to 6.0)", "5.0 to 6.0", ""},
		{"LoggerThreadId", "HANDLE", "0x18 (5.0); 0x1C (5.1 to 6.0); 0x18", "0x28 (5.2 to 6.0); 0x18", "5.0 and higher", ""},
		{"LoggerThread", "HANDLE", "0x1C (5.0); 0x20 (5.1 to 5.2); not in 6.0; 0x1C", "0x30 (5.2); not in 6.0; 0x20", "5.0 to 5.2; not in 6.0; 6.1 and higher", "not in 6.0"},
		{"LoggerEvent", "HANDLE", "0x20 (5.0); 0x24 (5.1 to 5.2); 0x20 (6.0)", "0x38 (5.2); 0x30 (6.0)", "5.0 to 6.0", "next at 0x58 and 0x78"},
		{"LoggerStatus", "DWORD", "0x24 (5.0); 0x28 (5.1 to 5.2); 0x24 (6.0); 0x20", "0x40 (5.2); 0x38 (6.0); 0x28", "5.0 and higher", ""},
		{"EventMarker", "ULONG [1]", "0x24", "0x2C", "6.2 and higher", ""},
		{"ErrorMarker", "ULONG", "0x28", "0x30", "6.2 and higher", ""},
		{"SizeMask", "ULONG", "0x2C", "0x34", "6.2 and higher", ""},
		{"InstanceId", "GUID", "0x24 (6.1); 0x30", "0x2C (6.1); 0x38", "6.1 and higher", "previously at 0xC4 and 0x0108"},
		{"InstanceCount", "ULONG", "0x34 (6.1); 0x40", "0x3C (6.1); 0x48", "6.1 and higher", ""},
		{"<unknown CONDITION_VARIABLE>", "CONDITION_VARIABLE", "0x38 (6.1); 0x44", "0x40 (6.1); 0x50", "6.1 and higher", "waits of EVENT_TRACE_BLOCKING_MODE"},
		{"<unknown CRITICAL_SECTION>", "CRITICAL_SECTION", "0x3C (6.1); 0x48", "0x48 (6.1); 0x58", "6.1 and higher", "previously at 0xD8 and 0x0120"},
		{"FlushEvent", "HANDLE", "0x54 (6.1); 0x60", "0x70 (6.1); 0x80", "6.1 and higher", ""},
		{"LoggerEvent", "HANDLE", "0x58 (6.1); 0x64", "0x78 (6.1); 0x88", "6.1 and higher", "previously at 0x20 and 0x30"},
		{"LogFileHandle", "HANDLE", "0x5C (6.1); 0x68", "0x80 (6.1); 0x90", "6.1 and higher", "previously at 0x08"},
		{"BuffersAvailable", "LONG", "0x28 (5.0); 0x2C (5.1 to 5.2); 0x28 (6.0)", "0x44 (5.2); 0x3C (6.0)", "5.0 to 6.0", "next at 0x98 and 0xD8"},
		{"NumberOfProcessors", "ULONG", "0x2C (5.0); 0x30 (5.1 to 5.2); 0x2C (6.0)", "0x48 (5.2); 0x40 (6.0)", "5.0 to 6.0", "next at 0x7C and 0xBC"},
		{"<unknown 32-bit page-aligned buffer size>", "ULONG", "0x30 (5.0); 0x34 (5.1 to 5.2); 0x30 (6.0)", "0x4C (5.2); 0x44 (6.0)", "5.0 to 6.0", "next at 0x88 and 0xC8"},
		{"FreeList", "LIST_ENTRY", "0x34 (5.0); 0x38 (5.1 to 5.2); 0x34 (6.0)", "0x50 (5.2); 0x48 (6.0)", "5.0 to 6.0", ""},
		{"GlobalList", "LIST_ENTRY", "0x3C (5.0); 0x40 (5.1 to 5.2); 0x3C (6.0)", "0x60 (5.2); 0x58 (6.0)", "5.0 to 6.0", "next at 0x9C and 0xE0"},
		{"<unknown pointer>", "PVOID", "0x44 (5.0); 0x48 (5.1 to 5.2); 0x44 (6.0)", "0x70 (5.2); 0x68 (6.0)", "5.0 to 6.0", ""},
		{"ProcessorBuffers", "WMI_BUFFER_HEADER **", "0x48 (5.0); 0x4C (5.1 to 5.2); 0x48 (6.0)", "0x78 (5.2); 0x70 (6.0)", "5.0 to 6.0", "a pointer to the per-processor array; the array itself ends the structure from 6.1"},
		{"LoggerName", "UNICODE_STRING", "0x4C (5.0); 0x50 (5.1 to 5.2); 0x4C (6.0); 0x60 (6.1); 0x6C", "0x80 (5.2); 0x78 (6.0); 0x88 (6.1); 0x98", "5.0 and higher", ""},
		{"LogFileName", "UNICODE_STRING", "0x54 (5.0); 0x58 (5.1 to 5.2); 0x54 (6.0); 0x68 (6.1); 0x74", "0x90 (5.2); 0x88 (6.0); 0x98 (6.1); 0xA8", "5.0 and higher", ""},
		{"LogFilePattern", "UNICODE_STRING", "0x70 (6.1); 0x7C", "0xA8 (6.1); 0xB8", "6.1 and higher", ""},
		{"FileCounter", "LONG", "0x78 (6.1); 0x84", "0xB8 (6.1); 0xC8", "6.1 and higher", ""},
		{"NumberOfProcessors", "ULONG", "0x7C (6.1); 0x88", "0xBC (6.1); 0xCC", "6.1 and higher", "previously at 0x2C and 0x40"},
		{"BufferSize", "ULONG", "0x80 (6.1); 0x8C", "0xC0 (6.1); 0xD0", "6.1 and higher", "previously at 0xA0 and 0xE0"},
		{"MaximumEventSize", "ULONG", "0x84 (6.1); 0x90", "0xC4 (6.1); 0xD4", "6.1 and higher", ""},
		{"<unknown 32-bit page-aligned buffer size>", "ULONG", "0x88 (6.1); 0x94", "0xC8 (6.1); 0xD8", "6.1 and higher", "previously at 0x30 and 0x44"},
		{"MaximumBuffers", "ULONG", "0x8C (6.1); 0x98", "0xCC (6.1); 0xDC", "6.1 and higher", "previously at 0xA8 and 0xE8"},
		{"MinimumBuffers", "ULONG", "0x90 (6.1); 0x9C", "0xD0 (6.1); 0xE0", "6.1 and higher", "previously at 0xAC and 0xEC"},
		{"NumberOfBuffers", "ULONG", "0x94 (6.1); 0xA0", "0xD4 (6.1); 0xE4", "6.1 and higher", "previously at 0xA4 and 0xE4"},
		{"BuffersAvailable", "LONG", "0x98 (6.1); 0xA4", "0xD8 (6.1); 0xE8", "6.1 and higher", "previously at 0x28 and 0x3C"},
		{"GlobalList", "LIST_ENTRY", "0x9C (6.1); 0xA8", "0xE0 (6.1); 0xF0", "6.1 and higher", "previously at 0x3C and 0x58"},
		{"BufferQueue", "ETW_BUFFER_QUEUE", "0xA4 (6.1); 0xB0", "0xF0 (6.1); 0x0100", "6.1 and higher", ""},
		{"<unknown ETW_BUFFER_QUEUE>", "ETW_BUFFER_QUEUE", "0xB0 (6.1); 0xBC", "0x0108 (6.1); 0x0118", "6.1 and higher", ""},
		{"OverflowQueue", "ETW_BUFFER_QUEUE", "0xBC (6.1); 0xC8", "0x0120 (6.1); 0x0130", "6.1 and higher", ""},
		{"CollectionOn", "LONG", "0x5C (5.0); 0x60 (5.1 to 5.2); 0x5C (6.0)", "0xA0 (5.2); 0x98 (6.0)", "5.0 to 6.0", "next at 0xD0 and 0x0140"},
		{"<unaccounted eight bytes>", "[8 bytes]", "0x60 (5.0); 0x64 (5.1 to 5.2)", "0xA4 (5.2)", "5.0 to 5.2", ""},
		{"RequestFlag", "ULONG", "0x60 (6.0)", "0x9C (6.0)", "6.0 only", "next at 0xD4 and 0x0144"},
		{"MaximumFileSize", "ULONG", "0x68 (5.0); 0x6C (5.1 to 5.2); 0x64 (6.0); 0xC8 (6.1); 0xD4", "0xAC (5.2); 0xA0 (6.0); 0x0138 (6.1); 0x0148", "5.0 and higher", ""},
		{"LoggerMode", "ULONG", "0x6C (5.0); 0x70 (5.1 to 5.2); 0x68 (6.0); 0xCC (6.1); 0xD8", "0xB0 (5.2); 0xA4 (6.0); 0x013C (6.1); 0x014C", "5.0 and higher", ""},
		{"CollectionOn", "LONG", "0xD0 (6.1); 0xDC", "0x0140 (6.1); 0x0150", "6.1 and higher", "previously at 0x5C and 0x98"},
		{"RequestFlag", "ULONG", "0xD4 (6.1); 0xE0", "0x0144 (6.1); 0x0154", "6.1 and higher", "in a union with changing bit fields; previously at 0x60 and 0x9C"},
		{"LastFlushedBuffer", "ULONG", "0x70 (5.0); 0x74 (5.1 to 5.2); 0x6C (6.0); 0xD8 (6.1); 0xE4", "0xB4 (5.2); 0xA8 (6.0); 0x0148 (6.1); 0x0158", "5.0 and higher", ""},
		{"FlushTimer", "LARGE_INTEGER", "0x78 (5.0 to 5.2); 0x70 (6.0); 0xE0 (6.1); 0xE8", "0xB8 (5.2); 0xB0 (6.0); 0x0150 (6.1); 0x0160", "5.0 and higher", ""},
		{"FirstBufferOffset", "LARGE_INTEGER", "0x80 (5.0 to 5.2); 0x78 (6.0); 0xE8 (6.1); 0xF0", "0xC0 (5.2); 0xB8 (6.0); 0x0158 (6.1); 0x0168", "5.0 and higher", ""},
		{"ByteOffset", "LARGE_INTEGER", "0x88 (5.0 to 5.2); 0x80 (6.0); 0xF0 (6.1); 0xF8", "0xC8 (5.2); 0xC0 (6.0); 0x0160 (6.1); 0x0170", "5.0 and higher", ""},
		{"BufferAgeLimit", "LARGE_INTEGER", "0x90 (5.0 to 5.2); 0x88 (6.0)", "0xD0 (5.2); 0xC8 (6.0)", "5.0 to 6.0", ""},
		{"<unaccounted four bytes>", "[4 bytes]", "0x98 (5.1 to 5.2); 0x90 (6.0)", "0xD8 (5.2); 0xD0 (6.0)", "5.1 to 6.0", ""},
		{"ClockType", "ULONG", "0x9C (5.1 to 5.2); 0x94 (6.0)", "0xDC (5.2); 0xD4 (6.0)", "5.1 to 6.0", "next at 0x10"},
		{"ReferenceTimeStamp", "LARGE_INTEGER", "0x98 (6.0)", "0xD8 (6.0)", "6.0 only", ""},
		{"BufferSize", "ULONG", "0x98 (5.0); 0xA0 (5.1 to 6.0)", "0xE0 (5.2 to 6.0)", "5.0 to 6.0", "next at 0x80 and 0xC0"},
		{"NumberOfBuffers", "ULONG", "0x9C (5.0); 0xA4 (5.1 to 6.0)", "0xE4 (5.2 to 6.0)", "5.0 to 6.0", "next at 0x94 and 0xD4"},
		{"MaximumBuffers", "ULONG", "0xA0 (5.0); 0xA8 (5.1 to 6.0)", "0xE8 (5.2 to 6.0)", "5.0 to 6.0", "next at 0x8C and 0xCC"},
		{"MinimumBuffers", "ULONG", "0xA4 (5.0); 0xAC (5.1 to 6.0)", "0xEC (5.2 to 6.0)", "5.0 to 6.0", "next at 0x90 and 0xD0"},
		{"<unaccounted eight bytes>", "[8 bytes]", "0x0100", "0x0178", "6.2", ""},
		{"FlushThreshold", "ULONG", "0x0100", "0x0178", "6.3 and higher", "twelve bytes follow it, before EventsLost, that the article does not account for"},
		{"EventsLost", "ULONG", "0xA8 (5.0); 0xB0 (5.1 to 6.0); 0xF8 (6.1); 0x0108 (6.2); 0x0110", "0xF0 (5.2 to 6.0); 0x0168 (6.1); 0x0180 (6.2); 0x0188", "5.0 and higher", ""},
		{"LogBuffersLost", "ULONG", "0xFC (6.1); 0x010C (6.2); 0x0114", "0x016C (6.1); 0x0184 (6.2); 0x018C", "6.1 and higher", "previously at 0xB8 and 0xF8"},
		{"BuffersWritten", "ULONG", "0xAC (5.0); 0xB4 (5.1 to 6.0); 0x0100 (6.1); 0x0110 (6.2); 0x0118", "0xF4 (5.2 to 6.0); 0x0170 (6.1); 0x0188 (6.2); 0x0190", "5.0 and higher", ""},
		{"LogBuffersLost", "ULONG", "0xB0 (5.0); 0xB8 (5.1 to 6.0)", "0xF8 (5.2 to 6.0)", "5.0 to 6.0", "next at 0xFC and 0x016C"},
		{"RealTimeBuffersLost", "ULONG", "0xB4 (5.0); 0xBC (5.1 to 6.0)", "0xFC (5.2 to 6.0)", "5.0 to 6.0", ""},
		{"SequencePtr", "LONG *", "0xC0 (5.1 to 6.0); 0x0104 (6.1); 0x0114 (6.2); 0x011C", "0x0100 (5.2 to 6.0); 0x0178 (6.1); 0x0190 (6.2); 0x0198", "5.1 and higher", ""},
		{"LocalSequence", "ULONG", "0x0108 (6.1); 0x0118 (6.2); 0x0120", "0x0180 (6.1); 0x0198 (6.2); 0x01A0", "6.1 and higher", "previously at 0x14 and 0x1C"},
		{"InstanceId", "GUID", "0xB8 (5.0); 0xC4 (5.1 to 6.0)", "0x0108 (5.2 to 6.0)", "5.0 to 6.0", "next at 0x24 and 0x2C"},
		{"<unknown dword>", "ULONG", "0xD4 (6.0)", "0x0118 (6.0)", "6.0 only", ""},
		{"<unknown CRITICAL_SECTION>", "CRITICAL_SECTION", "0xD8 (6.0)", "0x0120 (6.0)", "6.0 only", "next at 0x3C and 0x48"},
		{"BufferSequenceNumber", "LONGLONG", "0x0110 (6.1); 0x0120 (6.2); 0x0128", "0x0188 (6.1); 0x01A0 (6.2); 0x01A8", "6.1 and higher", ""},
		{"<unknown pointer to trace buffers>", "PVOID", "0xC8 (5.0); 0xD4 (5.1 to 5.2); 0xF0 (6.0); 0x0118 (6.1); 0x0128 (6.2); 0x0130", "0x0118 (5.2); 0x0148 (6.0); 0x0190 (6.1); 0x01A8 (6.2); 0x01B0", "5.0 and higher", "last member in 5.0 to 6.0"},
		// Compression (6.2 and later): one flush of the compression area is one trace
		// buffer's worth of data compressed from possibly many trace buffers.
		{"CompressionWorkspace", "PVOID", "0x012C (6.2); 0x0134", "0x01B0 (6.2); 0x01B8", "6.2 and higher", ""},
		{"<buffer for compressed data>", "PVOID", "0x0130 (6.2); 0x0138", "0x01B8 (6.2); 0x01C0", "6.2 and higher", "the compression area, two trace buffers long"},
		{"<32-bit size of compression buffer>", "ULONG", "0x0134 (6.2); 0x013C", "0x01C0 (6.2); 0x01C8", "6.2 and higher", ""},
		{"<32-bit size of trace buffers in compression buffer>", "ULONG", "0x0138 (6.2); 0x0140", "0x01C4 (6.2); 0x01CC", "6.2 and higher", ""},
		{"<32-bit count of trace buffers in compression buffer>", "ULONG", "0x0144", "0x01D0", "6.3 and higher", "6.2 counts a whole flush as one buffer"},
		{"<32-bit size of partial trace buffer in compression buffer>", "ULONG", "0x0148", "0x01D4", "6.3 and higher", "overflow carried to the start of the area"},
		{"ProviderBinaryList", "LIST_ENTRY", "0x013C (6.2); 0x014C", "0x01C8 (6.2); 0x01D8", "6.2 and higher", ""},
		{"WinRtProviderBinaryList", "LIST_ENTRY", "0x0144 (6.2); 0x0154", "0x01D8 (6.2); 0x01E8", "6.2 and higher", ""},
		{"<unknown dword>", "ULONG", "0x014C (6.2); 0x015C", "0x01E8 (6.2); 0x01F8", "6.2 and higher", ""},
		{"<unknown pointer to array of pointers>", "PVOID", "0x0150 (6.2); 0x0160", "0x01F0 (6.2); 0x0200", "6.2 and higher", ""},
		{"<unknown pointer to array of structures>", "PVOID", "0x0154 (6.2); 0x0164", "0x01F8 (6.2); 0x0208", "6.2 and higher", ""},
		{"<unknown pointer to processor stream index map>", "PVOID", "0x0158 (6.2); 0x0168", "0x0200 (6.2); 0x0210", "6.2 and higher", ""},
		{"ProcessorBuffers", "WMI_BUFFER_HEADER * [ANYSIZE_ARRAY]", "0x011C (6.1); 0x015C (6.2); 0x016C", "0x0198 (6.1); 0x0208 (6.2); 0x0218", "6.1 and higher", "last member in 6.1 and higher: one current buffer per processor"},
	}),
}

// umLost lists the cells of the article's tables that lost values in the published
// rendering: a bare
// offset that, read as written, would hold for 6.2 and later too and put the member on top
// of its neighbours (the catalogue's fit test shows where), a 5.1 that should read "5.1 to
// 5.2", and three rows with no x64 cell at all (published ""). In each the catalogue places the
// member after the one before it, as the sizes and the next member's offset require.
var umLost = []lostCell{
	{"InstanceId", X64, winver.Since(winver.V6_2), "0x2C"},
	{"InstanceCount", X64, winver.Since(winver.V6_2), "0x3C"},
	{"LogFileHandle", X64, winver.Since(winver.V6_2), "0x80"},
	{"LoggerName", X86, winver.Only(winver.V5_2), "0x6C"},
	{"LogFileName", X86, winver.Only(winver.V5_2), "0x74"},
	{"LogFileName", X64, winver.Since(winver.V6_2), "0x98"},
	{"LogFilePattern", X64, winver.Since(winver.V6_2), "0xA8"},
	{"FileCounter", X64, winver.Since(winver.V6_2), "0xB8"},
	{"NumberOfProcessors", X64, winver.Since(winver.V6_2), "0xBC"},
	{"MaximumEventSize", X64, winver.Since(winver.V6_1), ""},
	{"<unknown 32-bit page-aligned buffer size>", X64, winver.Since(winver.V6_1), ""},
	{"CollectionOn", X64, winver.Since(winver.V6_2), "0x0140"},
	{"RequestFlag", X64, winver.Since(winver.V6_2), "0x0144"},
	{"LastFlushedBuffer", X64, winver.Since(winver.V6_2), "0x0148"},
	{"FirstBufferOffset", X86, winver.Since(winver.V6_2), "0xE8"},
	{"FirstBufferOffset", X64, winver.Since(winver.V6_2), "0x0158"},
	{"ByteOffset", X64, winver.Since(winver.V6_2), "0x0160"},
	{"<unaccounted eight bytes>", X64, winver.Only(winver.V6_2), ""},
	{"SequencePtr", X64, winver.Since(winver.V6_2), "0x0178"},
	{"LocalSequence", X64, winver.Since(winver.V6_2), "0x0180"},
	{"BufferSequenceNumber", X64, winver.Since(winver.V6_2), "0x0188"},
	{"<unknown pointer to trace buffers>", X64, winver.Since(winver.V6_2), "0x0190"},
	{"<unknown dword>", X64, winver.Only(winver.V6_2), "0x01F8"},
	{"<unknown pointer to array of pointers>", X64, winver.Only(winver.V6_2), "0x0200"},
	{"<unknown pointer to array of structures>", X64, winver.Only(winver.V6_2), "0x0208"},
}

// lostCell is one cell of a published table that lost values: the member, the
// architecture and versions the catalogue rebuilt, and what the published cell reads there
// ("" for none).
type lostCell struct {
	name      string
	arch      Arch
	versions  winver.Range
	published string
}

// cellRow is one member written in the published tables' cell notation (package cells): name, type,
// the x86 and x64 offset cells, the versions and the remark.
type cellRow struct{ name, typ, x86, x64, versions, remark string }

// fromCells turns rows in that notation into members, one per span of versions
// over which both offsets and the lost cells stay the same. x64 exists from x64From on.
// A member in a lost cell's versions says in its remark that its offset was rebuilt. A
// malformed cell panics: the rows are the catalogue's own source text, checked by its
// tests.
func fromCells(x64From winver.Version, lost []lostCell, rows []cellRow) []Member {
	var out []Member
	for _, r := range rows {
		vs, err := cells.Versions(r.versions)
		if err != nil {
			panic(fmt.Sprintf("layout: %s: %v", r.name, err))
		}
		var vs64 []winver.Version
		for _, v := range vs {
			if v >= x64From {
				vs64 = append(vs64, v)
			}
		}
		x86, err := cells.Offsets(r.x86, vs)
		if err != nil {
			panic(fmt.Sprintf("layout: %s: %v", r.name, err))
		}
		x64, err := cells.Offsets(r.x64, vs64)
		if err != nil {
			panic(fmt.Sprintf("layout: %s: %v", r.name, err))
		}
		var cur *Member
		var last winver.Version
		for _, v := range vs {
			off := [2]int{-1, -1}
			if o, ok := x86[v]; ok {
				off[X86] = o
			}
			if o, ok := x64[v]; ok {
				off[X64] = o
			}
			remark := r.remark
			for _, l := range lost {
				if l.name == r.name && l.versions.Contains(v) && off[l.arch] >= 0 {
					note := fmt.Sprintf("%v offset rebuilt: the published table's cell reads %s", l.arch, l.published)
					if l.published == "" {
						note = fmt.Sprintf("%v offset rebuilt: the published table's row has no %v cell", l.arch, l.arch)
					}
					remark = strings.TrimPrefix(remark+"; "+note, "; ")
				}
			}
			if cur != nil && cur.Off == off && cur.Remark == remark && v == last+1 {
				cur.Versions.To, last = v, v
				continue
			}
			out = append(out, Member{Name: r.name, Type: r.typ, Off: off, Versions: winver.Only(v), Remark: remark})
			cur, last = &out[len(out)-1], v
		}
	}
	for i := range out { // a span that reaches the newest version is "and higher"
		if out[i].Versions.To == winver.Newest {
			out[i].Versions.To = 0
		}
	}
	return out
}
