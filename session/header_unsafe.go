//go:build 386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm

package session

import (
	"unsafe"

	"github.com/etwemu/etwemu/abi"
)

// PutHeader writes the EVENT_HEADER of a record of size bytes (header, extended items and
// data, unaligned) into h, in the x64 layout that abi.EventHeader.Encode writes: marker
// 0xC013, EVENT_HEADER_FLAG_64_BIT_HEADER (a writer of extended items adds
// EXTENDED_INFO), EventProperty 0, the thread and process ids, the timestamp ts, the
// provider's GUID in Windows byte order, the descriptor, KernelTime and UserTime 0 (not
// modelled) and ActivityId GUID_NULL (a writer with an activity id writes it over).
//
// On a little-endian machine the header goes in as four 8-byte stores and three 16-byte
// moves, so that PutHeader inlines into the write paths (BenchmarkWrite). The
// descriptor's bytes are copied as they lie: abi.EventDescriptor has the Windows layout,
// without padding (TestDescriptorLayout), so on a little-endian machine its memory
// already is the EVENT_DESCRIPTOR. TestWriteHeaderMatchesEncode holds the bytes to the
// readable encoder.
func PutHeader(h *[abi.EventHeaderSize]byte, size, tid, pid uint32, ts int64, provider *[16]byte, d *abi.EventDescriptor) {
	p := unsafe.Pointer(h)
	*(*uint64)(unsafe.Add(p, abi.OffEventSize)) = uint64(size&0xFFFF|abi.EventHeaderEvent64<<16) | uint64(abi.EventFlag64BitHeader)<<32
	*(*uint64)(unsafe.Add(p, abi.OffEventThreadID)) = uint64(tid) | uint64(pid)<<32
	*(*int64)(unsafe.Add(p, abi.OffEventTimeStamp)) = ts
	*(*[16]byte)(unsafe.Add(p, abi.OffEventProviderID)) = *provider
	*(*[16]byte)(unsafe.Add(p, abi.OffEventDescriptor)) = *(*[16]byte)(unsafe.Pointer(d))
	*(*uint64)(unsafe.Add(p, abi.OffEventCPUTime)) = 0
	*(*[16]byte)(unsafe.Add(p, abi.OffEventActivityID)) = [16]byte{}
}
