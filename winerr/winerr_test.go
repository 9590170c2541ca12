package winerr

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestErrorIsAndCode(t *testing.T) {
	err := New(ErrAlreadyExists, "a session named %q is running", "demo")
	if !errors.Is(err, ErrAlreadyExists) {
		t.Fatal("explained error does not match its sentinel")
	}
	if errors.Is(err, ErrInvalidParameter) {
		t.Fatal("explained error matches a different sentinel")
	}
	wrapped := fmt.Errorf("start: %w", err)
	for _, e := range []error{err, wrapped, ErrAlreadyExists, fmt.Errorf("start: %w", ErrAlreadyExists)} {
		if c, ok := Code(e); !ok || c != 183 {
			t.Fatalf("Code(%v) = %d, %v; want 183", e, c, ok)
		}
	}
	var nilErrno *Errno
	var nilError *Error
	for _, e := range []error{&Error{Reason: "no code"}, fmt.Errorf("start: %w", &Error{Reason: "no code"}), nilErrno, nilError} {
		if c, ok := Code(e); ok || c != 0 {
			t.Fatalf("Code of %#v = %d, %v; want none", e, c, ok)
		}
	}
	if got := err.Error(); got != `ERROR_ALREADY_EXISTS (183): a session named "demo" is running` {
		t.Fatalf("message = %q", got)
	}
	if got := StatusLogFileFull.Error(); got != "STATUS_LOG_FILE_FULL (0xC0000188)" {
		t.Fatalf("status message = %q", got)
	}
	if c, ok := Code(errors.New("plain")); ok || c != 0 {
		t.Fatal("a plain error reported a Windows code")
	}
	if c, ok := Code(nil); !ok || c != 0 {
		t.Fatal("nil is not ERROR_SUCCESS")
	}
}

// Every code can be found by its name, and a name no code has is not.
func TestByName(t *testing.T) {
	for _, e := range []*Errno{ErrInvalidParameter, ErrNotSupported, StatusInvalidParameter} {
		if got, ok := ByName(e.Name()); !ok || got != e {
			t.Errorf("ByName(%q) = %v, %v", e.Name(), got, ok)
		}
	}
	if _, ok := ByName("ERROR_FOO"); ok {
		t.Error("ERROR_FOO found")
	}
}

// Every code is found by its number, which no other code has.
func TestByCode(t *testing.T) {
	if len(byCode) != len(byName) {
		t.Fatalf("%d codes by number, %d by name: two codes share a number", len(byCode), len(byName))
	}
	for _, e := range byName {
		if got, ok := ByCode(e.Code()); !ok || got != e {
			t.Errorf("ByCode(%#x) = %v, %v, want %v", e.Code(), got, ok, e)
		}
	}
	if _, ok := ByCode(0); ok {
		t.Error("a code numbered 0 found")
	}
}

// Because is New with the reason written out: the same error, without formatting.
func TestBecause(t *testing.T) {
	err := Because(ErrNotSupported, "no such call on 5.1")
	want := New(ErrNotSupported, "no such call on %s", "5.1")
	if c, ok := Code(err); !ok || c != 50 || !errors.Is(err, ErrNotSupported) || err.Error() != want.Error() {
		t.Fatalf("Because gave %v (code %d, %v), want %v", err, c, ok, want)
	}
}

// A failed write is ERROR_DISK_FULL with the system's reason, a full disk named as such;
// a file that cannot be written at an offset is ERROR_BAD_PATHNAME.
func TestWriteFailed(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code *Errno
		says string
	}{
		{&os.PathError{Op: "write", Path: "f", Err: syscall.ENOSPC}, ErrDiskFull, "the disk is full"},
		{&os.PathError{Op: "write", Path: "f", Err: syscall.EIO}, ErrDiskFull, "input/output error"},
		{&os.PathError{Op: "write", Path: "f", Err: syscall.ESPIPE}, ErrBadPathname, "cannot be written at an offset"},
	} {
		err := WriteFailed(tc.err, "writing f")
		if !errors.Is(err, tc.code) || !strings.Contains(err.Error(), tc.says) || !strings.Contains(err.Error(), "writing f") {
			t.Errorf("%v: %v; want %v saying %q", tc.err, err, tc.code, tc.says)
		}
	}
}
