package etl

import (
	"encoding/binary"
	"fmt"
	"unicode/utf16"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// Header kinds: the byte at offset 2 of a record whose byte 3 is 0xC0 (phnt ntwmi.h
// TRACE_HEADER_TYPE_*).
const (
	typeSystem32     = 0x01
	typeSystem64     = 0x02
	typeCompact32    = 0x03
	typeCompact64    = 0x04
	typeFullHeader32 = 0x0A
	typeInstance32   = 0x0B
	typeError        = 0x0D
	typePerfInfo32   = 0x10
	typePerfInfo64   = 0x11
	typeEvent32      = 0x12 // EVENT_HEADER32
	typeEvent64      = 0x13 // EVENT_HEADER64
	typeFullHeader64 = 0x14
	typeInstance64   = 0x15
)

// Marker flag bytes (the record's fourth byte).
const (
	flagsHeader  = 0xC0 // TRACE_HEADER_FLAG | TRACE_HEADER_EVENT_TRACE
	flagsMessage = 0x90 // TRACE_HEADER_FLAG | TRACE_MESSAGE
)

// Fixed sizes of the header kinds (phnt; dissect.etl's minimal sizes).
const (
	SystemHeaderSize   = abi.SystemHeaderSize // SYSTEM_TRACE_HEADER
	compactHeaderSize  = 0x18                 // COMPACT_HEADER_SIZE
	perfInfoHeaderSize = 0x10                 // PERFINFO_TRACE_HEADER
	fullHeaderSize     = 0x30                 // EVENT_TRACE_HEADER
	instanceHeaderSize = 0x48                 // EVENT_INSTANCE_GUID_HEADER
	messageHeaderSize  = 0x08                 // MESSAGE_TRACE_HEADER
)

// SystemTraceMarker64 is the first ULONG of an x64 SYSTEM_TRACE_HEADER: flags 0xC0, type
// SYSTEM64, SYSTEM_TRACE_VERSION 2.
const SystemTraceMarker64 = abi.SystemTraceMarker64

// Marker bits that add items after a system or perfinfo header (phnt
// TRACE_HEADER_PEBS_INDEX_FLAG, TRACE_HEADER_PMC_COUNTERS_MASK/SHIFT).
const (
	hookLogfileInfo = 0x0000 // WMI_LOG_TYPE_HEADER: EVENT_TRACE_GROUP_HEADER, EVENT_TRACE_TYPE_INFO
	// HookHeaderExtension is EventTrace/Extension (WMI_LOG_TYPE_HEADER_EXTENSION): the
	// kernel group masks (PERFINFO_GROUPMASK, eight ULONGs) and KernelEventVersion.
	HookHeaderExtension = 0x0005
	// HookPartitionInfo is EventTrace/PartitionInfoExtension (opcode 80): the
	// ETW_TRACE_PARTITION_INFORMATION of the partition (host, container) that traced.
	HookPartitionInfo = 0x0050
	// HookDbgIDRSDS is EventTrace/DbgIdRsds (phnt WMI_LOG_TYPE_DBGID_RSDS): the debug
	// identity (RSDS GUID, age, PDB name) of the binary that owns the session.
	HookDbgIDRSDS = 0x0040
	// HookBuildLab is EventTrace/BuildLab (phnt WMI_LOG_TYPE_BUILD_LAB): the system's
	// build lab string, such as "22621.1.amd64fre.ni_release.220506-1250".
	HookBuildLab = 0x0042
)

// Payload sizes of the header buffer's records after the log-file header event, as real
// files carry them (Size 0x44 and 0x50 with the 0x20-byte system header).
const (
	headerExtensionSize = 8*4 + 4      // GroupMask1..8, KernelEventVersion
	partitionInfoSize   = 16 + 16 + 16 // PartitionId, ParentId, QpcOffsetFromRoot, PartitionType and padding
)

// LogfileHeaderSize is sizeof(TRACE_LOGFILE_HEADER) on x64.
const LogfileHeaderSize = 0x118

const timeZoneSize = 0xAC // TIME_ZONE_INFORMATION

// LogfileHeader is TRACE_LOGFILE_HEADER, the payload of the first event of an ETL file,
// in its x64 layout. Not modelled: the LoggerName and LogFileName pointers (the names
// follow the structure as UTF-16 strings, which LoggerName and LogFileName here hold)
// and the time-zone rules beyond the bias and names.
//
// BuffersWritten is the logger's count of buffers written to the file, as
// WmipFinalizeHeader patches it from the logger context (WRK, 5.2). In a CIRCULAR file
// that count includes the buffers the wrap has since overwritten, so it can exceed what
// the file holds: Windows' own consumer (tracesup.c, the 5.2 ProcessTrace for trace
// format 1.2) limits BuffersWritten × BufferSize to MaximumFileSize for circular files
// and reads them to the quota, not to BuffersWritten. A reader that trusts the field
// runs past the end of a real circular file as of an emulated one; etl.Reader reads to
// the end of the file. The real files that realfiles.sh reads agree where they can:
// circular files of builds 22631 and 26100 that never wrapped hold BuffersWritten equal
// to the buffers in the file, buffer 0 included, and StartBuffers 1; a NEWFILE file of
// 22631 counts its own buffers while its SequenceNumbers go on from the files before it
// (908 to 913 in its eighth file), as etwemu's do; and the file of a session that had not
// stopped holds BuffersWritten 0 and EndTime 0 until WmipFinalizeHeader. No real wrapped
// circular file was found.
type LogfileHeader struct {
	BufferSize uint32
	// Version: OS major and minor, then the trace-format major and minor
	// (MajorVersion, MinorVersion, SubVersion, SubMinorVersion).
	MajorVersion, MinorVersion, SubVersion, SubMinorVersion uint8
	ProviderVersion                                         uint32 // the OS build number
	NumberOfProcessors                                      uint32
	EndTime                                                 int64 // FILETIME; patched when the file is finalized
	TimerResolution                                         uint32
	MaximumFileSize                                         uint32
	LogFileMode                                             uint32
	BuffersWritten                                          uint32 // buffers written to the file, this header's included; see below
	StartBuffers                                            uint32
	PointerSize                                             uint32
	EventsLost                                              uint32
	CPUSpeedMHz                                             uint32
	TimeZoneBias                                            int32 // minutes; the rest of TIME_ZONE_INFORMATION is zero
	BootTime                                                int64 // FILETIME
	PerfFreq                                                int64
	StartTime                                               int64  // FILETIME
	ReservedFlags                                           uint32 // the clock type
	BuffersLost                                             uint32 // LogBuffersLost

	LoggerName, LogFileName string
}

// Offsets inside TRACE_LOGFILE_HEADER (x64), for patching a finalized file.
const (
	offLfhEndTime        = 0x10
	offLfhBuffersWritten = 0x24
	offLfhEventsLost     = 0x30
	offLfhBuffersLost    = 0x114
)

// encode returns the header and the two names as the payload of the header event.
func (h *LogfileHeader) encode() []byte {
	names := append(utf16z(h.LoggerName), utf16z(h.LogFileName)...)
	b := make([]byte, LogfileHeaderSize+len(names))
	le := binary.LittleEndian
	le.PutUint32(b[0x00:], h.BufferSize)
	b[0x04], b[0x05], b[0x06], b[0x07] = h.MajorVersion, h.MinorVersion, h.SubVersion, h.SubMinorVersion
	le.PutUint32(b[0x08:], h.ProviderVersion)
	le.PutUint32(b[0x0C:], h.NumberOfProcessors)
	le.PutUint64(b[0x10:], uint64(h.EndTime))
	le.PutUint32(b[0x18:], h.TimerResolution)
	le.PutUint32(b[0x1C:], h.MaximumFileSize)
	le.PutUint32(b[0x20:], h.LogFileMode)
	le.PutUint32(b[0x24:], h.BuffersWritten)
	le.PutUint32(b[0x28:], h.StartBuffers)
	le.PutUint32(b[0x2C:], h.PointerSize)
	le.PutUint32(b[0x30:], h.EventsLost)
	le.PutUint32(b[0x34:], h.CPUSpeedMHz)
	// 0x38 LoggerName and 0x40 LogFileName: pointers, meaningless in a file; left zero.
	le.PutUint32(b[0x48:], uint32(h.TimeZoneBias))
	// 0x48+0xAC .. 0xF8: the rest of TIME_ZONE_INFORMATION and 4 bytes of padding.
	le.PutUint64(b[0xF8:], uint64(h.BootTime))
	le.PutUint64(b[0x100:], uint64(h.PerfFreq))
	le.PutUint64(b[0x108:], uint64(h.StartTime))
	le.PutUint32(b[0x110:], h.ReservedFlags)
	le.PutUint32(b[0x114:], h.BuffersLost)
	copy(b[LogfileHeaderSize:], names)
	return b
}

// DecodeLogfileHeader reads a TRACE_LOGFILE_HEADER and the two names after it from the
// payload of a log-file header event.
func DecodeLogfileHeader(p []byte) (LogfileHeader, error) {
	if len(p) < LogfileHeaderSize {
		return LogfileHeader{}, fmt.Errorf("TRACE_LOGFILE_HEADER needs %#x bytes, the event has %#x", LogfileHeaderSize, len(p))
	}
	le := binary.LittleEndian
	h := LogfileHeader{
		BufferSize:   le.Uint32(p[0x00:]),
		MajorVersion: p[0x04], MinorVersion: p[0x05], SubVersion: p[0x06], SubMinorVersion: p[0x07],
		ProviderVersion:    le.Uint32(p[0x08:]),
		NumberOfProcessors: le.Uint32(p[0x0C:]),
		EndTime:            int64(le.Uint64(p[0x10:])),
		TimerResolution:    le.Uint32(p[0x18:]),
		MaximumFileSize:    le.Uint32(p[0x1C:]),
		LogFileMode:        le.Uint32(p[0x20:]),
		BuffersWritten:     le.Uint32(p[0x24:]),
		StartBuffers:       le.Uint32(p[0x28:]),
		PointerSize:        le.Uint32(p[0x2C:]),
		EventsLost:         le.Uint32(p[0x30:]),
		CPUSpeedMHz:        le.Uint32(p[0x34:]),
		TimeZoneBias:       int32(le.Uint32(p[0x48:])),
		BootTime:           int64(le.Uint64(p[0xF8:])),
		PerfFreq:           int64(le.Uint64(p[0x100:])),
		StartTime:          int64(le.Uint64(p[0x108:])),
		ReservedFlags:      le.Uint32(p[0x110:]),
		BuffersLost:        le.Uint32(p[0x114:]),
	}
	rest := p[LogfileHeaderSize:]
	h.LoggerName, rest = readUTF16z(rest)
	h.LogFileName, _ = readUTF16z(rest)
	return h, nil
}

func utf16z(s string) []byte {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(u)+2)
	for i, c := range u {
		binary.LittleEndian.PutUint16(b[2*i:], c)
	}
	return b
}

