package callstack

// callers follows the frame-pointer chain (callers_amd64.s). Its caller is Callers,
// which is never inlined: BP holds Callers' frame, whose return address leads into
// Callers' caller, so callers starts one frame out.
//
//go:noescape
func callers(pcs []uintptr) int

// walk is callers' walk of a chain that starts at frame fp and must stay below limit,
// for tests that build one.
//
//go:noescape
func walk(fp, limit uintptr, pcs []uintptr) int

// stackHi returns the top of the running goroutine's stack as callers reads it, for the
// test that checks the layout it relies on.
func stackHi() uintptr
