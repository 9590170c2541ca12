package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// terminal reports whether f is a terminal: a device that answers TCGETS, as isatty(3)
// asks. /dev/null is a character device and no terminal.
func terminal(f *os.File) bool {
	_, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	return err == nil
}
