//go:build !linux

package pmc

import (
	"errors"
	"runtime"

	"github.com/etwemu/etwemu/internal/hw"
)

func machineProbe() probe {
	return probe{goos: runtime.GOOS, tsc: hw.HasTSC(), rdpmcInsn: hasRDPMC}
}

type perfSource struct{ rdpmc bool }

func newPerfSource(rdpmc bool) Source { return perfSource{rdpmc} }

func (p perfSource) Name() string {
	if p.rdpmc {
		return NamePerfRDPMC
	}
	return NamePerfRead
}

var errNoPerf = errors.New("perf events are Linux's")

func (perfSource) Counts(ProfileSource) error             { return errNoPerf }
func (perfSource) Open([]ProfileSource, int) (Set, error) { return nil, errNoPerf }
