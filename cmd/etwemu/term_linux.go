package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// terminal reports whether f is a terminal: a device that answers TCGETS, as isatty(3)
// asks. /dev/null is a character device and no terminal. The descriptor is reached
// through SyscallConn, which leaves its blocking mode alone (Fd would set it).
func terminal(f *os.File) bool {
	c, err := f.SyscallConn()
	if err != nil {
		return false
	}
	is := false
	if c.Control(func(fd uintptr) {
		_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
		is = err == nil
	}) != nil {
		return false
	}
	return is
}
