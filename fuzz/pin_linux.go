package fuzz

import (
	"runtime"

	"golang.org/x/sys/unix"

	"github.com/etwemu/etwemu/internal/hw"
)

// pinner pins a run's goroutine to a CPU, so that EventWrite, which writes on the
// processor the goroutine runs on, writes on a processor the harness knows. It pins to
// the CPU at hand rather than one chosen, which costs no migration (on a busy machine a
// migration waits for that CPU), and keeps the pin for the rest of the run: the thread
// stays on that CPU, so the next write finds it there and makes no system call. done
// gives the thread its old affinity back. A run's pinner belongs to its goroutine.
type pinner struct {
	locked bool
	old    unix.CPUSet
	cpu    int // the CPU pinned to; -1 none
}

func newPinner() *pinner { return &pinner{cpu: -1} }

// on runs fn pinned and returns the processor as the kernel maps it (current reads the
// mapping), or ok false where the processor cannot be pinned down: affinity refused, or
// a CPU reading that does not follow the thread (the portable stack hash, or the segment
// reading the hw package caches).
func (p *pinner) on(current func() int, fn func()) (proc int, ok bool) {
	if m := hw.Method(); m != hw.CPUByRDPID && m != hw.CPUByRDTSCP {
		return 0, false
	}
	if !p.locked {
		runtime.LockOSThread()
		if unix.SchedGetaffinity(0, &p.old) != nil {
			runtime.UnlockOSThread()
			return 0, false
		}
		p.locked = true
	}
	if cpu := hw.CPU(); cpu != p.cpu {
		var one unix.CPUSet
		one.Set(cpu)
		if unix.SchedSetaffinity(0, &one) != nil {
			return 0, false
		}
		p.cpu = cpu
	}
	proc = current()
	fn()
	return proc, true
}

// done ends the pin: the thread gets its old affinity back and the goroutine its
// freedom.
func (p *pinner) done() {
	if p.locked {
		unix.SchedSetaffinity(0, &p.old)
		runtime.UnlockOSThread()
		p.locked, p.cpu = false, -1
	}
}
