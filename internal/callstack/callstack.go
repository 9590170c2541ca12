// Package callstack runs a function deep in the call stack, so that the stack a
// STACK_TRACE extended item captures is full whatever the caller's own depth.
package callstack

// Deep calls fn from at least frames frames below its caller. The emulator's
// EVENT_ENABLE_PROPERTY_STACK_TRACE item holds at most the writer's innermost 32 return
// addresses (emu.EnableParameters); an event written this deep always carries that many,
// so its item's size, which decides when buffers fill, is known beforehand: the fuzz
// harness's model predicts it, and a scenario replays a fuzz program's writes with the
// same sizes.
//
//go:noinline
func Deep(frames int, fn func()) {
	if frames > 0 {
		Deep(frames-1, fn)
		return
	}
	fn()
}
