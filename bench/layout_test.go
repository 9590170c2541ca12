package bench_test

import (
	"reflect"
	"testing"

	"github.com/etwemu/etwemu/bench/benchbase"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/session"
)

// The benchmark binary lays the baselines' code out before the emulator's (the import
// in write_test.go), so a change to the emulator does not move the floor to another
// address, where its speed may differ. Go's linker places packages in the order it loads
// them, and a package's imports load in the order of their paths; if that changes, this
// test says so. It is in package bench_test: imported by package bench, emu would load
// before bench/benchbase.
func TestBaselinesComeFirst(t *testing.T) {
	pc := func(f any) uintptr { return reflect.ValueOf(f).Pointer() }
	floor := pc(benchbase.Floor)
	for name, f := range map[string]any{
		"emu.(*Kernel).EventWriteEx": (*emu.Kernel).EventWriteEx,
		"session.(*Logger).Write":    (*session.Logger).Write,
	} {
		if at := pc(f); floor > at {
			t.Errorf("benchbase.Floor at %#x, after %s at %#x: the emulator's code now moves the floor", floor, name, at)
		}
	}
}
