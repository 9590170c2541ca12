package benchbase

import (
	"sync/atomic"
	"testing"
)

// probeRounds is how many rounds of its four chains one call of probeChains runs.
const probeRounds = 256

// Probe measures the machine rather than a design. Each call runs four independent
// chains of dependent one-cycle integer operations (a shift, an exclusive or and an
// add a round, 256 rounds) and touches neither memory nor the clock, so nothing the
// emulator or a baseline does can change its time. The chains together issue more
// integer operations than a core runs in a cycle, so a call's time is set by how many
// the core runs for this thread: fewer when other work shares the core (another guest or
// the host on its sibling hardware thread) or its clock slows. Run beside the designs,
// its spread says how much of theirs came from the machine: where it moves by a few
// percent, so could they; where it steps by half, their steps are the machine's too. A
// single chain, bound by its latency rather than by the core's issue width, would not see
// a sibling's work.
func Probe(b *testing.B, parallel bool) {
	defer Start(b, parallel)()
	if parallel {
		Parallel(b, func(n int) {
			x := uint64(1)
			for range n {
				x = probeChains(x)
			}
			probeSink.Add(x)
		})
		return
	}
	x := uint64(1)
	for b.Loop() {
		x = probeChains(x)
	}
	probeSink.Add(x)
}

// probeSink takes the chains' results, so that the compiler keeps their work. Atomic;
// added to once by each probe goroutine.
var probeSink atomic.Uint64

// probeChains is the probe's work: four chains from x, probeRounds rounds each. Not
// inlined, so that both of Probe's loops time the same machine code.
//
//go:noinline
func probeChains(x uint64) uint64 {
	a, b, c, d := x, x+1, x+2, x+3
	for range probeRounds {
		a = (a ^ a>>7) + 0x9e3779b97f4a7c15
		b = (b ^ b>>7) + 0x9e3779b97f4a7c15
		c = (c ^ c>>7) + 0x9e3779b97f4a7c15
		d = (d ^ d>>7) + 0x9e3779b97f4a7c15
	}
	return a ^ b ^ c ^ d
}
