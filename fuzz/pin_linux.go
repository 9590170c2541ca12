package fuzz

import (
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/etwemu/etwemu/internal/hw"
)

// onProcessor runs fn with the calling goroutine's thread pinned to the CPU it is on,
// so that EventWrite, which writes on the processor the goroutine runs on, writes on a
// processor the harness knows; pinning to the CPU at hand rather than one chosen costs
// no migration, which on a busy machine waits for that CPU. It returns that processor as
// the kernel maps it (current reads the mapping), or ok false where the processor cannot
// be pinned down: affinity refused, or a CPU reading that does not follow the thread
// (the portable stack hash, or the segment reading the hw package caches).
func onProcessor(current func() int, fn func()) (proc int, ok bool) {
	if m := hw.Method(); m != hw.CPUByRDPID && m != hw.CPUByRDTSCP {
		return 0, false
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old unix.CPUSet
	if unix.SchedGetaffinity(0, &old) != nil {
		return 0, false
	}
	var one unix.CPUSet
	one.Set(hw.CPU())
	if unix.SchedSetaffinity(0, &one) != nil {
		return 0, false
	}
	defer unix.SchedSetaffinity(0, &old)
	proc = current()
	fn()
	return proc, true
}