// readUTF16z reads a NUL-terminated UTF-16 string (or all of b when it has no NUL) and
// returns what follows it.
func readUTF16z(b []byte) (string, []byte) {
	var u []uint16
	for i := 0; i+1 < len(b); i += 2 {
		c := binary.LittleEndian.Uint16(b[i:])
		if c == 0 {
			return string(utf16.Decode(u)), b[i+2:]
		}
		u = append(u, c)
	}
	return string(utf16.Decode(u)), nil
}

// SystemHeader is SYSTEM_TRACE_HEADER; see abi.SystemHeader.
type SystemHeader = abi.SystemHeader

// traceFormat is the trace-log format version a version's files carry in SubVersion and
// SubMinorVersion. phnt's history: 1.4 added the header stream, 1.5 (Windows 7) the QPC
// and platform clock in the header, 2.0 (Windows 8) buffers over 1 MB, more than 256
// processors and compression. Files written by Windows 10 2004 still say 1.5 (read off
// real files), so 2.0 is kept for the files that need it: compressed ones.
// [UNCERTAIN] which format versions before 6.1 wrote; 1.4 is assumed.
var traceFormat = winver.Steps[[2]uint8]{
	{Since: winver.V5_0, Value: [2]uint8{1, 4}},
	{Since: winver.V6_1, Value: [2]uint8{1, 5}},
}

