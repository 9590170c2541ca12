package hw

import "unsafe"

// stackCPU hashes the address of a stack slot. Each goroutine has its own stack, so the
// value is stable for a goroutine (until its stack moves) and differs between goroutines,
// which is what a processor hint needs when the hardware offers nothing better.
func stackCPU() int {
	var x byte
	p := uintptr(unsafe.Pointer(&x))
	p >>= 11 // stacks are at least 2 KB, aligned to their size: one chunk, one goroutine
	p ^= p >> 7
	return int(p & 0xFFF)
}
