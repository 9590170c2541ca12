// Package winerr holds the Windows error codes the emulator returns: Win32 ERROR_* values
// and the NTSTATUS values that surface from the trace APIs.
//
// Each code is a sentinel *Errno, compared by identity with errors.Is. An error that says
// more (which flag, which session) is an *Error that wraps its sentinel, so
//
//	errors.Is(err, winerr.ErrAlreadyExists)
//
// holds for both the bare code and the explained one, and Code(err) recovers the number.
package winerr

import (
	"errors"
	"fmt"
	"syscall"
)

// Errno is one Windows error code.
type Errno struct {
	code   uint32
	name   string
	status bool // an NTSTATUS rather than a Win32 error
}

// Code returns the numeric value: the Win32 error code, or the NTSTATUS.
func (e *Errno) Code() uint32 { return e.code }

// Name returns the Windows name, for example "ERROR_ALREADY_EXISTS".
func (e *Errno) Name() string { return e.name }

// IsStatus reports whether the code is an NTSTATUS rather than a Win32 error.
func (e *Errno) IsStatus() bool { return e.status }

// Error formats the code as "ERROR_ALREADY_EXISTS (183)" or "STATUS_LOG_FILE_FULL (0xC0000188)".
func (e *Errno) Error() string {
	if e.status {
		return fmt.Sprintf("%s (0x%08X)", e.name, e.code)
	}
	return fmt.Sprintf("%s (%d)", e.name, e.code)
}

func win32(code uint32, name string) *Errno { return known(&Errno{code: code, name: name}) }
func ntstatus(code uint32, name string) *Errno {
	return known(&Errno{code: code, name: name, status: true})
}

// byName and byCode hold every code below by its name and by its number (a Win32 code
// is below 0x10000, an NTSTATUS here 0x80000000 or more, so no number is both); filled
// as they are made.
var (
	byName = map[string]*Errno{}
	byCode = map[uint32]*Errno{}
)

func known(e *Errno) *Errno {
	byName[e.name] = e
	byCode[e.code] = e
	return e
}

// ByName returns the code named name (ERROR_ACCESS_DENIED, STATUS_INVALID_PARAMETER), if
// it is one the emulator returns.
func ByName(name string) (*Errno, bool) {
	e, ok := byName[name]
	return e, ok
}

// ByCode returns the code whose number is code (87, 0xC000000D), if it is one the
// emulator returns.
func ByCode(code uint32) (*Errno, bool) {
	e, ok := byCode[code]
	return e, ok
}

// Win32 error codes (winerror.h).
var (
	ErrInvalidFunction     = win32(1, "ERROR_INVALID_FUNCTION")
	ErrFileNotFound        = win32(2, "ERROR_FILE_NOT_FOUND")
	ErrAccessDenied        = win32(5, "ERROR_ACCESS_DENIED")
	ErrPathNotFound        = win32(3, "ERROR_PATH_NOT_FOUND")
	ErrInvalidHandle       = win32(6, "ERROR_INVALID_HANDLE")
	ErrNotEnoughMemory     = win32(8, "ERROR_NOT_ENOUGH_MEMORY")
	ErrBadLength           = win32(24, "ERROR_BAD_LENGTH")
	ErrNotSupported        = win32(50, "ERROR_NOT_SUPPORTED")
	ErrInvalidParameter    = win32(87, "ERROR_INVALID_PARAMETER")
	ErrDiskFull            = win32(112, "ERROR_DISK_FULL")
	ErrBusy                = win32(170, "ERROR_BUSY")
	ErrBadPathname         = win32(161, "ERROR_BAD_PATHNAME")
	ErrAlreadyExists       = win32(183, "ERROR_ALREADY_EXISTS")
	ErrMoreData            = win32(234, "ERROR_MORE_DATA")
	ErrArithmeticOverflow  = win32(534, "ERROR_ARITHMETIC_OVERFLOW")
	ErrLogFileFull         = win32(1502, "ERROR_LOG_FILE_FULL")
	ErrNoSystemResources   = win32(1450, "ERROR_NO_SYSTEM_RESOURCES")
	ErrCancelled           = win32(1223, "ERROR_CANCELLED")
	ErrTimeout             = win32(1460, "ERROR_TIMEOUT")
	ErrActiveConnections   = win32(2402, "ERROR_ACTIVE_CONNECTIONS")
	ErrWMIGuidNotFound     = win32(4200, "ERROR_WMI_GUID_NOT_FOUND")
	ErrWMIInstanceNotFound = win32(4201, "ERROR_WMI_INSTANCE_NOT_FOUND")
	ErrWMIAlreadyDisabled  = win32(4212, "ERROR_WMI_ALREADY_DISABLED")
	ErrWMIAlreadyEnabled   = win32(4206, "ERROR_WMI_ALREADY_ENABLED")
	ErrFileCorrupt         = win32(1392, "ERROR_FILE_CORRUPT")
	ErrNotEnoughQuota      = win32(1816, "ERROR_NOT_ENOUGH_QUOTA")
	ErrPossibleDeadlock    = win32(1131, "ERROR_POSSIBLE_DEADLOCK")
	ErrCtxClosePending     = win32(7007, "ERROR_CTX_CLOSE_PENDING")
)

