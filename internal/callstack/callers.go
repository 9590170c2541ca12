package callstack

// Callers fills pcs with return addresses of the calling goroutine's stack and returns
// how many it wrote: first the return address into the caller of Callers' caller, then
// one per frame outward, until pcs is full or the goroutine's first frame is read. It
// reads physical frames, as a Windows stack walk does: a call the compiler inlined has
// no frame of its own and no address here (runtime.CallersFrames names it from the
// address of the frame it was inlined into), and a wrapper the compiler made (a go
// statement's, a method value's, reflect's call), which runtime.Callers leaves out, has
// one. So the first address is the one runtime.Callers(2, pcs) gives from the same
// caller when the caller was neither inlined nor called through a wrapper.
//
// On amd64 it follows the frame pointers Go keeps, as the runtime's execution tracer
// does: a load or two a frame, where runtime.Callers decodes each frame's tables
// (BenchmarkCallers). In a Go function called from C (cgo) the walk ends where the C
// frames begin. Elsewhere it is runtime.Callers, with inlined calls expanded and
// wrappers left out.
//
//go:noinline
func Callers(pcs []uintptr) int { return callers(pcs) }
