//go:build 386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm

package session

import (
	"unsafe"

	"github.com/etwemu/etwemu/abi"
)

// descriptorWords returns the 16 bytes of an EVENT_DESCRIPTOR as two little-endian words.
// abi.EventDescriptor has the Windows layout (no padding; TestDescriptorLayout), so on a
// little-endian machine its memory already is those bytes: two loads instead of packing
// six fields (BenchmarkWrite).
func descriptorWords(d *abi.EventDescriptor) (uint64, uint64) {
	w := (*[2]uint64)(unsafe.Pointer(d))
	return w[0], w[1]
}
