package pmc

import (
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

// fakeProbe is a machine with a PMU where everything is allowed; cases break one thing.
func fakeProbe() probe {
	return probe{
		goos:    "linux",
		devices: func() ([]string, error) { return []string{"breakpoint", "cpu", "software"}, nil },
		readFile: func(p string) (string, error) {
			return map[string]string{paranoidAt: "2", devicesDir + "/cpu/rdpmc": "1"}[p], nil
		},
		openCycles: func() (pageInfo, error) { return pageInfo{capUserRDPMC: true, index: 1, width: 48}, nil },
		tsc:        true,
		rdpmcInsn:  true,
	}
}

func TestDetect(t *testing.T) {
	cases := []struct {
		name   string
		change func(*probe)
		chosen string
		why    map[string]string // candidate -> words its reason must contain
	}{
		{"all allowed", func(*probe) {}, NamePerfRDPMC, nil},
		{"rdpmc sysfs 0", func(p *probe) {
			p.readFile = func(path string) (string, error) { return "0", nil }
		}, NamePerfRead, map[string]string{NamePerfRDPMC: "rdpmc disabled"}},
		{"page forbids", func(p *probe) {
			p.openCycles = func() (pageInfo, error) { return pageInfo{index: 1, width: 48}, nil }
		}, NamePerfRead, map[string]string{NamePerfRDPMC: "cap_user_rdpmc clear"}},
		{"index 0", func(p *probe) {
			p.openCycles = func() (pageInfo, error) { return pageInfo{capUserRDPMC: true, width: 48}, nil }
		}, NamePerfRead, map[string]string{NamePerfRDPMC: "index 0"}},
		{"paranoid", func(p *probe) {
			p.openCycles = func() (pageInfo, error) {
				return pageInfo{}, errors.New("perf_event_open refused per-CPU counting: permission denied")
			}
		}, NameTSC, map[string]string{NamePerfRDPMC: "perf_event_paranoid is 2", NamePerfRead: "perf_event_paranoid is 2"}},
		{"no PMU", func(p *probe) {
			p.devices = func() ([]string, error) {
				return []string{"breakpoint", "msr", "software", "tracepoint", "uprobe"}, nil
			}
		}, NameTSC, map[string]string{NamePerfRDPMC: "no hardware PMU", NamePerfRead: "lists only breakpoint, msr"}},
		{"no PMU, no TSC", func(p *probe) {
			p.devices = func() ([]string, error) { return nil, nil }
			p.tsc = false
		}, NameSynthetic, map[string]string{NameTSC: "no invariant time-stamp counter"}},
		{"not Linux", func(p *probe) { p.goos = "darwin" }, NameTSC, map[string]string{NamePerfRead: "Linux's"}},
		{"arm64", func(p *probe) { p.rdpmcInsn = false }, NamePerfRead, map[string]string{NamePerfRDPMC: "x86 instruction"}},
	}
	for _, c := range cases {
		p := fakeProbe()
		c.change(&p)
		d := detect(p)
		if d.Chosen != c.chosen {
			t.Errorf("%s: chose %s, want %s\n%s", c.name, d.Chosen, c.chosen, d)
		}
		for name, words := range c.why {
			if cand, _ := d.Candidate(name); cand.OK || !strings.Contains(cand.Why, words) {
				t.Errorf("%s: %s judged %+v, want refused saying %q", c.name, name, cand, words)
			}
		}
		if len(d.Candidates) != 4 || !strings.Contains(d.String(), "-> "+c.chosen) {
			t.Errorf("%s: report\n%s", c.name, d)
		}
	}
}

// TestDetectThisMachine checks detection on the machine the tests run on. On the
// development machines (virtual, no PMU) it must fall back past both perf sources and
// say why.
func TestDetectThisMachine(t *testing.T) {
	d := Detect()
	t.Logf("\n%s", d)
	if d.Chosen == "" {
		t.Fatal("nothing chosen; the synthetic source is always usable")
	}
	es, err := os.ReadDir(devicesDir)
	if err != nil {
		t.Skipf("no %s: %v", devicesDir, err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	if !slices.Contains(names, "cpu") && !slices.Contains(names, "cpu_core") {
		for _, n := range []string{NamePerfRDPMC, NamePerfRead} {
			if c, _ := d.Candidate(n); c.OK || !strings.Contains(c.Why, "no hardware PMU") {
				t.Errorf("no PMU here, but %s was judged %+v", n, c)
			}
		}
		if d.Chosen != NameTSC && d.Chosen != NameSynthetic {
			t.Errorf("chose %s without a PMU", d.Chosen)
		}
		if _, _, err := Choose(NamePerfRead); err == nil || !strings.Contains(err.Error(), "no hardware PMU") {
			t.Errorf("Choose(perf-read) without a PMU: %v", err)
		}
	}
	src, _, err := Choose(NameAuto)
	if err != nil || src.Name() != d.Chosen {
		t.Errorf("Choose(auto) = %v, %v; detection chose %s", src, err, d.Chosen)
	}
	if _, _, err := Choose("fastest"); err == nil {
		t.Error("Choose accepted an unknown name")
	}
}

func TestTSCSource(t *testing.T) {
	src, _, err := Choose(NameTSC)
	if err != nil {
		t.Skip(err)
	}
	set, err := src.Open([]ProfileSource{ProfileTotalCycles}, 2)
	if err != nil {
		t.Fatal(err)
	}
	var a, b [1]uint64
	set.Read(0, 1, a[:])
	set.Read(1, 1, b[:])
	if a[0] == 0 || b[0] < a[0] {
		t.Errorf("TSC reads %d then %d", a[0], b[0])
	}
}
