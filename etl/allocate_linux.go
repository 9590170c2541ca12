package etl

import (
	"errors"
	"os"
	"path/filepath"

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

// room is Roomer's answer for the operating system's file name: its folder's volume's
// free space for an unprivileged writer (the blocks reserved for root are not counted,
// whoever runs), plus the blocks the file holds now.
func room(name string) (int64, bool) {
	var st unix.Statfs_t
	if err := unix.Statfs(filepath.Dir(name), &st); err != nil {
		return 0, false
	}
	unit := int64(st.Frsize) // the unit of the block counts, as statvfs and df read them
	if unit == 0 {
		unit = int64(st.Bsize)
	}
	n := int64(st.Bavail) * unit
	var fst unix.Stat_t
	if err := unix.Stat(name, &fst); err == nil {
		n += fst.Blocks * 512
	}
	return n, true
}
