package etl

import (
	"errors"
	"os"
)

// Allocator is an optional method of a WriteFile: reserve size bytes of disk for the
// file, so that writes within them cannot fail for space (EVENT_TRACE_FILE_MODE_PREALLOCATE).
// OS's files have it on Linux; for files without it a Writer sets the size with Truncate,
// which reserves nothing on file systems that keep sparse files.
type Allocator interface {
	Allocate(size int64) error
}

// Roomer is an optional method of a FileSystem: how many bytes the file name could
// hold, the space its volume has free plus what the file takes now, and false where that
// is not known. A Writer asks before it creates an EVENT_TRACE_FILE_MODE_PREALLOCATE
// file, so that a size the volume cannot hold is refused before an existing file of that
// name is truncated. OS has it on Linux, MemFS everywhere.
type Roomer interface {
	Room(name string) (int64, bool)
}

// Preallocate reserves the first size bytes of f: with its Allocator where it has one,
// else by setting its size.
func Preallocate(f WriteFile, size int64) error {
	if a, ok := f.(Allocator); ok {
		return a.Allocate(size)
	}
	return f.Truncate(size)
}

// osFile is a file of the operating system's file system.
type osFile struct{ *os.File }

// Allocate implements Allocator: fallocate(2) where the system and the file system have
// it, so that a size the disk cannot hold fails with ENOSPC (ERROR_DISK_FULL, as Windows'
// StartTrace fails for a file the drive has no room for); elsewhere the size is set.
func (f osFile) Allocate(size int64) error {
	if err := allocate(f.File, size); !errors.Is(err, errNoAllocate) {
		return err
	}
	return f.Truncate(size)
}