// headerBufferType is the BufferType of buffer 0: WRK (5.2) writes the log-file header
// with RUNDOWN; files from Windows 10 carry ETW_BUFFER_TYPE_HEADER. [UNCERTAIN] the
// version that changed it; 6.0, where the header stream arrived, is assumed.
var headerBufferType = winver.Steps[uint16]{
	{Since: winver.V5_0, Value: abi.BufferTypeRundown},
	{Since: winver.V6_0, Value: abi.BufferTypeHeader},
}

// procIndexSince is the first version whose buffers carry ETW_BUFFER_FLAG_PROC_INDEX.
const procIndexSince = winver.V6_2

// headerBufferRule is what buffer 0 holds besides the log-file header event, and which
// clock fields its WMI_BUFFER_HEADER carries.
type headerBufferRule struct {
	// clock: TimeStamp, ReferenceTime and (6.2 on) the ClockType/Frequency word are set
	// to the session's start. Files written by Windows 10 (builds 18362 and 19041, the
	// three real files in etl-parser's test data) leave all of them 0 in buffer 0 and set
	// them only in data buffers.
	clock bool
	// partitionInfo: an EventTrace/PartitionInfoExtension record (hook 0x0050) follows
	// the header event, with the same thread, process and time; 48 zero bytes on a host
	// (PartitionId and ParentId GUID_NULL, QpcOffsetFromRoot 0, PartitionType 0). All
	// three real files carry it (marker version 2, Size 0x50).
	partitionInfo bool
	// kernelEventVersion, if not 0, is the KernelEventVersion of the EventTrace/Extension
	// record (hook 0x0005) that a SYSTEM_LOGGER_MODE session writes between the header
	// event and the partition record: 70 in the real 18362 system-logger file, with
	// every group mask 0.
	kernelEventVersion uint32
}

