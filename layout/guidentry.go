package layout

import "github.com/etwemu/etwemu/winver"

// x86Unknown marks a member whose x86 offset the source does not give: the member is
// left out of x86 views, which then show the size alone.
const x86Unknown = -1

// GuidEntry is ETW_GUID_ENTRY, the kernel's record of one provider GUID (Geoff Chappell,
// "ETW_GUID_ENTRY", from Microsoft's public symbol files). Offsets are known for x64 only;
// the sizes for both.
var GuidEntry = Struct{
	Name:   "ETW_GUID_ENTRY",
	Module: "nt",
	Source: "Geoff Chappell, \"ETW_GUID_ENTRY\" (Microsoft's public symbols; x64 offsets, sizes for both)",
	Sizes: winver.Steps[[2]int]{
		{Since: winver.V5_0, Value: [2]int{0, 0}},
		{Since: winver.V6_0, Value: [2]int{0x158, 0x170}},
		{Since: winver.V6_1, Value: [2]int{0x178, 0x1B0}},
		{Since: winver.V6_2, Value: [2]int{0x160, 0x178}},
		{Since: winver.V10_0, Value: [2]int{0x160, 0x180}},
		{Since: winver.V1511, Value: [2]int{0x168, 0x190}},
		{Since: winver.V2004, Value: [2]int{0x178, 0x1A8}},
	},
	Members: []Member{
		{Name: "GuidList", Type: "LIST_ENTRY", Off: [2]int{x86Unknown, 0x00}, Versions: winver.Since(winver.V6_0), Remark: "link in the hash bucket's list"},
		{Name: "SiloGuidList", Type: "LIST_ENTRY", Off: [2]int{x86Unknown, 0x10}, Versions: winver.Since(winver.V2004)},
		{Name: "RefCount", Type: "LONG_PTR volatile", Off: [2]int{x86Unknown, 0x10}, Versions: winver.Between(winver.V6_0, winver.V1909)},
		{Name: "RefCount", Type: "LONG_PTR volatile", Off: [2]int{x86Unknown, 0x20}, Versions: winver.Since(winver.V2004)},
		{Name: "Guid", Type: "GUID", Off: [2]int{x86Unknown, 0x18}, Versions: winver.Between(winver.V6_0, winver.V1909)},
		{Name: "Guid", Type: "GUID", Off: [2]int{x86Unknown, 0x28}, Versions: winver.Since(winver.V2004)},
		{Name: "RegListHead", Type: "LIST_ENTRY", Off: [2]int{x86Unknown, 0x28}, Versions: winver.Between(winver.V6_0, winver.V1909), Remark: "every ETW_REG_ENTRY of the provider, by their RegList"},
		{Name: "RegListHead", Type: "LIST_ENTRY", Off: [2]int{x86Unknown, 0x38}, Versions: winver.Since(winver.V2004)},
		{Name: "SecurityDescriptor", Type: "VOID *", Off: [2]int{x86Unknown, 0x38}, Versions: winver.Between(winver.V6_0, winver.V1909)},
		{Name: "SecurityDescriptor", Type: "VOID *", Off: [2]int{x86Unknown, 0x48}, Versions: winver.Since(winver.V2004)},
		{Name: "LegacyEnableContext; LegacyProviderEnabled", Type: "TRACE_ENABLE_CONTEXT; ULONG", Off: [2]int{x86Unknown, 0x40}, Versions: winver.Only(winver.V6_0), Remark: "early 6.0"},
		{Name: "LastEnable / MatchId", Type: "union", Off: [2]int{x86Unknown, 0x40}, Versions: winver.Between(winver.V6_1, winver.V1909), Remark: "the last legacy enable, or a ULONGLONG"},
		{Name: "LastEnable / MatchId", Type: "union", Off: [2]int{x86Unknown, 0x50}, Versions: winver.Since(winver.V2004)},
		{Name: "ProviderEnableInfo", Type: "TRACE_ENABLE_INFO", Off: [2]int{x86Unknown, 0x50}, Versions: winver.Between(winver.V6_0, winver.V1909), Remark: "the aggregate over every session"},
		{Name: "ProviderEnableInfo", Type: "TRACE_ENABLE_INFO", Off: [2]int{x86Unknown, 0x60}, Versions: winver.Since(winver.V2004)},
		{Name: "EnableInfo", Type: "TRACE_ENABLE_INFO [8]", Off: [2]int{x86Unknown, 0x70}, Versions: winver.Between(winver.V6_0, winver.V1909), Remark: "one slot per enabling session"},
		{Name: "EnableInfo", Type: "TRACE_ENABLE_INFO [8]", Off: [2]int{x86Unknown, 0x80}, Versions: winver.Since(winver.V2004)},
		{Name: "FilterData", Type: "EVENT_FILTER_HEADER * [8]", Off: [2]int{x86Unknown, 0x170}, Versions: winver.Only(winver.V6_1)},
		{Name: "FilterData", Type: "EVENT_FILTER_HEADER * *", Off: [2]int{x86Unknown, 0x170}, Versions: winver.Only(winver.V6_2)},
		{Name: "FilterData", Type: "ETW_FILTER_HEADER *", Off: [2]int{x86Unknown, 0x170}, Versions: winver.Between(winver.V6_3, winver.V1909)},
		{Name: "FilterData", Type: "ETW_FILTER_HEADER *", Off: [2]int{x86Unknown, 0x180}, Versions: winver.Since(winver.V2004)},
		{Name: "ServerSilo", Type: "ESILO *", Off: [2]int{x86Unknown, 0x178}, Versions: winver.Only(winver.V10_0)},
		{Name: "SiloState", Type: "ETW_SILODRIVERSTATE *", Off: [2]int{x86Unknown, 0x178}, Versions: winver.Between(winver.V1511, winver.V1909)},
		{Name: "SiloState", Type: "ETW_SILODRIVERSTATE *", Off: [2]int{x86Unknown, 0x188}, Versions: winver.Since(winver.V2004)},
		{Name: "HostEntry", Type: "ETW_GUID_ENTRY *", Off: [2]int{x86Unknown, 0x190}, Versions: winver.Since(winver.V2004)},
		{Name: "Lock", Type: "EX_PUSH_LOCK", Off: [2]int{x86Unknown, 0x180}, Versions: winver.Between(winver.V1511, winver.V1909)},
		{Name: "Lock", Type: "EX_PUSH_LOCK", Off: [2]int{x86Unknown, 0x198}, Versions: winver.Since(winver.V2004)},
		{Name: "LockOwner", Type: "ETHREAD *", Off: [2]int{x86Unknown, 0x188}, Versions: winver.Between(winver.V1511, winver.V1909)},
		{Name: "LockOwner", Type: "ETHREAD *", Off: [2]int{x86Unknown, 0x1A0}, Versions: winver.Since(winver.V2004)},
	},
}

