package bench

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/internal/benchbase"
	"github.com/etwemu/etwemu/regentry"
)

// setup starts n sessions (64 KB buffers, 64 to 256 of them, discarding sink) that
// enable one provider at level 5, and returns the provider's registration.
func setup(b *testing.B, n int) (*emu.Kernel, *emu.Registration) {
	k, err := emu.New(emu.Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(k.Close)
	prov := guid.FromName("etwemu.bench")
	r, err := k.EventRegister(prov, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		h, err := k.StartTrace(fmt.Sprintf("bench-%d", i), &emu.Properties{BufferSize: 64, MinimumBuffers: 64, MaximumBuffers: 256})
		if err != nil {
			b.Fatal(err)
		}
		if err := k.EnableTraceEx2(h, prov, regentry.ControlEnable, 5, 0, 0, nil); err != nil {
			b.Fatal(err)
		}
	}
	runtime.GC() // start each measurement without the previous benchmark's garbage
	return k, r
}

func reportLost(b *testing.B, k *emu.Kernel) {
	var lost uint64
	for _, l := range k.Sessions() {
		lost += l.Stats().EventsLost
	}
	b.ReportMetric(float64(lost)/float64(b.N), "lost/op")
}

// BenchmarkWrite is EventWrite through the public API: provider disabled, one and two
// sessions, payloads of 16, 64 and 512 bytes, one goroutine and RunParallel, with the
// floor and the mutex baseline in the same run.
func BenchmarkWrite(b *testing.B) {
	desc := &emu.EventDescriptor{ID: 1, Level: 4, Keyword: 1}
	b.Run("disabled", func(b *testing.B) {
		k, r := setup(b, 0)
		payload := make([]byte, 64)
		b.ReportAllocs()
		for b.Loop() {
			k.EventWrite(r, desc, payload)
		}
		benchbase.EventsPerSecond(b)
	})
	for _, sessions := range []int{1, 2} {
		for _, size := range []int{16, 64, 512} {
			for _, parallel := range []bool{false, true} {
				name := fmt.Sprintf("sessions=%d/payload=%d", sessions, size)
				if parallel {
					name += "/parallel"
				}
				b.Run(name, func(b *testing.B) {
					k, r := setup(b, sessions)
					payload := make([]byte, size)
					benchbase.Run(b, size, parallel, func() { k.EventWrite(r, desc, payload) })
					reportLost(b, k)
				})
			}
		}
	}
	for _, parallel := range []bool{false, true} {
		suffix := ""
		if parallel {
			suffix = "/parallel"
		}
		b.Run("floor/payload=64"+suffix, func(b *testing.B) { benchbase.Floor(b, 64, parallel) })
		b.Run("mutex/payload=64"+suffix, func(b *testing.B) { benchbase.Mutex(b, 64, parallel) })
	}
}
