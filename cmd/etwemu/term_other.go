//go:build !linux

package main

import "os"

// terminal reports whether f is a character device, the nearest to a terminal this
// platform's check reaches (/dev/null is one too).
func terminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
