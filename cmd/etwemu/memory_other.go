//go:build !linux

package main

// physicalMemory returns 0: the machine's memory is not known here, and -disk keeps its
// fixed bound.
func physicalMemory() uint64 { return 0 }
