package etl

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// errNoAllocate: the file system cannot reserve space (the caller sets the size instead).
var errNoAllocate = errors.New("fallocate is not supported")

func allocate(f *os.File, size int64) error {
	for {
		err := unix.Fallocate(int(f.Fd()), 0, 0, size)
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EOPNOTSUPP || err == unix.ENOSYS:
			return errNoAllocate
		case err != nil:
			return &os.PathError{Op: "fallocate", Path: f.Name(), Err: err}
		}
		return nil
	}
}
