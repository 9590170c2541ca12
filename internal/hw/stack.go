package hw

import "unsafe"

// stackCPU hashes the address of a stack slot. Each goroutine has its own stack, so the
// value is stable for a goroutine (until its stack moves) and differs between goroutines,
// which is what a processor hint needs when the hardware offers nothing better.
func stackCPU() int {
	var x byte
	return stackHint(uintptr(unsafe.Pointer(&x)))
}

// stackHint is stackCPU's hash of stack address p, in 12 bits. Stacks are at least 2 KB
// and aligned to their size, so one 2 KB chunk belongs to one goroutine; the chunks of
// one 8 KB block always hash apart (they differ in the low two bits, and share the bits
// folded onto them). Distant chunks may share a hint, 4096 of them in all: a shared
// hint, never a wrong one. STACK_CPU in hw_amd64.s is the same hash.
func stackHint(p uintptr) int {
	p >>= 11
	p ^= p >> 7
	return int(p & 0xFFF)
}