// headerBufferRules keys headerBufferRule by version. [UNCERTAIN] the versions where each
// change came: ETW_TRACE_PARTITION_INFORMATION is documented from Windows 10 1709, so
// the partition record is written from 1709; the zero clock fields are assumed from the
// first Windows 10; KernelEventVersion is known for 1903 only (one decoder's test data
// shows 25 on an unnamed older version), so earlier system loggers write no extension.
var headerBufferRules = winver.Steps[headerBufferRule]{
	{Since: winver.V5_0, Value: headerBufferRule{clock: true}},
	{Since: winver.V10_0, Value: headerBufferRule{}},
	{Since: winver.V1709, Value: headerBufferRule{partitionInfo: true}},
	{Since: winver.V1903, Value: headerBufferRule{partitionInfo: true, kernelEventVersion: 70}},
}

// systemLoggerMode is EVENT_TRACE_SYSTEM_LOGGER_MODE, which the file copy of LogFileMode
// keeps (the real system-logger file says SECURE,SYSTEM_LOGGER).
const systemLoggerMode = 0x02000000

// HeaderInfo is what a writer needs to know of its session for buffer 0.
type HeaderInfo struct {
	Version     winver.Version
	LoggerName  string
	LoggerID    uint16 // as written in buffers (0xFFFF for logger 0)
	Processors  uint32
	ClockType   uint32 // 1 QPC, 2 system time, 3 CPU cycles
	PerfFreq    int64  // ticks per second of the session clock
	StartTime   int64  // FILETIME at start
	StartPerf   int64  // session clock at start
	BootTime    int64  // FILETIME of the emulated boot
	CPUSpeedMHz uint32
	ThreadID    uint32 // the logger thread
	ProcessID   uint32
	LogFileMode uint32
	MaxFileSize uint32 // as configured: MB, or KB with EVENT_TRACE_USE_KBYTES_FOR_SIZE
}

// realTimeMode is EVENT_TRACE_REAL_TIME_MODE, which the file copy of LogFileMode drops
// (WRK).
const realTimeMode = 0x100

// timerResolution is the clock interrupt period written into files: 15.625 ms in 100 ns
// units, what Windows files carry.
const timerResolution = 156250

// headerFor builds the TRACE_LOGFILE_HEADER of a new file.
func headerFor(info *HeaderInfo, bufSize uint32, logFileName string, compressed bool) LogfileHeader {
	major, minor := info.Version.Numbers()
	f := traceFormat.At(info.Version)
	if compressed {
		f = [2]uint8{2, 0}
	}
	return LogfileHeader{
		BufferSize: bufSize, MajorVersion: major, MinorVersion: minor, SubVersion: f[0], SubMinorVersion: f[1],
		ProviderVersion: info.Version.Build(), NumberOfProcessors: info.Processors,
		TimerResolution: timerResolution, MaximumFileSize: info.MaxFileSize,
		LogFileMode: info.LogFileMode &^ realTimeMode, BuffersWritten: 1, StartBuffers: 1, PointerSize: 8,
		CPUSpeedMHz: info.CPUSpeedMHz, BootTime: info.BootTime, PerfFreq: info.PerfFreq,
		StartTime: info.StartTime, ReservedFlags: info.ClockType,
		LoggerName: info.LoggerName, LogFileName: logFileName,
	}
}

