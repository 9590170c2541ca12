package emu_test

import (
	"reflect"
	"testing"

	"github.com/etwemu/etwemu/emu"
)

// A Kernel not made by New (a zero one) refuses or answers empty, without a panic, in
// every exported method called with zero arguments.
func TestZeroKernelDoesNotPanic(t *testing.T) {
	var k emu.Kernel
	v := reflect.ValueOf(&k)
	for i := range v.NumMethod() {
		m, name := v.Method(i), v.Type().Method(i).Name
		args := make([]reflect.Value, m.Type().NumIn())
		for j := range args {
			args[j] = reflect.Zero(m.Type().In(j))
		}
		if m.Type().IsVariadic() {
			args = args[:len(args)-1]
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					t.Errorf("%s on a zero Kernel: panic: %v", name, r)
				}
			}()
			m.Call(args)
		}()
	}
}
