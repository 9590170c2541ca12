package fuzz

import "sync"

// deepStacks parks a few goroutines deep in their stacks, once a process, so that every
// goroutine after them starts with a stack large enough for a run.
//
// The fuzzing engine runs each input on a goroutine of its own, and a concurrent run
// adds a goroutine per worker and a logger goroutine per session. Since Go 1.19 the
// runtime starts a goroutine with a stack the size of the average stack in use at the
// last garbage collection (GODEBUG adaptivestackstart). A fuzzing process's goroutines
// are short-lived and shallow when the collector looks at them, so each started with
// the smallest stack and grew it step by step from inside StartTrace, the checker and
// the sinks' record reader, every step copying the frames below: a tenth of a
// FuzzConcurrent execution's time. Four goroutines parked 32 KB deep raise that average
// to about what a run uses. (Growing the run's own goroutine with a 32 KB frame, as
// before, helped only that goroutine and cleared the frame on every run.) Their stacks
// stay in use for the life of the process: 128 KB.
func deepStacks() {
	deepOnce.Do(func() {
		for range 4 {
			go park()
		}
	})
}

var deepOnce sync.Once

// park blocks for ever with a 32 KB frame on its stack.
//
//go:noinline
func park() byte {
	var pad [32 << 10]byte // the frame; read below, so that the compiler keeps it
	if padIndex >= 0 {
		select {}
	}
	return pad[padIndex]
}

// padIndex is a variable, so that the compiler keeps pad.
var padIndex = 0