// NTSTATUS values (ntstatus.h) that the trace APIs pass through.
var (
	StatusDeviceBusy          = ntstatus(0x80000011, "STATUS_DEVICE_BUSY")
	StatusInvalidInfoClass    = ntstatus(0xC0000003, "STATUS_INVALID_INFO_CLASS")
	StatusInfoLengthMismatch  = ntstatus(0xC0000004, "STATUS_INFO_LENGTH_MISMATCH")
	StatusInvalidParameter    = ntstatus(0xC000000D, "STATUS_INVALID_PARAMETER")
	StatusNoMemory            = ntstatus(0xC0000017, "STATUS_NO_MEMORY")
	StatusNotSupported        = ntstatus(0xC00000BB, "STATUS_NOT_SUPPORTED")
	StatusLogFileFull         = ntstatus(0xC0000188, "STATUS_LOG_FILE_FULL")
	StatusWMIInstanceNotFound = ntstatus(0xC0000296, "STATUS_WMI_INSTANCE_NOT_FOUND")
)

// Error is a Windows error code together with the reason the emulator gave it.
type Error struct {
	Errno  *Errno
	Reason string
}

// New returns an *Error for errno whose reason is formatted from format and args.
func New(errno *Errno, format string, args ...any) error {
	return &Error{Errno: errno, Reason: fmt.Sprintf(format, args...)}
}

// Because returns an *Error for errno with the reason already written out: New without
// the formatting, for refusals a caller makes often enough that fmt shows in its profile
// (a call on a stopped session's handle, a call a Windows version lacks).
func Because(errno *Errno, reason string) error {
	return &Error{Errno: errno, Reason: reason}
}

// Error formats the error as "ERROR_ALREADY_EXISTS (183): a session named X is running".
func (e *Error) Error() string { return e.Errno.Error() + ": " + e.Reason }

// Unwrap returns the sentinel, so errors.Is matches it.
func (e *Error) Unwrap() error { return e.Errno }

// Code returns the Windows code carried by err, 0 (ERROR_SUCCESS) for nil, and
// ok == false when err carries no Windows code.
func Code(err error) (code uint32, ok bool) {
	if err == nil {
		return 0, true
	}
	switch e := err.(type) { // the errors this package makes, without errors.As's reflection
	case *Errno:
		if e == nil {
			return 0, false
		}
		return e.code, true
	case *Error:
		if e == nil || e.Errno == nil { // nothing to unwrap to
			return 0, false
		}
		return e.Errno.code, true
	}
	var e *Errno
	if errors.As(err, &e) && e != nil { // a wrapped Error with no Errno unwraps to a nil one
		return e.code, true
	}
	return 0, false
}

// WriteFailed is the error of a write, truncate or close that failed with err, what
// saying what was written: Windows' ERROR_DISK_FULL, the code its logger reports for a
// write that fails, with the operating system's reason; a full disk (ENOSPC) is named as
// such. A file that cannot be written at an offset (ESPIPE: a pipe, a socket, a
// terminal, which -force lets a command name) is no disk's fault: ERROR_BAD_PATHNAME,
// the code StartTrace gives a log file name it cannot use. The log files and etwemu's
// own output both report failed writes so.
func WriteFailed(err error, what string) error {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return New(ErrDiskFull, "the disk is full: %s: %v", what, err)
	case errors.Is(err, syscall.ESPIPE):
		return New(ErrBadPathname, "%s: the file cannot be written at an offset, as a log file is (a pipe, a socket or a terminal): %v", what, err)
	}
	return New(ErrDiskFull, "%s: %v", what, err)
}
