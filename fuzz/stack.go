package fuzz

import "sync"

// deepStacks parks a few goroutines deep in their stacks, once a process, so that the
// goroutines of the fuzzing engine and of the runs start with stacks about as large as a
// run needs. The fuzz targets call it; Run and RunConcurrent do not, so that a program
// calling them keeps no goroutine of theirs.
//
// The fuzzing engine runs each input on a goroutine of its own, and a concurrent run
// adds a goroutine per worker and a logger goroutine per session. Since Go 1.19 the
// runtime sets, at each garbage collection, a starting stack size: the average stack in
// use among the goroutines it scanned (GODEBUG adaptivestackstart). A goroutine that
// reuses an exited one's descriptor, as nearly all do in a fuzzing process, starts with
// that size. A fuzzing process's goroutines are short-lived and shallow when the
// collector looks at them, so each started with the smallest stack and grew it step by
// step from inside StartTrace, the checker and the sinks' record reader, every step
// copying the frames below: a tenth of a FuzzConcurrent execution's time. Four
// goroutines parked 32 KB deep raise the average: the starting size becomes 8 to 16 KB
// with the engine's own goroutines beside them. Their stacks (64 KB each) stay in use
// for the life of the process.
func deepStacks() {
	deepOnce.Do(func() {
		for range 4 {
			go park()
		}
	})
}

var deepOnce sync.Once

// park blocks for ever with a 32 KB array on its stack.
func park() {
	var pad [32 << 10]byte
	block(pad[:])
}

// block blocks for ever. It takes the array so that the compiler keeps it in park's
// frame.
//
//go:noinline
func block([]byte) { select {} }
