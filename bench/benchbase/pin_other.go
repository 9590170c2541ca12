//go:build !linux

package benchbase

import (
	"fmt"
	"os"
	"runtime"
	"testing"
)

// PinCPU reports the CPU that PinEnv names; outside Linux a set variable is an error,
// since the emulator has no portable way to pin a thread.
func PinCPU() (cpu int, ok bool, err error) {
	if v := os.Getenv(PinEnv); v != "" {
		return 0, false, fmt.Errorf("%s=%q: pinning is implemented on Linux only, not on %s", PinEnv, v, runtime.GOOS)
	}
	return 0, false, nil
}

// Pin applies PinEnv; see PinCPU.
func Pin(tb testing.TB) (undo func()) {
	if _, _, err := PinCPU(); err != nil {
		tb.Fatal(err)
	}
	return func() {}
}
