package tracelogging

import "fmt"

// InType is a field's encoding in the payload (the low 5 bits of InMeta; _TlgIn_t).
type InType uint8

// InType values (TraceLoggingProvider.h, evntprov.h TDH_INTYPE for the first 22).
const (
	InNull              InType = 0
	InUnicodeString     InType = 1 // UTF-16, NUL-terminated
	InAnsiString        InType = 2 // bytes, NUL-terminated
	InInt8              InType = 3
	InUInt8             InType = 4
	InInt16             InType = 5
	InUInt16            InType = 6
	InInt32             InType = 7
	InUInt32            InType = 8
	InInt64             InType = 9
	InUInt64            InType = 10
	InFloat             InType = 11
	InDouble            InType = 12
	InBool32            InType = 13
	InBinary            InType = 14 // u16 byte count, then the bytes
	InGUID              InType = 15
	InPointer           InType = 16 // not used by TraceLogging (HexInt32/HexInt64 instead)
	InFileTime          InType = 17
	InSystemTime        InType = 18
	InSID               InType = 19
	InHexInt32          InType = 20
	InHexInt64          InType = 21
	InCountedString     InType = 22 // u16 byte count, then UTF-16
	InCountedAnsiString InType = 23 // u16 byte count, then bytes
	InStruct            InType = 24 // OutType holds the number of member fields
	InCountedBinary     InType = 25
)

// Bits of InMeta above the InType.
const (
	inTypeMask = 0x1F
	flagCcount = 0x20 // a fixed-count array: a u16 count follows in the metadata
	flagVcount = 0x40 // a variable-count array: a u16 count leads the values in the payload
	flagCustom = 0x60 // a custom-schema field: a u16 size and the schema follow
	countMask  = 0x60
	chain      = 0x80 // InMeta: OutMeta follows; OutMeta: tags follow
)

var inNames = [...]string{"Null", "UnicodeString", "AnsiString", "Int8", "UInt8", "Int16", "UInt16", "Int32", "UInt32",
	"Int64", "UInt64", "Float", "Double", "Bool32", "Binary", "Guid", "Pointer", "FileTime", "SystemTime", "Sid",
	"HexInt32", "HexInt64", "CountedString", "CountedAnsiString", "Struct", "CountedBinary"}

func (t InType) String() string {
	if int(t) < len(inNames) {
		return inNames[t]
	}
	return fmt.Sprintf("InType(%d)", uint8(t))
}

// OutType is how a decoder shows a field (the low 7 bits of OutMeta; _TlgOut_t).
type OutType uint8

// OutType values.
const (
	OutDefault           OutType = 0
	OutNoPrint           OutType = 1
	OutString            OutType = 2
	OutBoolean           OutType = 3
	OutHex               OutType = 4
	OutPID               OutType = 5
	OutTID               OutType = 6
	OutPort              OutType = 7
	OutIPv4              OutType = 8
	OutIPv6              OutType = 9
	OutSocketAddress     OutType = 10
	OutXML               OutType = 11
	OutJSON              OutType = 12
	OutWin32Error        OutType = 13
	OutNTStatus          OutType = 14
	OutHResult           OutType = 15
	OutFileTime          OutType = 16
	OutSigned            OutType = 17
	OutUnsigned          OutType = 18
	OutDateTimeCultureIn OutType = 0x21
	OutUTF8              OutType = 0x23
	OutPKCS7             OutType = 0x24
	OutCodePointer       OutType = 0x25
	OutDateTimeUTC       OutType = 0x26
)

var outNames = map[OutType]string{
	OutDefault: "Default", OutNoPrint: "NoPrint", OutString: "String", OutBoolean: "Boolean", OutHex: "Hex",
	OutPID: "Pid", OutTID: "Tid", OutPort: "Port", OutIPv4: "IPv4", OutIPv6: "IPv6", OutSocketAddress: "SocketAddress",
	OutXML: "Xml", OutJSON: "Json", OutWin32Error: "Win32Error", OutNTStatus: "NTStatus", OutHResult: "HResult",
	OutFileTime: "FileTime", OutSigned: "Signed", OutUnsigned: "Unsigned", OutDateTimeCultureIn: "DateTimeCultureInsensitive",
	OutUTF8: "Utf8", OutPKCS7: "Pkcs7WithTypeInfo", OutCodePointer: "CodePointer", OutDateTimeUTC: "DateTimeUtc",
}

func (t OutType) String() string {
	if s, ok := outNames[t]; ok {
		return s
	}
	return fmt.Sprintf("OutType(%d)", uint8(t))
}

// Arity says whether a field is one value or an array, and where an array's count is.
type Arity uint8

// Arity values.
const (
	Scalar Arity = iota
	Ccount       // fixed count, in the metadata
	Vcount       // variable count, a u16 before the values
	Custom       // a custom-schema field (payload: u16 size and bytes)
)

// MaxTags is the largest tags value the metadata holds (28 bits).
const MaxTags = 0x0FFFFFFF
