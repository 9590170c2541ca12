// Package callstack captures and deepens the call stack the way the emulator's
// EVENT_EXTENDED_ITEM_STACK_TRACE64 needs: Callers reads the writer's return addresses,
// and Deep runs a function deep enough that the stack an event captures is full
// whatever the caller's own depth.
package callstack

// Frames is how many return addresses an EVENT_EXTENDED_ITEM_STACK_TRACE64 item the
// emulator makes holds at most (emu.EnableParameters): the writer's innermost 32.
// [emulator choice] Windows walks up to its own per-session limit; 32 keeps each
// item's size, which decides when buffers fill, small and fixed for a deep writer.
const Frames = 32

// Deep calls fn from at least frames frames below its caller. An event written this
// deep always carries Frames return addresses when frames is Frames, so its item's size
// is known beforehand: the fuzz harness's model predicts it, and a scenario replays a
// fuzz program's writes with the same sizes.
//
//go:noinline
func Deep(frames int, fn func()) {
	if frames > 0 {
		Deep(frames-1, fn)
		return
	}
	fn()
}