// checkFile refuses, with ERROR_INVALID_PARAMETER, a file of a version the emulator does
// not know or of a BufferSize outside [0x48, MAX_ETW_BUFFER_SIZE]: Create before it
// allocates or creates anything, HeaderBuffer for its own callers.
func checkFile(v winver.Version, bufSize uint32) error {
	if !v.Valid() {
		return winerr.New(winerr.ErrInvalidParameter, "HeaderInfo.Version %s is not one of the emulated versions (%s to %s)", v, winver.Oldest, winver.Newest)
	}
	if bufSize < abi.BufferHeaderSize || bufSize > maxBufferSize {
		return winerr.New(winerr.ErrInvalidParameter, "BufferSize %d is outside [%d, %d] (a WMI_BUFFER_HEADER to MAX_ETW_BUFFER_SIZE)", bufSize, abi.BufferHeaderSize, maxBufferSize)
	}
	return nil
}

// HeaderBuffer builds buffer 0 of a file: a sealed buffer of bufSize bytes whose first
// record is the log-file header event, a SYSTEM_TRACE_HEADER (hook 0x0000) followed by
// h and the two names, and then, as the version's headerBufferRule says, the
// EventTrace/Extension of a system logger (hook 0x0005) and EventTrace/PartitionInfoExtension
// (hook 0x0050). It fails when the records do not fit.
func HeaderBuffer(info *HeaderInfo, h *LogfileHeader, bufSize uint32) ([]byte, error) {
	if err := checkFile(info.Version, bufSize); err != nil {
		return nil, err
	}
	rule := headerBufferRules.At(info.Version)
	type record struct {
		hook    uint16
		payload []byte
	}
	recs := []record{{hookLogfileInfo, h.encode()}}
	if rule.kernelEventVersion != 0 && info.LogFileMode&systemLoggerMode != 0 {
		p := make([]byte, headerExtensionSize)
		binary.LittleEndian.PutUint32(p[8*4:], rule.kernelEventVersion)
		recs = append(recs, record{HookHeaderExtension, p})
	}
	if rule.partitionInfo {
		recs = append(recs, record{HookPartitionInfo, make([]byte, partitionInfoSize)})
	}
	b := make([]byte, bufSize)
	end := abi.BufferHeaderSize
	for _, r := range recs {
		size := SystemHeaderSize + len(r.payload)
		if size > 0xFFFF || uint32(end+abi.Align(size)) > bufSize {
			return nil, fmt.Errorf("log-file header records of %#x bytes do not fit a %d-byte buffer", end+size, bufSize)
		}
		sh := SystemHeader{
			Marker: SystemTraceMarker64, Size: uint16(size), HookID: r.hook,
			ThreadID: info.ThreadID, ProcessID: info.ProcessID, SystemTime: info.StartPerf,
		}
		sh.Encode(b[end:])
		copy(b[end+SystemHeaderSize:], r.payload)
		end += abi.Align(size)
	}
	abi.FillUnused(b[end:])
	flag := uint16(abi.BufferFlagFlushMarker)
	if info.Version >= procIndexSince {
		flag |= abi.BufferFlagProcIndex
	}
	bh := abi.BufferHeader{
		BufferSize: bufSize, SavedOffset: uint32(end), CurrentOffset: uint32(end),
		LoggerID: info.LoggerID, State: abi.BufferStateFlush,
		Offset: uint32(end), BufferFlag: flag, BufferType: headerBufferType.At(info.Version),
		Alignment: abi.TraceAlignment,
	}
	if rule.clock {
		bh.TimeStamp, bh.StartTime, bh.StartPerfClock = info.StartPerf, info.StartTime, info.StartPerf
	}
	if info.Version >= procIndexSince {
		bh.Alignment = 0 // ProcessorIndex 0
		if rule.clock {
			bh.ClockFrequency = abi.ClockFrequency(info.ClockType, info.PerfFreq)
		}
	}
	bh.Encode(b)
	return b, nil
}

// logfileHeaderOffset is where TRACE_LOGFILE_HEADER starts in buffer 0.
const logfileHeaderOffset = abi.BufferHeaderSize + SystemHeaderSize
