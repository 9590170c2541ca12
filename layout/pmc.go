package layout

import "github.com/etwemu/etwemu/winver"

// PMCSupport is ETW_PMC_SUPPORT, a logger's processor-counter state (Geoff Chappell,
// "ETW_PMC_SUPPORT", from Microsoft's public symbol files for Windows 8 and higher).
// ProcessorCtrs is an ANYSIZE_ARRAY: the sizes count one element. Before 6.2 there is none.
var PMCSupport = Struct{
	Name:   "ETW_PMC_SUPPORT",
	Module: "nt",
	Source: "Geoff Chappell, \"ETW_PMC_SUPPORT\" (Microsoft's public symbols, Windows 8 and later)",
	Sizes: winver.Steps[[2]int]{
		{Since: winver.V5_0, Value: [2]int{0, 0}},
		{Since: winver.V6_2, Value: [2]int{0x24, 0x28}},
		{Since: winver.V1703, Value: [2]int{0x34, 0x38}},
		{Since: winver.V1903, Value: [2]int{0x18, 0x20}},
	},
	Members: []Member{
		{Name: "Source", Type: "KPROFILE_SOURCE [4]", Off: [2]int{0x00, 0x00}, Versions: winver.Between(winver.V6_2, winver.V1607)},
		{Name: "Source", Type: "KPROFILE_SOURCE [8]", Off: [2]int{0x00, 0x00}, Versions: winver.Between(winver.V1703, winver.V1809)},
		{Name: "Source", Type: "KPROFILE_SOURCE *", Off: [2]int{0x00, 0x00}, Versions: winver.Since(winver.V1903)},
		{Name: "HookIdCount", Type: "ULONG volatile", Off: [2]int{0x10, 0x10}, Versions: winver.Between(winver.V6_2, winver.V1607)},
		{Name: "HookIdCount", Type: "ULONG volatile", Off: [2]int{0x20, 0x20}, Versions: winver.Between(winver.V1703, winver.V1809)},
		{Name: "HookIdCount", Type: "ULONG volatile", Off: [2]int{0x04, 0x08}, Versions: winver.Since(winver.V1903)},
		{Name: "HookId", Type: "USHORT [4]", Off: [2]int{0x14, 0x14}, Versions: winver.Between(winver.V6_2, winver.V1607)},
		{Name: "HookId", Type: "USHORT [4]", Off: [2]int{0x24, 0x24}, Versions: winver.Between(winver.V1703, winver.V1809)},
		{Name: "HookId", Type: "USHORT [4]", Off: [2]int{0x08, 0x0C}, Versions: winver.Since(winver.V1903)},
		{Name: "CountersCount", Type: "ULONG volatile", Off: [2]int{0x1C, 0x1C}, Versions: winver.Between(winver.V6_2, winver.V1607)},
		{Name: "CountersCount", Type: "ULONG volatile", Off: [2]int{0x2C, 0x2C}, Versions: winver.Between(winver.V1703, winver.V1809)},
		{Name: "CountersCount", Type: "ULONG volatile", Off: [2]int{0x10, 0x14}, Versions: winver.Since(winver.V1903)},
		{Name: "ProcessorCtrs", Type: "HAL_PMC_COUNTERS * [ANYSIZE_ARRAY]", Off: [2]int{0x20, 0x20}, Versions: winver.Between(winver.V6_2, winver.V1607)},
		{Name: "ProcessorCtrs", Type: "HAL_PMC_COUNTERS * [ANYSIZE_ARRAY]", Off: [2]int{0x30, 0x30}, Versions: winver.Between(winver.V1703, winver.V1809)},
		{Name: "ProcessorCtrs", Type: "HAL_PMC_COUNTERS * [ANYSIZE_ARRAY]", Off: [2]int{0x14, 0x18}, Versions: winver.Since(winver.V1903)},
	},
}
