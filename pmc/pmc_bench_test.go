//go:build linux

package pmc

import (
	"testing"

	"github.com/etwemu/etwemu/internal/hw"
	"golang.org/x/sys/unix"
)

// BenchmarkRead is the cost of reading one processor's counters (one counter) from each
// source this machine has: what a selected event pays on top of its write. readSelf
// runs against an allowing fake page with a fake RDPMC, so it times the seqlock protocol
// alone (a real RDPMC adds some 20-40 cycles where a PMU exists).
func BenchmarkRead(b *testing.B) {
	one := []ProfileSource{ProfileTotalCycles}
	run := func(b *testing.B, set Set) {
		var dst [1]uint64
		b.ReportAllocs()
		for i := uint64(1); b.Loop(); i++ {
			set.Read(0, i, dst[:])
		}
	}
	b.Run("source=synthetic", func(b *testing.B) {
		set, _ := Synthetic{}.Open(one, 1)
		run(b, set)
	})
	b.Run("source=tsc", func(b *testing.B) {
		if !hw.HasTSC() {
			b.Skip("no invariant TSC")
		}
		set, _ := TSC{}.Open(one, 1)
		run(b, set)
	})
	b.Run("source=perf-read(software cpu-clock)", func(b *testing.B) {
		// The read(2) path on the one kind of perf event these machines have.
		src := &perfSource{typ: unix.PERF_TYPE_SOFTWARE, events: map[ProfileSource]uint64{ProfileTotalCycles: unix.PERF_COUNT_SW_CPU_CLOCK}}
		set, err := src.Open(one, 1)
		if err != nil {
			b.Skip(err)
		}
		defer set.Close()
		run(b, set)
	})
	b.Run("source=rdpmc-seqlock(fake page)", func(b *testing.B) {
		pg := &mmapPage{lock: 2, index: 1, pmcWidth: 48, capabilities: capUserRDPMC}
		raw := uint64(0)
		fake := func(uint32) uint64 { raw++; return raw }
		b.ReportAllocs()
		for b.Loop() {
			readSelf(pg, fake)
		}
	})
}
