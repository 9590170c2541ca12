package abi

import (
	"bytes"
	"encoding/binary"
	"testing"

	"github.com/etwemu/etwemu/guid"
)

// Every member of WMI_BUFFER_HEADER lands at its phnt offset.
func TestBufferHeaderLayout(t *testing.T) {
	h := BufferHeader{
		BufferSize: 0x10000, SavedOffset: 0xFFF8, CurrentOffset: 0x10040, ReferenceCount: -2,
		TimeStamp: 0x1122334455667788, SequenceNumber: 42, ClockFrequency: ClockFrequency(1, 10_000_000),
		ProcessorNumber: 3, Alignment: 8, LoggerID: 0xFFFF, State: BufferStateFlush, Offset: 0xFFF8,
		BufferFlag: BufferFlagFlushMarker | BufferFlagProcIndex, BufferType: BufferTypeHeader,
		StartTime: 132000000000000000, StartPerfClock: 777,
	}
	b := make([]byte, BufferHeaderSize)
	h.Encode(b)
	le := binary.LittleEndian
	checks := []struct {
		name     string
		off, got uint64
		want     uint64
	}{
		{"BufferSize", 0x00, uint64(le.Uint32(b[0x00:])), 0x10000},
		{"SavedOffset", 0x04, uint64(le.Uint32(b[0x04:])), 0xFFF8},
		{"CurrentOffset", 0x08, uint64(le.Uint32(b[0x08:])), 0x10040},
		{"ReferenceCount", 0x0C, uint64(le.Uint32(b[0x0C:])), 0xFFFFFFFE},
		{"TimeStamp", 0x10, le.Uint64(b[0x10:]), 0x1122334455667788},
		{"SequenceNumber", 0x18, le.Uint64(b[0x18:]), 42},
		{"ClockType", 0x20, le.Uint64(b[0x20:]) & 7, 1},
		{"Frequency", 0x20, le.Uint64(b[0x20:]) >> 3, 10_000_000},
		{"ProcessorNumber", 0x28, uint64(b[0x28]), 3},
		{"Alignment", 0x29, uint64(b[0x29]), 8},
		{"LoggerId", 0x2A, uint64(le.Uint16(b[0x2A:])), 0xFFFF},
		{"State", 0x2C, uint64(le.Uint32(b[0x2C:])), 3},
		{"Offset", 0x30, uint64(le.Uint32(b[0x30:])), 0xFFF8},
		{"BufferFlag", 0x34, uint64(le.Uint16(b[0x34:])), 0x21},
		{"BufferType", 0x36, uint64(le.Uint16(b[0x36:])), 4},
		{"StartTime", 0x38, le.Uint64(b[0x38:]), 132000000000000000},
		{"StartPerfClock", 0x40, le.Uint64(b[0x40:]), 777},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s at %#x = %#x, want %#x", c.name, c.off, c.got, c.want)
		}
	}
	back, ok := DecodeBufferHeader(b)
	if !ok || back != h {
		t.Fatalf("decode(encode(h)) = %+v, want %+v", back, h)
	}
	if _, ok := DecodeBufferHeader(b[:BufferHeaderSize-1]); ok {
		t.Fatal("decoded a short header")
	}
}

func TestEventHeaderLayout(t *testing.T) {
	h := EventHeader{
		Size: 0x90, HeaderType: EventHeaderEvent64, Flags: EventFlag64BitHeader | EventFlagExtendedInfo,
		EventProperty: 0, ThreadID: 0x1234, ProcessID: 0x5678, TimeStamp: 99,
		ProviderID: guid.MustParse("01020304-0506-0708-090a-0b0c0d0e0f10"),
		Descriptor: EventDescriptor{ID: 7, Version: 1, Channel: 11, Level: 4, Opcode: 2, Task: 0x300, Keyword: 0x8000000000000001},
		ActivityID: guid.MustParse("11111111-2222-3333-4444-555555555555"),
	}
	b := make([]byte, EventHeaderSize)
	h.Encode(b)
	// An x64 EVENT_HEADER record begins SS SS 13 C0.
	if !bytes.Equal(b[:4], []byte{0x90, 0x00, 0x13, 0xC0}) {
		t.Fatalf("record starts % x", b[:4])
	}
	if b[0x18] != 4 || b[0x1B] != 1 || b[0x1C] != 6 {
		t.Fatalf("ProviderId not in Windows order at 0x18: % x", b[0x18:0x28])
	}
	if le := binary.LittleEndian; le.Uint16(b[0x28:]) != 7 || b[0x2C] != 4 || le.Uint16(b[0x2E:]) != 0x300 || le.Uint64(b[0x30:]) != 0x8000000000000001 {
		t.Fatalf("descriptor misplaced: % x", b[0x28:0x38])
	}
	if back, ok := DecodeEventHeader(b); !ok || back != h {
		t.Fatalf("decode(encode(h)) = %+v", back)
	}
}

func TestExtItem(t *testing.T) {
	b := make([]byte, 32)
	for i := range b {
		b[i] = 0xEE
	}
	n := PutExtItem(b, ExtTypeRelatedActivityID, false, bytes.Repeat([]byte{7}, 16))
	if n != 24 || binary.LittleEndian.Uint16(b[0:]) != 24 || binary.LittleEndian.Uint16(b[2:]) != 1 ||
		binary.LittleEndian.Uint16(b[4:]) != 0 || binary.LittleEndian.Uint16(b[6:]) != 16 {
		t.Fatalf("item head % x (n=%d)", b[:8], n)
	}
	if n := PutExtItem(b, ExtTypeSID, true, []byte{1, 2, 3}); n != 16 || b[4] != 1 || b[11] != 0 || b[15] != 0 {
		t.Fatalf("padded item: n=%d % x", n, b[:16])
	}
}

func TestExtTypeName(t *testing.T) {
	for typ, want := range map[uint16]string{ExtTypeRelatedActivityID: "RELATED_ACTIVITYID", ExtTypeProvTraits: "PROV_TRAITS", 18: "STACK_KEY64", 19: "0x13", 0: "0x0"} {
		if got := ExtTypeName(typ); got != want {
			t.Errorf("ExtTypeName(%d) = %q, want %q", typ, got, want)
		}
	}
}

func TestBufferFlagAndTypeNames(t *testing.T) {
	for f, want := range map[uint16]string{0: "NORMAL", 0x21: "FLUSH_MARKER|PROC_INDEX", 0x40: "COMPRESSED", 0x8002: "EVENTS_LOST|0x8000"} {
		if got := BufferFlagNames(f); got != want {
			t.Errorf("BufferFlagNames(%#x) = %q, want %q", f, got, want)
		}
	}
	for typ, want := range map[uint16]string{0: "GENERIC", 4: "HEADER", 7: "DBG_INFO", 8: "BufferType(8)"} {
		if got := BufferTypeName(typ); got != want {
			t.Errorf("BufferTypeName(%d) = %q, want %q", typ, got, want)
		}
	}
}

// FillUnused fills every byte it is given with 0xFF, whatever the length against its
// block, and nothing past them.
func TestFillUnused(t *testing.T) {
	for _, n := range []int{0, 1, 4095, 4096, 4097, 10000} {
		b := make([]byte, n+1)
		FillUnused(b[:n])
		for i, c := range b[:n] {
			if c != 0xFF {
				t.Fatalf("length %d: byte %d is %#x", n, i, c)
			}
		}
		if b[n] != 0 {
			t.Fatalf("length %d: the byte past the end was written", n)
		}
	}
}
