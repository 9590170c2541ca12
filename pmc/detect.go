package pmc

import (
	"fmt"
	"strings"
	"sync"

	"github.com/etwemu/etwemu/internal/hw"
	"github.com/etwemu/etwemu/internal/quote"
)

// Source names, best first: the order detection tries them in.
const (
	NamePerfRDPMC = "perf-rdpmc" // hardware counters through perf events, read with RDPMC
	NamePerfRead  = "perf-read"  // the same counters read with read(2)
	NameTSC       = "tsc"        // the time-stamp counter as a cycle counter
	NameSynthetic = "synthetic"  // deterministic values
	NameAuto      = "auto"       // whatever detection picks
)

// Candidate is one counter source as detection judged it.
type Candidate struct {
	Name string
	OK   bool
	Why  string // why it can or cannot be used here
}

// Detection is which counter source this machine can use, and why each better one
// cannot.
type Detection struct {
	Chosen     string
	Candidates []Candidate
}

// String writes the detection as `etwemu pmc` prints it: one line per candidate.
func (d Detection) String() string {
	var b strings.Builder
	for _, c := range d.Candidates {
		mark := "no "
		if c.Name == d.Chosen {
			mark = "-> "
		} else if c.OK {
			mark = "ok "
		}
		fmt.Fprintf(&b, "%s%-11s %s\n", mark, c.Name, c.Why)
	}
	return b.String()
}

// Candidate returns the judgement on the named source.
func (d Detection) Candidate(name string) (Candidate, bool) {
	for _, c := range d.Candidates {
		if c.Name == name {
			return c, true
		}
	}
	return Candidate{}, false
}

// probe is what detection asks of the machine; tests give it fake answers.
type probe struct {
	goos string
	// devices lists the PMUs under /sys/bus/event_source/devices.
	devices func() ([]string, error)
	// readFile reads a sysfs or procfs file, trimmed.
	readFile func(path string) (string, error)
	// openCycles opens a pinned cycle counter on CPU 0, maps its page, and reports what
	// the page says; the error explains a refusal (perf_event_paranoid and the like).
	openCycles func() (pageInfo, error)
	tsc        bool // an invariant time-stamp counter
	rdpmcInsn  bool // the architecture has RDPMC
}

// pageInfo is what a mapped perf event page says about self-monitoring.
type pageInfo struct {
	capUserRDPMC bool
	index        uint32
	width        uint16
}

const (
	devicesDir = "/sys/bus/event_source/devices"
	paranoidAt = "/proc/sys/kernel/perf_event_paranoid"
)

// hardwarePMUs are the PMU names Linux gives a processor's core counters (hybrid Intel
// parts have two).
var hardwarePMUs = []string{"cpu", "cpu_core", "cpu_atom"}

