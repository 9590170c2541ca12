//go:build linux

package pmc

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/etwemu/etwemu/internal/hw"
)

// perfEvents maps the profile sources a perf source can count onto generic hardware
// events (PERF_TYPE_HARDWARE). The correspondence is by meaning; the HAL programs model-
// specific events. [UNCERTAIN] DcacheAccesses is taken as the generic cache references.
var perfEvents = map[ProfileSource]uint64{
	ProfileTotalCycles:          unix.PERF_COUNT_HW_CPU_CYCLES,
	ProfileTotalIssues:          unix.PERF_COUNT_HW_INSTRUCTIONS,
	ProfileDcacheAccesses:       unix.PERF_COUNT_HW_CACHE_REFERENCES,
	ProfileCacheMisses:          unix.PERF_COUNT_HW_CACHE_MISSES,
	ProfileBranchInstructions:   unix.PERF_COUNT_HW_BRANCH_INSTRUCTIONS,
	ProfileBranchMispredictions: unix.PERF_COUNT_HW_BRANCH_MISSES,
	ProfilePipelineDry:          unix.PERF_COUNT_HW_STALLED_CYCLES_FRONTEND,
	ProfilePipelineFrozen:       unix.PERF_COUNT_HW_STALLED_CYCLES_BACKEND,
}

// perfSource counts with Linux perf events: one pinned per-CPU event per profile source
// and real CPU (pid -1, cpu c), which is what a HAL_PMC_COUNTERS is, a processor's
// counters whoever runs there. Emulated processor p reads real CPU p mod NumCPU.
type perfSource struct {
	rdpmc  bool
	typ    uint32                   // PERF_TYPE_HARDWARE; tests use software events
	events map[ProfileSource]uint64 // the config of each source
}

func newPerfSource(rdpmc bool) Source {
	return &perfSource{rdpmc: rdpmc, typ: unix.PERF_TYPE_HARDWARE, events: perfEvents}
}

func (p *perfSource) Name() string {
	if p.rdpmc {
		return NamePerfRDPMC
	}
	return NamePerfRead
}

func (p *perfSource) Counts(s ProfileSource) error {
	if _, ok := p.events[s]; !ok {
		return fmt.Errorf("no generic perf event stands for %v", s)
	}
	return nil
}

// perfCounter is one open event: its descriptor and, for RDPMC, its mapped page.
type perfCounter struct {
	fd   int
	page *mmapPage
	mem  []byte // the mapping, for Munmap
}

type perfSet struct {
	rdpmc bool
	n     int           // sources
	ctrs  []perfCounter // [cpu*n + source]
	cpus  int
}

func (p *perfSource) Open(sources []ProfileSource, processors int) (Set, error) {
	cpus := min(runtime.NumCPU(), processors)
	s := &perfSet{rdpmc: p.rdpmc && hasRDPMC && hwCPUExact(), n: len(sources), cpus: cpus}
	for c := 0; c < cpus; c++ {
		for _, src := range sources {
			pc, err := openCounter(p.typ, p.events[src], c, s.rdpmc)
			if err != nil {
				s.Close()
				return nil, fmt.Errorf("%v on CPU %d: %w", src, c, err)
			}
			s.ctrs = append(s.ctrs, pc)
		}
	}
	return s, nil
}

// openCounter opens a pinned counting event on CPU cpu for every task, enabled at once,
// and maps its first page when the caller wants to read it with RDPMC.
func openCounter(typ uint32, config uint64, cpu int, mapPage bool) (perfCounter, error) {
	attr := unix.PerfEventAttr{
		Type:   typ,
		Size:   uint32(unsafe.Sizeof(unix.PerfEventAttr{})),
		Config: config,
		Bits:   unix.PerfBitPinned | unix.PerfBitExcludeHv,
	}
	fd, err := unix.PerfEventOpen(&attr, -1, cpu, -1, unix.PERF_FLAG_FD_CLOEXEC)
	if err != nil {
		return perfCounter{fd: -1}, explainOpen(err)
	}
	pc := perfCounter{fd: fd}
	if mapPage {
		mem, err := unix.Mmap(fd, 0, os.Getpagesize(), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			unix.Close(fd)
			return perfCounter{fd: -1}, fmt.Errorf("mmap of the event page: %w", err)
		}
		pc.mem, pc.page = mem, (*mmapPage)(unsafe.Pointer(&mem[0]))
	}
	return pc, nil
}

func explainOpen(err error) error {
	switch {
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return fmt.Errorf("perf_event_open refused per-CPU counting: %w", err)
	case errors.Is(err, unix.ENOENT), errors.Is(err, unix.EOPNOTSUPP), errors.Is(err, unix.ENODEV):
		return fmt.Errorf("the kernel has no such hardware event: %w", err)
	}
	return fmt.Errorf("perf_event_open: %w", err)
}

func (s *perfSet) Read(proc int, seq uint64, dst []uint64) {
	c := proc % s.cpus
	for i := range dst {
		dst[i] = s.read(&s.ctrs[c*s.n+i], c)
	}
}

// read takes one counter's value: with RDPMC when the page allows it and the goroutine
// is on the counter's CPU before and after (RDPMC reads the core it runs on), else with
// read(2). A value that cannot be read is 0.
func (s *perfSet) read(pc *perfCounter, cpu int) uint64 {
	if s.rdpmc && pc.page != nil && hw.CPU() == cpu {
		if v, ok := readSelf(pc.page, rdpmcInsn); ok && hw.CPU() == cpu {
			return v
		}
	}
	var b [8]byte
	if n, err := unix.Read(pc.fd, b[:]); err != nil || n != 8 {
		return 0
	}
	return *(*uint64)(unsafe.Pointer(&b))
}

func (s *perfSet) Close() error {
	for _, pc := range s.ctrs {
		if pc.mem != nil {
			unix.Munmap(pc.mem)
		}
		if pc.fd >= 0 {
			unix.Close(pc.fd)
		}
	}
	s.ctrs = nil
	return nil
}

func machineProbe() probe {
	return probe{
		goos: runtime.GOOS,
		devices: func() ([]string, error) {
			es, err := os.ReadDir(devicesDir)
			names := make([]string, len(es))
			for i, e := range es {
				names[i] = e.Name()
			}
			return names, err
		},
		readFile: func(path string) (string, error) {
			b, err := os.ReadFile(path)
			return strings.TrimSpace(string(b)), err
		},
		openCycles: func() (pageInfo, error) {
			pc, err := openCounter(unix.PERF_TYPE_HARDWARE, unix.PERF_COUNT_HW_CPU_CYCLES, 0, true)
			if err != nil {
				return pageInfo{}, err
			}
			defer unix.Close(pc.fd)
			defer unix.Munmap(pc.mem)
			return pageInfo{capUserRDPMC: pc.page.capabilities&capUserRDPMC != 0, index: pc.page.index, width: pc.page.pmcWidth}, nil
		},
		tsc:       hw.HasTSC(),
		rdpmcInsn: hasRDPMC,
	}
}
