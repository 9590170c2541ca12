package pmc

import (
	"errors"

	"github.com/etwemu/etwemu/internal/hw"
)

// Source supplies counter values: the emulator's stand-in for the HAL's counter
// programming. Implementations: Synthetic, TSC, and on Linux the perf-event sources.
type Source interface {
	// Name is how detection and reports name the source ("synthetic", "tsc",
	// "perf-read", "perf-rdpmc").
	Name() string
	// Counts returns nil if the source can count profile source s, else why not.
	Counts(s ProfileSource) error
	// Open allocates counters for sources on every one of processors emulated
	// processors (HalAllocatePmcCounterSet).
	Open(sources []ProfileSource, processors int) (Set, error)
}

// Set is the counters a Source opened for one logger.
type Set interface {
	// Read stores the current value of each counter of emulated processor proc in dst
	// (one per source, in order). seq is how many times that processor's counters have
	// been read for this logger, this read included. Safe for concurrent use.
	Read(proc int, seq uint64, dst []uint64)
	// Close releases the counters.
	Close() error
}

// Synthetic is the deterministic source: counter i of processor p on its n-th read is
// SyntheticValue(p, source i, n). Tests and the fuzzer predict every value.
type Synthetic struct{}

// SyntheticValue is the value the synthetic source reads: the processor in bits 48-63,
// the profile source in bits 40-47, the read sequence below.
func SyntheticValue(proc int, s ProfileSource, seq uint64) uint64 {
	return uint64(proc)<<48 | uint64(s&0xFF)<<40 | seq&(1<<40-1)
}

func (Synthetic) Name() string                 { return "synthetic" }
func (Synthetic) Counts(s ProfileSource) error { return nil }

func (Synthetic) Open(sources []ProfileSource, processors int) (Set, error) {
	return syntheticSet(append([]ProfileSource(nil), sources...)), nil
}

type syntheticSet []ProfileSource

func (s syntheticSet) Read(proc int, seq uint64, dst []uint64) {
	for i := range dst {
		dst[i] = SyntheticValue(proc, s[i], seq)
	}
}

func (syntheticSet) Close() error { return nil }

// TSC is the cycle source for machines without a PMU (virtual machines): the invariant
// time-stamp counter stands in for ProfileTotalCycles. It counts reference cycles at a
// constant rate, on every processor at once, rather than the core's own clock cycles.
type TSC struct{}

var errTSCCyclesOnly = errors.New("the time-stamp counter counts cycles only (ProfileTotalCycles)")

func (TSC) Name() string { return "tsc" }

func (TSC) Counts(s ProfileSource) error {
	if s != ProfileTotalCycles {
		return errTSCCyclesOnly
	}
	return nil
}

func (TSC) Open(sources []ProfileSource, processors int) (Set, error) {
	if !hw.HasTSC() {
		return nil, errors.New("this processor has no invariant time-stamp counter")
	}
	return tscSet{}, nil
}

type tscSet struct{}

func (tscSet) Read(proc int, seq uint64, dst []uint64) {
	t := uint64(hw.TSC())
	for i := range dst {
		dst[i] = t
	}
}

func (tscSet) Close() error { return nil }
