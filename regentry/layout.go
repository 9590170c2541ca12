package regentry

import "github.com/etwemu/etwemu/winver"

// Field is one member of ETW_REG_ENTRY as one version lays it out.
type Field struct {
	Name     string
	Type     string
	OffX86   int
	OffX64   int
	Versions winver.Range
}

// Layout is ETW_REG_ENTRY in one version: its sizes and members in offset order.
type Layout struct {
	Version  winver.Version
	SizeX86  int
	SizeX64  int
	Fields   []Field
	Verified bool // false for versions before 6.0, which have no ETW_REG_ENTRY
}

// layoutFields is seed 002's table, one row per (member, version range). Offsets are from
// Microsoft's symbol files as Chappell reports them.
var layoutFields = []Field{
	{"RegList", "LIST_ENTRY", 0x00, 0x00, winver.Since(winver.V6_0)},
	{"GroupRegList", "LIST_ENTRY", 0x08, 0x10, winver.Since(winver.V10_0)},
	{"GuidEntry", "ETW_GUID_ENTRY *", 0x08, 0x10, winver.Between(winver.V6_0, winver.V6_3)},
	{"GuidEntry", "ETW_GUID_ENTRY *", 0x10, 0x20, winver.Since(winver.V10_0)},
	{"GroupEntry", "ETW_GUID_ENTRY *", 0x14, 0x28, winver.Since(winver.V10_0)},
	{"Index", "USHORT", 0x0C, 0x18, winver.Between(winver.V6_0, winver.V6_1)},
	{"Flags", "USHORT", 0x0E, 0x1A, winver.Between(winver.V6_0, winver.V6_1)},
	{"EnableMask", "UCHAR", 0x10, 0x1C, winver.Between(winver.V6_0, winver.V6_1)},
	{"ReplyQueue / ReplySlot[4] / SessionId", "union", 0x14, 0x20, winver.Between(winver.V6_0, winver.V6_1)},
	{"ReplyQueue / ReplySlot[4] / {Caller; SessionId}", "union", 0x0C, 0x18, winver.Between(winver.V6_2, winver.V6_3)},
	{"ReplyQueue / ReplySlot[4] / {Caller; SessionId}", "union", 0x18, 0x30, winver.Since(winver.V10_0)},
	{"Process / {Callback; CallbackContext}", "union", 0x24, 0x40, winver.Between(winver.V6_0, winver.V6_1)},
	{"Process / {CallbackContext; Callback}", "union", 0x1C, 0x38, winver.Between(winver.V6_2, winver.V6_3)},
	{"Process / {CallbackContext; Callback}", "union", 0x28, 0x50, winver.Since(winver.V10_0)},
	{"Index", "USHORT", 0x24, 0x48, winver.Between(winver.V6_2, winver.V6_3)},
	{"Index", "USHORT", 0x30, 0x60, winver.Since(winver.V10_0)},
	{"Flags", "UCHAR", 0x26, 0x4A, winver.Between(winver.V6_2, winver.V6_3)},
	{"Flags", "UCHAR", 0x32, 0x62, winver.Between(winver.V10_0, winver.V1511)},
	{"Flags", "USHORT", 0x32, 0x62, winver.Since(winver.V1607)},
	{"EnableMask", "UCHAR", 0x27, 0x4B, winver.Between(winver.V6_2, winver.V6_3)},
	{"EnableMask", "UCHAR", 0x33, 0x63, winver.Between(winver.V10_0, winver.V1511)},
	{"EnableMask", "UCHAR", 0x34, 0x64, winver.Since(winver.V1607)},
	{"GroupEnableMask", "UCHAR", 0x34, 0x64, winver.Between(winver.V10_0, winver.V1511)},
	{"GroupEnableMask", "UCHAR", 0x35, 0x65, winver.Since(winver.V1607)},
	{"UseDescriptorType", "BOOLEAN", 0x35, 0x65, winver.Between(winver.V10_0, winver.V1511)},
	{"UseDescriptorType", "BOOLEAN", 0x36, 0x66, winver.Between(winver.V1607, winver.V1703)},
	{"HostEnableMask", "UCHAR", 0x36, 0x66, winver.Since(winver.V2004)},
	{"HostGroupEnableMask", "UCHAR", 0x37, 0x67, winver.Since(winver.V2004)},
	{"Traits", "ETW_PROVIDER_TRAITS *", 0x38, 0x68, winver.Since(winver.V10_0)},
}

// sizes is seed 002's size table.
var sizes = winver.Steps[[2]int]{
	{Since: winver.V5_0, Value: [2]int{0, 0}},
	{Since: winver.V6_0, Value: [2]int{0x2C, 0x50}},
	{Since: winver.V6_2, Value: [2]int{0x28, 0x50}},
	{Since: winver.V10_0, Value: [2]int{0x3C, 0x70}},
}

// LayoutOf returns ETW_REG_ENTRY as version v lays it out, members sorted by x64 offset.
// Versions before 6.0 have no ETW_REG_ENTRY; their layout is empty and not Verified.
func LayoutOf(v winver.Version) Layout {
	s := sizes.At(v)
	l := Layout{Version: v, SizeX86: s[0], SizeX64: s[1], Verified: v >= winver.V6_0}
	for _, f := range layoutFields {
		if f.Versions.Contains(v) {
			l.Fields = append(l.Fields, f)
		}
	}
	for i := 1; i < len(l.Fields); i++ { // insertion sort by x64 offset; the table is small
		for j := i; j > 0 && l.Fields[j].OffX64 < l.Fields[j-1].OffX64; j-- {
			l.Fields[j], l.Fields[j-1] = l.Fields[j-1], l.Fields[j]
		}
	}
	return l
}

// Field returns the member named name in l, or false.
func (l Layout) Field(name string) (Field, bool) {
	for _, f := range l.Fields {
		if f.Name == name {
			return f, true
		}
	}
	return Field{}, false
}
