//go:build !amd64

package callstack

import "runtime"

// callers is runtime.Callers from the caller of Callers' caller: frames 0 to 3 are
// runtime.Callers, callers, Callers and Callers' caller.
func callers(pcs []uintptr) int { return runtime.Callers(4, pcs) }
