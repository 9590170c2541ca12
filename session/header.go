//go:build !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm)

package session

import (
	"encoding/binary"

	"github.com/etwemu/etwemu/abi"
)

// descriptorWords returns the 16 bytes of an EVENT_DESCRIPTOR as two little-endian words.
func descriptorWords(d *abi.EventDescriptor) (uint64, uint64) {
	return uint64(d.ID) | uint64(d.Version)<<16 | uint64(d.Channel)<<24 | uint64(d.Level)<<32 |
		uint64(d.Opcode)<<40 | uint64(d.Task)<<48, d.Keyword
}

// PutHeader writes the EVENT_HEADER of a record of size bytes into h; see the
// little-endian version.
func PutHeader(h *[abi.EventHeaderSize]byte, size, tid, pid uint32, ts int64, provider *[16]byte, d *abi.EventDescriptor) {
	le := binary.LittleEndian
	le.PutUint32(h[abi.OffEventSize:], size&0xFFFF|abi.EventHeaderEvent64<<16)
	le.PutUint32(h[abi.OffEventFlags:], abi.EventFlag64BitHeader)
	le.PutUint64(h[abi.OffEventThreadID:], uint64(tid)|uint64(pid)<<32)
	le.PutUint64(h[abi.OffEventTimeStamp:], uint64(ts))
	copy(h[abi.OffEventProviderID:], provider[:])
	d0, d1 := descriptorWords(d)
	le.PutUint64(h[abi.OffEventDescriptor:], d0)
	le.PutUint64(h[abi.OffEventDescriptor+8:], d1)
	le.PutUint64(h[abi.OffEventCPUTime:], 0)
	clear(h[abi.OffEventActivityID:])
}