func detect(p probe) Detection {
	var d Detection
	add := func(name string, ok bool, why string, args ...any) {
		d.Candidates = append(d.Candidates, Candidate{Name: name, OK: ok, Why: fmt.Sprintf(why, args...)})
		if ok && d.Chosen == "" {
			d.Chosen = name
		}
	}
	rdpmcWhy, readWhy, pmu := perfJudgement(p)
	add(NamePerfRDPMC, pmu != "" && rdpmcWhy == "", "%s", or(rdpmcWhy, "the "+pmu+" PMU's mapped page allows RDPMC"))
	add(NamePerfRead, pmu != "" && readWhy == "", "%s", or(readWhy, "perf_event_open counts the "+pmu+" PMU's events per CPU; read(2) reads them"))
	if p.tsc {
		add(NameTSC, true, "invariant time-stamp counter: ProfileTotalCycles only, at the TSC's constant rate")
	} else {
		add(NameTSC, false, "no invariant time-stamp counter (CPUID)")
	}
	add(NameSynthetic, true, "deterministic values: processor<<48 | source<<40 | read sequence")
	return d
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// perfJudgement says why perf-rdpmc and perf-read cannot be used ("" if they can), and
// names the hardware PMU found.
func perfJudgement(p probe) (rdpmcWhy, readWhy, pmu string) {
	if p.goos != "linux" {
		why := "perf events are Linux's; this is " + p.goos
		return why, why, ""
	}
	devs, err := p.devices()
	if err != nil {
		why := fmt.Sprintf("cannot list PMUs: %v", err)
		return why, why, ""
	}
	for _, want := range hardwarePMUs {
		for _, d := range devs {
			if d == want {
				pmu = d
			}
		}
		if pmu != "" {
			break
		}
	}
	if pmu == "" {
		why := fmt.Sprintf("no hardware PMU: %s lists only %s (a virtual machine without PMU passthrough)", devicesDir, strings.Join(devs, ", "))
		return why, why, ""
	}
	page, err := p.openCycles()
	if err != nil {
		why := err.Error()
		if par, perr := p.readFile(paranoidAt); perr == nil {
			why += fmt.Sprintf(" (perf_event_paranoid is %s; per-CPU counting needs -1 or 0, or CAP_PERFMON)", par)
		}
		return why, why, pmu
	}
	switch rd, rerr := p.readFile(devicesDir + "/" + pmu + "/rdpmc"); {
	case !p.rdpmcInsn:
		rdpmcWhy = "RDPMC is an x86 instruction"
	case rerr == nil && rd == "0":
		rdpmcWhy = fmt.Sprintf("rdpmc disabled: %s/%s/rdpmc is 0", devicesDir, pmu)
	case !page.capUserRDPMC:
		rdpmcWhy = "the mapped page has cap_user_rdpmc clear"
	case page.index == 0:
		rdpmcWhy = "the mapped page has index 0 (the counter is not on the PMU now)"
	case page.width == 0:
		rdpmcWhy = "the mapped page gives pmc_width 0"
	}
	return rdpmcWhy, "", pmu
}

var (
	machineOnce sync.Once
	machine     Detection
)

// Detect judges the counter sources on this machine (once per process) and picks the
// best usable one.
func Detect() Detection {
	machineOnce.Do(func() { machine = detect(machineProbe()) })
	return machine
}

// KnownSource reports whether name is one of the counter sources Choose takes (auto,
// perf-rdpmc, perf-read, tsc, synthetic), whether or not this machine allows it: a
// command line can refuse a misspelt name before it does anything.
func KnownSource(name string) bool {
	switch name {
	case "", NameAuto, NamePerfRDPMC, NamePerfRead, NameTSC, NameSynthetic:
		return true
	}
	return false
}

// Choose returns the named counter source, or for "auto" (or "") the one Detect picks,
// with the detection that explains it. A named source the machine cannot use is an
// error saying why.
func Choose(name string) (Source, Detection, error) {
	if name == NameSynthetic {
		// Needs nothing of the machine; skip probing it.
		return Synthetic{}, Detection{Chosen: NameSynthetic}, nil
	}
	d := Detect()
	if name == "" || name == NameAuto {
		name = d.Chosen
	}
	c, ok := d.Candidate(name)
	switch {
	case !ok:
		return nil, d, fmt.Errorf("pmc: no counter source %s (auto, %s, %s, %s, %s)", quote.Short(name), NamePerfRDPMC, NamePerfRead, NameTSC, NameSynthetic)
	case !c.OK:
		return nil, d, fmt.Errorf("pmc: counter source %s cannot be used here: %s", name, c.Why)
	}
	d.Chosen = name
	switch name {
	case NameTSC:
		return TSC{}, d, nil
	case NameSynthetic:
		return Synthetic{}, d, nil
	}
	return newPerfSource(name == NamePerfRDPMC), d, nil
}

// hwCPUExact reports whether hw.CPU returns the operating system's CPU number (RDPID or
// RDTSCP), which the RDPMC path needs to know it runs on the counter's CPU.
func hwCPUExact() bool { return hw.Method() != hw.CPUByStack }
