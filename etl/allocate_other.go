//go:build !linux

package etl

import (
	"errors"
	"os"
)

// errNoAllocate: the system cannot reserve space here (the caller sets the size instead).
var errNoAllocate = errors.New("space reservation is not implemented on this system")

func allocate(*os.File, int64) error { return errNoAllocate }

// room: the free space is not known here.
func room(string) (int64, bool) { return 0, false }
