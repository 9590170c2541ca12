package emu

import (
	"errors"
	"os"
	"path/filepath"
	"sync"

	"github.com/etwemu/etwemu/etl"
)

// errFileInUse is what opening a log file another session is writing for writing returns;
// the log-file writer reports it as ERROR_BAD_PATHNAME, StartTrace's error for "log file
// already used by another session" (Microsoft Learn, StartTrace).
var errFileInUse = errors.New("another session is writing it")

// logFiles is the kernel's file system as its sessions see it: a log file that one
// session (or a SaveBuffers) has open cannot be opened for writing again until it is
// closed. The kernel opens log files for exclusive use, so a second StartTrace naming a
// running session's file is refused, as is a NEWFILE roll-over or an INCREMENT_FILE onto a
// file another session writes, instead of truncating it under its writer.
//
// Files of the operating system are told apart by their absolute, cleaned path, with
// symbolic links resolved where they exist (two hard links to one file are not
// recognised); another file system's (Config.FileSystem) by their cleaned names.
type logFiles struct {
	fs   etl.FileSystem // Config.FileSystem, or the operating system's; immutable
	os   bool           // fs is the operating system's: names are resolved on its disk; immutable
	mu   sync.Mutex
	open map[string]bool // paths open for writing; protected by mu
}

func newLogFiles(fs etl.FileSystem) *logFiles {
	if fs == nil {
		fs = etl.OS{}
	}
	_, isOS := fs.(etl.OS)
	return &logFiles{fs: fs, os: isOS, open: map[string]bool{}}
}

// OpenFile implements etl.FileSystem.
func (f *logFiles) OpenFile(name string, flag int, perm os.FileMode) (etl.WriteFile, error) {
	key := f.key(name)
	f.mu.Lock()
	if f.open[key] {
		f.mu.Unlock()
		return nil, errFileInUse
	}
	f.open[key] = true
	f.mu.Unlock()
	file, err := f.fs.OpenFile(name, flag, perm)
	if err != nil {
		f.release(key)
		return nil, err
	}
	return &claimedFile{WriteFile: file, release: func() { f.release(key) }}, nil
}

func (f *logFiles) release(key string) {
	f.mu.Lock()
	delete(f.open, key)
	f.mu.Unlock()
}

// key names the file at name: on the operating system's disk by fileKey, on another file
// system by its cleaned name (its names are its own).
func (f *logFiles) key(name string) string {
	if f.os {
		return fileKey(name)
	}
	return filepath.Clean(name)
}

// fileKey names the file at name for logFiles: absolute and cleaned, through symbolic
// links where name or its folder exists.
func fileKey(name string) string {
	p, err := filepath.Abs(name)
	if err != nil {
		return filepath.Clean(name)
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	if d, err := filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
		return filepath.Join(d, filepath.Base(p))
	}
	return p
}

// Remove implements etl.Remover where the file system has it; a file another session
// writes is not removed.
func (f *logFiles) Remove(name string) error {
	rm, ok := f.fs.(etl.Remover)
	if !ok {
		return errors.ErrUnsupported
	}
	key := f.key(name)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.open[key] {
		return errFileInUse
	}
	return rm.Remove(name)
}

// Room implements etl.Roomer where the file system has it. A file another session
// writes is not known: opening it is refused first, as ERROR_BAD_PATHNAME.
func (f *logFiles) Room(name string) (int64, bool) {
	r, ok := f.fs.(etl.Roomer)
	if !ok {
		return 0, false
	}
	f.mu.Lock()
	claimed := f.open[f.key(name)]
	f.mu.Unlock()
	if claimed {
		return 0, false
	}
	return r.Room(name)
}

// claimedFile is a log file logFiles opened; closing it frees its name.
type claimedFile struct {
	etl.WriteFile
	once    sync.Once
	release func()
}

func (c *claimedFile) Close() error {
	err := c.WriteFile.Close()
	c.once.Do(c.release)
	return err
}

// Allocate implements etl.Allocator as the file it wraps does (etl.Preallocate).
func (c *claimedFile) Allocate(size int64) error { return etl.Preallocate(c.WriteFile, size) }
