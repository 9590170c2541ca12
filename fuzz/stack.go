package fuzz

// growStack grows the calling goroutine's stack while it is shallow to what a run's
// deepest calls need. The fuzzing engine runs each input on a goroutine of its own,
// which starts with a small stack; grown step by step from inside StartTrace and the
// checker, every step copying the frames below, the stack's growth was a tenth of a
// fuzzing worker's time. Grown here, one copy moves a few frames. (Not on a logger
// goroutine: its sink is called deep, where one big copy costs what the steps did, and
// the 32 KB frame is cleared on every call.)
//
//go:noinline
func growStack() byte {
	var pad [32 << 10]byte // the frame: the stack grows to hold it, and keeps its size until a GC shrinks it
	return pad[padIndex]
}

// padIndex is a variable, so that the compiler keeps pad.
var padIndex = 0
