package layout

import "github.com/etwemu/etwemu/winver"

// BufferHeader is WMI_BUFFER_HEADER, the 0x48 bytes at the start of every trace buffer, the
// same on x86 and x64, from phnt's ntwmi.h (System Informer's native headers, which assert
// the size and every offset) and Geoff Chappell, "WMI_BUFFER_HEADER". The two unions are one
// row each, named by their arms.
var BufferHeader = Struct{
	Name:   "WMI_BUFFER_HEADER",
	Module: "nt",
	Source: "phnt ntwmi.h (asserts the size and offsets); Geoff Chappell, \"WMI_BUFFER_HEADER\"",
	Sizes:  winver.Steps[[2]int]{{Since: winver.V5_0, Value: [2]int{0x48, 0x48}}},
	Members: since(winver.V5_0, []Member{
		{Name: "BufferSize", Type: "ULONG", Off: [2]int{0x00, 0x00}},
		{Name: "SavedOffset", Type: "ULONG", Off: [2]int{0x04, 0x04}},
		{Name: "CurrentOffset", Type: "ULONG volatile", Off: [2]int{0x08, 0x08}},
		{Name: "ReferenceCount", Type: "LONG volatile", Off: [2]int{0x0C, 0x0C}},
		{Name: "TimeStamp", Type: "LARGE_INTEGER", Off: [2]int{0x10, 0x10}},
		{Name: "SequenceNumber", Type: "LONGLONG", Off: [2]int{0x18, 0x18}},
		{Name: "SlistEntry / NextBuffer / Padding0[2]", Type: "union", Off: [2]int{0x20, 0x20}, Versions: winver.Between(winver.V5_0, winver.V6_1),
			Remark: "Padding0 is known for 6.1; earlier versions' third arm is not established"},
		{Name: "SlistEntry / NextBuffer / {ClockType:3; Frequency:61}", Type: "union", Off: [2]int{0x20, 0x20}, Versions: winver.Since(winver.V6_2)},
		{Name: "ClientContext", Type: "ETW_BUFFER_CONTEXT", Off: [2]int{0x28, 0x28},
			Remark: "ProcessorNumber and Alignment (UCHAR each), or ProcessorIndex (USHORT, 6.2 on); then USHORT LoggerId"},
		{Name: "State", Type: "ETW_BUFFER_STATE", Off: [2]int{0x2C, 0x2C}},
		{Name: "Offset", Type: "ULONG", Off: [2]int{0x30, 0x30}, Remark: "filled bytes, the header included"},
		{Name: "BufferFlag", Type: "USHORT", Off: [2]int{0x34, 0x34}},
		{Name: "BufferType", Type: "USHORT", Off: [2]int{0x36, 0x36}},
		{Name: "ReferenceTime / GlobalEntry / Padding1[4]", Type: "union", Off: [2]int{0x38, 0x38},
			Remark: "ETW_REF_CLOCK {StartTime; StartPerfClock}, or the GlobalList link"},
	}),
}

// EventHeader is EVENT_HEADER, the 0x50-byte header of a manifest or TraceLogging event
// in a buffer (public, evntcons.h), from 6.0.
var EventHeader = Struct{
	Name:   "EVENT_HEADER",
	Source: "evntcons.h (Windows SDK)",
	Sizes: winver.Steps[[2]int]{
		{Since: winver.V5_0, Value: [2]int{0, 0}},
		{Since: winver.V6_0, Value: [2]int{0x50, 0x50}},
	},
	Members: since(winver.V6_0, []Member{
		{Name: "Size", Type: "USHORT", Off: [2]int{0x00, 0x00}},
		{Name: "HeaderType", Type: "USHORT", Off: [2]int{0x02, 0x02}},
		{Name: "Flags", Type: "USHORT", Off: [2]int{0x04, 0x04}},
		{Name: "EventProperty", Type: "USHORT", Off: [2]int{0x06, 0x06}},
		{Name: "ThreadId", Type: "ULONG", Off: [2]int{0x08, 0x08}},
		{Name: "ProcessId", Type: "ULONG", Off: [2]int{0x0C, 0x0C}},
		{Name: "TimeStamp", Type: "LARGE_INTEGER", Off: [2]int{0x10, 0x10}},
		{Name: "ProviderId", Type: "GUID", Off: [2]int{0x18, 0x18}},
		{Name: "EventDescriptor", Type: "EVENT_DESCRIPTOR", Off: [2]int{0x28, 0x28}},
		{Name: "KernelTime / UserTime / ProcessorTime", Type: "union", Off: [2]int{0x38, 0x38},
			Remark: "ULONG KernelTime and ULONG UserTime, or ULONG64 ProcessorTime for private sessions"},
		{Name: "ActivityId", Type: "GUID", Off: [2]int{0x40, 0x40}},
	}),
}
