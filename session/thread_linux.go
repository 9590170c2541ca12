package session

import "golang.org/x/sys/unix"

// threadID is the calling OS thread's id, which identifies the goroutine locked to it.
func threadID() uint64 { return uint64(unix.Gettid()) }
