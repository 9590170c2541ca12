package layout

import "github.com/etwemu/etwemu/winver"

// LoggerContext is WMI_LOGGER_CONTEXT, the kernel's object for one tracing session
// (reference digest section 1.3), x64 only, from the symbol-derived header of build
// 19569, a 20H2-era build: the catalogue shows it as 2004, the newest version etwemu
// emulates, though the layout changes from build to build [UNCERTAIN for 2004 itself].
// Rows the digest gives as a range of members without their offsets are one row each,
// named by their members. The emulator's session.Logger keeps what these members mean,
// not their bytes.
var LoggerContext = Struct{
	Name:   "WMI_LOGGER_CONTEXT",
	Source: "reference digest section 1.3 (symbol-derived header of build 19569, x64; sizes of other versions, not catalogued: 6.1 0x330, 6.2 to 6.3 0x378, 10.0 0x398)",
	Sizes: winver.Steps[[2]int]{
		{Since: winver.V5_0, Value: [2]int{0, 0}},
		{Since: winver.V2004, Value: [2]int{0, 0x550}},
	},
	Members: lc([]Member{
		{Name: "LoggerId", Type: "ULONG", Off: [2]int{x86Unknown, 0x000}, Remark: "index in the logger table"},
		{Name: "BufferSize", Type: "ULONG", Off: [2]int{x86Unknown, 0x004}, Remark: "bytes"},
		{Name: "MaximumEventSize", Type: "ULONG", Off: [2]int{x86Unknown, 0x008}},
		{Name: "LoggerMode", Type: "ULONG", Off: [2]int{x86Unknown, 0x00C}, Remark: "EVENT_TRACE_* mode bits"},
		{Name: "AcceptNewEvents", Type: "LONG", Off: [2]int{x86Unknown, 0x010}, Remark: "checked at reservation; negative refuses [UNCERTAIN]"},
		{Name: "EventMarker", Type: "ULONG [2]", Off: [2]int{x86Unknown, 0x014}},
		{Name: "ErrorMarker", Type: "ULONG", Off: [2]int{x86Unknown, 0x01C}},
		{Name: "SizeMask", Type: "ULONG", Off: [2]int{x86Unknown, 0x020}},
		{Name: "GetCpuClock", Type: "LONGLONG", Off: [2]int{x86Unknown, 0x028}, Remark: "the clock ClockType selects"},
		{Name: "LoggerThread", Type: "ETHREAD *", Off: [2]int{x86Unknown, 0x030}},
		{Name: "LoggerStatus", Type: "LONG", Off: [2]int{x86Unknown, 0x038}},
		{Name: "FailureReason", Type: "ULONG", Off: [2]int{x86Unknown, 0x03C}},
		{Name: "BufferQueue", Type: "ETW_BUFFER_QUEUE", Off: [2]int{x86Unknown, 0x040}, Remark: "full buffers waiting to be flushed"},
		{Name: "OverflowQueue", Type: "ETW_BUFFER_QUEUE", Off: [2]int{x86Unknown, 0x050}},
		{Name: "GlobalList", Type: "LIST_ENTRY", Off: [2]int{x86Unknown, 0x060}, Remark: "every buffer of the session, by WMI_BUFFER_HEADER.GlobalEntry"},
		{Name: "DebugIdTrackingList", Type: "LIST_ENTRY", Off: [2]int{x86Unknown, 0x070}},
		{Name: "DecodeControlList", Type: "PVOID", Off: [2]int{x86Unknown, 0x080}},
		{Name: "DecodeControlCount", Type: "ULONG", Off: [2]int{x86Unknown, 0x088}},
		{Name: "BatchedBufferList / CurrentBuffer", Type: "union", Off: [2]int{x86Unknown, 0x090}, Remark: "WMI_BUFFER_HEADER * or EX_FAST_REF"},
		{Name: "LoggerName", Type: "UNICODE_STRING", Off: [2]int{x86Unknown, 0x098}},
		{Name: "LogFileName", Type: "UNICODE_STRING", Off: [2]int{x86Unknown, 0x0A8}},
		{Name: "LogFilePattern", Type: "UNICODE_STRING", Off: [2]int{x86Unknown, 0x0B8}, Remark: "the %d pattern of EVENT_TRACE_FILE_MODE_NEWFILE"},
		{Name: "NewLogFileName", Type: "UNICODE_STRING", Off: [2]int{x86Unknown, 0x0C8}},
		{Name: "ClockType", Type: "ULONG", Off: [2]int{x86Unknown, 0x0D8}},
		{Name: "LastFlushedBuffer", Type: "ULONG", Off: [2]int{x86Unknown, 0x0DC}, Remark: "buffers in the file"},
		{Name: "FlushTimer", Type: "ULONG", Off: [2]int{x86Unknown, 0x0E0}},
		{Name: "FlushThreshold", Type: "ULONG", Off: [2]int{x86Unknown, 0x0E4}},
		{Name: "ByteOffset", Type: "LARGE_INTEGER", Off: [2]int{x86Unknown, 0x0E8}, Remark: "next write offset in the file"},
		{Name: "MinimumBuffers", Type: "ULONG", Off: [2]int{x86Unknown, 0x0F0}},
		{Name: "BuffersAvailable", Type: "LONG volatile", Off: [2]int{x86Unknown, 0x0F4}},
		{Name: "NumberOfBuffers", Type: "LONG volatile", Off: [2]int{x86Unknown, 0x0F8}},
		{Name: "MaximumBuffers", Type: "ULONG", Off: [2]int{x86Unknown, 0x0FC}},
		{Name: "EventsLost", Type: "ULONG volatile", Off: [2]int{x86Unknown, 0x100}},
		{Name: "PeakBuffersCount", Type: "LONG volatile", Off: [2]int{x86Unknown, 0x104}},
		{Name: "BuffersWritten", Type: "ULONG", Off: [2]int{x86Unknown, 0x108}},
		{Name: "LogBuffersLost", Type: "ULONG", Off: [2]int{x86Unknown, 0x10C}},
		{Name: "RealTimeBuffersDelivered", Type: "ULONG", Off: [2]int{x86Unknown, 0x110}},
		{Name: "RealTimeBuffersLost", Type: "ULONG", Off: [2]int{x86Unknown, 0x114}},
		{Name: "SequencePtr", Type: "LONG *", Off: [2]int{x86Unknown, 0x118}},
		{Name: "LocalSequence", Type: "ULONG", Off: [2]int{x86Unknown, 0x120}},
		{Name: "InstanceGuid", Type: "GUID", Off: [2]int{x86Unknown, 0x124}},
		{Name: "MaximumFileSize", Type: "ULONG", Off: [2]int{x86Unknown, 0x134}},
		{Name: "FileCounter", Type: "LONG", Off: [2]int{x86Unknown, 0x138}},
		{Name: "PoolType", Type: "POOL_TYPE", Off: [2]int{x86Unknown, 0x13C}},
		{Name: "ReferenceTime", Type: "ETW_REF_CLOCK", Off: [2]int{x86Unknown, 0x140}, Remark: "system time and the raw clock at start"},
		{Name: "CollectionOn", Type: "LONG", Off: [2]int{x86Unknown, 0x150}},
		{Name: "ProviderInfoSize", Type: "ULONG", Off: [2]int{x86Unknown, 0x154}},
		{Name: "Consumers ... NewRTEventsLost", Type: "[128 bytes]", Off: [2]int{x86Unknown, 0x158}, Remark: "real-time consumers and the real-time backup file; the digest gives no offsets of their own"},
		{Name: "LoggerEvent", Type: "KEVENT", Off: [2]int{x86Unknown, 0x1D8}, Remark: "start and stop handshake"},
		{Name: "FlushEvent", Type: "KEVENT", Off: [2]int{x86Unknown, 0x1F0}},
		{Name: "FlushTimeOutTimer", Type: "KTIMER", Off: [2]int{x86Unknown, 0x208}},
		{Name: "LoggerDpc", Type: "KDPC", Off: [2]int{x86Unknown, 0x248}},
		{Name: "LoggerMutex", Type: "KMUTANT", Off: [2]int{x86Unknown, 0x288}},
		{Name: "LoggerLock", Type: "EX_PUSH_LOCK", Off: [2]int{x86Unknown, 0x2C0}},
		{Name: "BufferListSpinLock / BufferListPushLock", Type: "union", Off: [2]int{x86Unknown, 0x2C8}},
		{Name: "ClientSecurityContext", Type: "SECURITY_CLIENT_CONTEXT", Off: [2]int{x86Unknown, 0x2D0}},
		{Name: "TokenAccessInformation", Type: "TOKEN_ACCESS_INFORMATION *", Off: [2]int{x86Unknown, 0x318}},
		{Name: "SecurityDescriptor", Type: "EX_FAST_REF", Off: [2]int{x86Unknown, 0x320}},
		{Name: "StartTime", Type: "LARGE_INTEGER", Off: [2]int{x86Unknown, 0x328}},
		{Name: "LogFileHandle", Type: "HANDLE", Off: [2]int{x86Unknown, 0x330}},
		{Name: "BufferSequenceNumber", Type: "LONGLONG", Off: [2]int{x86Unknown, 0x338}, Remark: "source of WMI_BUFFER_HEADER.SequenceNumber [UNCERTAIN]"},
		{Name: "Flags", Type: "ULONG", Off: [2]int{x86Unknown, 0x340}, Remark: "bit fields"},
		{Name: "RequestFlag", Type: "ULONG volatile", Off: [2]int{x86Unknown, 0x344}, Remark: "bit fields: requests for the logger thread"},
		{Name: "StackTraceBlock", Type: "ETW_STACK_TRACE_BLOCK", Off: [2]int{x86Unknown, 0x350}},
		{Name: "HookIdMap", Type: "RTL_BITMAP", Off: [2]int{x86Unknown, 0x3D0}},
		{Name: "StackCache", Type: "ETW_STACK_CACHE *", Off: [2]int{x86Unknown, 0x3E0}},
		{Name: "PmcData", Type: "ETW_PMC_SUPPORT *", Off: [2]int{x86Unknown, 0x3E8}},
		{Name: "LbrData", Type: "ETW_LBR_SUPPORT *", Off: [2]int{x86Unknown, 0x3F0}},
		{Name: "IptData", Type: "ETW_IPT_SUPPORT *", Off: [2]int{x86Unknown, 0x3F8}},
		{Name: "BinaryTrackingList", Type: "LIST_ENTRY", Off: [2]int{x86Unknown, 0x400}},
		{Name: "ScratchArray", Type: "WMI_BUFFER_HEADER **", Off: [2]int{x86Unknown, 0x410}},
		{Name: "DisallowedGuids", Type: "DISALLOWED_GUIDS", Off: [2]int{x86Unknown, 0x418}, Remark: "{USHORT Count; GUID *Guids}"},
		{Name: "RelativeTimerDueTime ... PeriodicCaptureStateTimerState", Type: "[40 bytes]", Off: [2]int{x86Unknown, 0x428}, Remark: "periodic CAPTURE_STATE"},
		{Name: "SoftRestartContext", Type: "PVOID", Off: [2]int{x86Unknown, 0x450}},
		{Name: "SiloState", Type: "ETW_SILODRIVERSTATE *", Off: [2]int{x86Unknown, 0x458}},
		{Name: "CompressionWorkItem ... CompressionDpc", Type: "[152 bytes]", Off: [2]int{x86Unknown, 0x460}, Remark: "kernel-side buffer compression (1607 and later)"},
		{Name: "LastBufferSwitchTime ... BufferMdl", Type: "[88 bytes]", Off: [2]int{x86Unknown, 0x4F8}, Remark: "timings, drop times, partition context"},
	}),
}

// lc gives every row of WMI_LOGGER_CONTEXT the one version its source describes.
func lc(ms []Member) []Member {
	for i := range ms {
		ms[i].Versions = winver.Since(winver.V2004)
	}
	return ms
}
