package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/pmc"
)

func TestPMCCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"pmc", "-source", "synthetic", "-reads", "10", "-counters", "8"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	d := pmc.Detect()
	for _, want := range []string{"-> " + d.Chosen, "synthetic: 10 reads of processor 0's 8 counters",
		"6.2 to 1607     KPROFILE_SOURCE [4]", "1703 to 1809    KPROFILE_SOURCE [8]  0x20/0x20", "1903 and later  KPROFILE_SOURCE *    0x4/0x8", "0x18/0x20  8"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	if code := run([]string{"pmc", "-source", "no-such"}, &out, &errb); code != 2 || !strings.Contains(errb.String(), `-source "no-such": not a counter source`) {
		t.Errorf("unknown source: exit %d, %s", code, errb.String())
	}
}

// TestDemoPMCThenDump: demo -pmc records counters on event id 1; dump -json shows them
// on exactly those events, with the synthetic source's values for the record's processor.
func TestDemoPMCThenDump(t *testing.T) {
	path := filepath.Join(t.TempDir(), "pmc.etl")
	var out, errb bytes.Buffer
	args := []string{"demo", "-logfile", path, "-duration", "50ms", "-progress", "0", "-processors", "2", "-pmc", "TotalCycles,BranchMispredictions", "-pmc-source", "synthetic"}
	if code := run(args, &out, &errb); code != 0 {
		t.Fatalf("demo exit %d\n%s%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "PMC: TotalCycles, BranchMispredictions from the synthetic source on every event with id 1") {
		t.Errorf("demo does not report its PMC configuration:\n%s", out.String())
	}
	out.Reset()
	if code := run([]string{"dump", "-json", path}, &out, &errb); code != 0 {
		t.Fatalf("dump exit %d: %s", code, errb.String())
	}
	sc := bufio.NewScanner(&out)
	sc.Buffer(nil, 1<<20)
	with, without := 0, 0
	for sc.Scan() {
		var r struct {
			Kind      string   `json:"kind"`
			ID        *int     `json:"id"`
			Processor int      `json:"processor"`
			PMC       []uint64 `json:"pmc"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil || r.ID == nil {
			continue
		}
		if *r.ID != 1 {
			without++
			if r.PMC != nil {
				t.Fatalf("event id %d carries counters %v", *r.ID, r.PMC)
			}
			continue
		}
		with++
		if len(r.PMC) != 2 || r.PMC[0]>>48 != uint64(r.Processor) || r.PMC[0]>>40&0xFF != 19 || r.PMC[1]>>40&0xFF != 11 || r.PMC[0]&(1<<40-1) == 0 {
			t.Fatalf("event id 1 on processor %d carries %#x", r.Processor, r.PMC)
		}
	}
	if with == 0 || without == 0 {
		t.Errorf("%d events with counters, %d without", with, without)
	}
}

// pmc -json gives what the text does, as one object: each source with whether it can be
// used and why, the one auto chooses, the reads of the source read, and the layouts.
func TestPMCJSON(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"pmc", "-json", "-source", "synthetic", "-reads", "10", "-counters", "2"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var v pmcView
	if err := json.Unmarshal(out.Bytes(), &v); err != nil {
		t.Fatalf("%v:\n%s", err, out.String())
	}
	chosen := 0
	for _, s := range v.Sources {
		if s.Chosen {
			chosen++
		}
		if s.Why == "" {
			t.Errorf("source %s says nothing of why", s.Name)
		}
	}
	if chosen != 1 || v.Source != "synthetic" || v.Reads != 10 || len(v.Counters) != 2 || v.Counters[0].Last <= v.Counters[0].First || len(v.Layouts) != 3 || v.Layouts[2].MaxSources == 0 {
		t.Errorf("pmc -json: %+v", v)
	}
}
