//go:build !linux

package session

import "github.com/etwemu/etwemu/internal/goid"

// threadID identifies the calling goroutine: its id here, where no thread id is read
// (microseconds, where Linux's gettid takes a fraction of one).
func threadID() uint64 { return goid.ID() }