// EnableInfo is TRACE_ENABLE_INFO, one session's enable state for a provider (the Windows
// SDK's evntrace.h; Microsoft Learn, "TRACE_ENABLE_INFO structure"): the slots of
// ETW_GUID_ENTRY and what EnumerateTraceGuidsEx returns per session. The same on x86 and
// x64.
var EnableInfo = Struct{
	Name:   "TRACE_ENABLE_INFO",
	Source: "evntrace.h (Windows SDK); Microsoft Learn, \"TRACE_ENABLE_INFO structure\"",
	Sizes: winver.Steps[[2]int]{
		{Since: winver.V5_0, Value: [2]int{0, 0}},
		{Since: winver.V6_0, Value: [2]int{0x20, 0x20}},
	},
	Members: []Member{
		{Name: "IsEnabled", Type: "ULONG", Off: [2]int{0x00, 0x00}, Versions: winver.Since(winver.V6_0)},
		{Name: "Level", Type: "UCHAR", Off: [2]int{0x04, 0x04}, Versions: winver.Since(winver.V6_0)},
		{Name: "Reserved1", Type: "UCHAR", Off: [2]int{0x05, 0x05}, Versions: winver.Since(winver.V6_0)},
		{Name: "LoggerId", Type: "USHORT", Off: [2]int{0x06, 0x06}, Versions: winver.Since(winver.V6_0)},
		{Name: "EnableProperty", Type: "ULONG", Off: [2]int{0x08, 0x08}, Versions: winver.Since(winver.V6_0)},
		{Name: "Reserved2", Type: "ULONG", Off: [2]int{0x0C, 0x0C}, Versions: winver.Since(winver.V6_0)},
		{Name: "MatchAnyKeyword", Type: "ULONGLONG", Off: [2]int{0x10, 0x10}, Versions: winver.Since(winver.V6_0)},
		{Name: "MatchAllKeyword", Type: "ULONGLONG", Off: [2]int{0x18, 0x18}, Versions: winver.Since(winver.V6_0)},
	},
}
