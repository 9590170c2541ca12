// Package goid reads the calling goroutine's id, for the few places that must tell
// whether a call comes from a goroutine of their own (a consumer's callback, a session's
// Sink) and would otherwise wait for itself.
package goid

import "runtime"

// ID returns the calling goroutine's id, read from the first line of its stack trace
// ("goroutine 18 [running]:"). The runtime keeps no other public handle on a goroutine.
// It costs microseconds: callers read it once per goroutine or on rare paths, never per
// event.
func ID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = b[len("goroutine "):]
	var id uint64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			break
		}
		id = id*10 + uint64(ch-'0')
	}
	return id
}
