//go:build !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64 || wasm)

package session

import "github.com/etwemu/etwemu/abi"

// descriptorWords returns the 16 bytes of an EVENT_DESCRIPTOR as two little-endian words.
func descriptorWords(d *abi.EventDescriptor) (uint64, uint64) {
	return uint64(d.ID) | uint64(d.Version)<<16 | uint64(d.Channel)<<24 | uint64(d.Level)<<32 |
		uint64(d.Opcode)<<40 | uint64(d.Task)<<48, d.Keyword
}
