package layout

import "github.com/etwemu/etwemu/winver"

// RegEntry is ETW_REG_ENTRY, a provider registration (Geoff Chappell, "ETW_REG_ENTRY").
// Offsets are from Microsoft's public symbol files as that article reports them; the unions
// are one row each, named by their arms. Versions before 6.0 have none.
var RegEntry = Struct{
	Name:   "ETW_REG_ENTRY",
	Module: "nt",
	Source: "Geoff Chappell, \"ETW_REG_ENTRY\" (Microsoft's public symbols)",
	Sizes: winver.Steps[[2]int]{
		{Since: winver.V5_0, Value: [2]int{0, 0}},
		{Since: winver.V6_0, Value: [2]int{0x2C, 0x50}},
		{Since: winver.V6_2, Value: [2]int{0x28, 0x50}},
		{Since: winver.V10_0, Value: [2]int{0x3C, 0x70}},
	},
	Members: []Member{
		{Name: "RegList", Type: "LIST_ENTRY", Off: [2]int{0x00, 0x00}, Versions: winver.Since(winver.V6_0)},
		{Name: "GroupRegList", Type: "LIST_ENTRY", Off: [2]int{0x08, 0x10}, Versions: winver.Since(winver.V10_0)},
		{Name: "GuidEntry", Type: "ETW_GUID_ENTRY *", Off: [2]int{0x08, 0x10}, Versions: winver.Between(winver.V6_0, winver.V6_3)},
		{Name: "GuidEntry", Type: "ETW_GUID_ENTRY *", Off: [2]int{0x10, 0x20}, Versions: winver.Since(winver.V10_0)},
		{Name: "GroupEntry", Type: "ETW_GUID_ENTRY *", Off: [2]int{0x14, 0x28}, Versions: winver.Since(winver.V10_0)},
		{Name: "Index", Type: "USHORT", Off: [2]int{0x0C, 0x18}, Versions: winver.Between(winver.V6_0, winver.V6_1)},
		{Name: "Flags", Type: "USHORT", Off: [2]int{0x0E, 0x1A}, Versions: winver.Between(winver.V6_0, winver.V6_1)},
		{Name: "EnableMask", Type: "UCHAR", Off: [2]int{0x10, 0x1C}, Versions: winver.Between(winver.V6_0, winver.V6_1)},
		{Name: "ReplyQueue / ReplySlot[4] / SessionId", Type: "union", Off: [2]int{0x14, 0x20}, Versions: winver.Between(winver.V6_0, winver.V6_1)},
		{Name: "ReplyQueue / ReplySlot[4] / {Caller; SessionId}", Type: "union", Off: [2]int{0x0C, 0x18}, Versions: winver.Between(winver.V6_2, winver.V6_3)},
		{Name: "ReplyQueue / ReplySlot[4] / {Caller; SessionId}", Type: "union", Off: [2]int{0x18, 0x30}, Versions: winver.Since(winver.V10_0)},
		{Name: "Process / {Callback; CallbackContext}", Type: "union", Off: [2]int{0x24, 0x40}, Versions: winver.Between(winver.V6_0, winver.V6_1)},
		{Name: "Process / {CallbackContext; Callback}", Type: "union", Off: [2]int{0x1C, 0x38}, Versions: winver.Between(winver.V6_2, winver.V6_3)},
		{Name: "Process / {CallbackContext; Callback}", Type: "union", Off: [2]int{0x28, 0x50}, Versions: winver.Since(winver.V10_0)},
		{Name: "Index", Type: "USHORT", Off: [2]int{0x24, 0x48}, Versions: winver.Between(winver.V6_2, winver.V6_3)},
		{Name: "Index", Type: "USHORT", Off: [2]int{0x30, 0x60}, Versions: winver.Since(winver.V10_0)},
		{Name: "Flags", Type: "UCHAR", Off: [2]int{0x26, 0x4A}, Versions: winver.Between(winver.V6_2, winver.V6_3)},
		{Name: "Flags", Type: "UCHAR", Off: [2]int{0x32, 0x62}, Versions: winver.Between(winver.V10_0, winver.V1511)},
		{Name: "Flags", Type: "USHORT", Off: [2]int{0x32, 0x62}, Versions: winver.Since(winver.V1607)},
		{Name: "EnableMask", Type: "UCHAR", Off: [2]int{0x27, 0x4B}, Versions: winver.Between(winver.V6_2, winver.V6_3)},
		{Name: "EnableMask", Type: "UCHAR", Off: [2]int{0x33, 0x63}, Versions: winver.Between(winver.V10_0, winver.V1511)},
		{Name: "EnableMask", Type: "UCHAR", Off: [2]int{0x34, 0x64}, Versions: winver.Since(winver.V1607)},
		{Name: "GroupEnableMask", Type: "UCHAR", Off: [2]int{0x34, 0x64}, Versions: winver.Between(winver.V10_0, winver.V1511)},
		{Name: "GroupEnableMask", Type: "UCHAR", Off: [2]int{0x35, 0x65}, Versions: winver.Since(winver.V1607)},
		{Name: "UseDescriptorType", Type: "BOOLEAN", Off: [2]int{0x35, 0x65}, Versions: winver.Between(winver.V10_0, winver.V1511)},
		{Name: "UseDescriptorType", Type: "BOOLEAN", Off: [2]int{0x36, 0x66}, Versions: winver.Between(winver.V1607, winver.V1703)},
		{Name: "HostEnableMask", Type: "UCHAR", Off: [2]int{0x36, 0x66}, Versions: winver.Since(winver.V2004)},
		{Name: "HostGroupEnableMask", Type: "UCHAR", Off: [2]int{0x37, 0x67}, Versions: winver.Since(winver.V2004)},
		{Name: "Traits", Type: "ETW_PROVIDER_TRAITS *", Off: [2]int{0x38, 0x68}, Versions: winver.Since(winver.V10_0)},
	},
}
