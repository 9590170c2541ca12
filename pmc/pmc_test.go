package pmc

import (
	"encoding/binary"
	"errors"
	"math"
	"testing"

	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// TestLayouts checks the table of Geoff Chappell, "ETW_PMC_SUPPORT": sizes and offsets of
// the three variants, and no structure before 6.2.
func TestLayouts(t *testing.T) {
	cases := []struct {
		v               winver.Version
		slots           int
		size            [2]uint32
		hookCount, ctrs [2]uint32
	}{
		{winver.V6_2, 4, [2]uint32{0x24, 0x28}, [2]uint32{0x10, 0x10}, [2]uint32{0x20, 0x20}},
		{winver.V1607, 4, [2]uint32{0x24, 0x28}, [2]uint32{0x10, 0x10}, [2]uint32{0x20, 0x20}},
		{winver.V1703, 8, [2]uint32{0x34, 0x38}, [2]uint32{0x20, 0x20}, [2]uint32{0x30, 0x30}},
		{winver.V1809, 8, [2]uint32{0x34, 0x38}, [2]uint32{0x20, 0x20}, [2]uint32{0x30, 0x30}},
		{winver.V1903, 0, [2]uint32{0x18, 0x20}, [2]uint32{0x04, 0x08}, [2]uint32{0x14, 0x18}},
		{winver.V2004, 0, [2]uint32{0x18, 0x20}, [2]uint32{0x04, 0x08}, [2]uint32{0x14, 0x18}},
	}
	for _, c := range cases {
		l, ok := LayoutFor(c.v)
		if !ok || l.SourceSlots != c.slots || l.Size != c.size || l.HookIDCount != c.hookCount || l.ProcessorCtrs != c.ctrs {
			t.Errorf("%v: layout %+v, want slots %d size %#x hook count at %#x ctrs at %#x", c.v, l, c.slots, c.size, c.hookCount, c.ctrs)
		}
		for arch := X86; arch <= X64; arch++ {
			// The declared size holds exactly one ProcessorCtrs element, and HookId[4]
			// ends where CountersCount starts.
			if l.SizeFor(arch, 1) != l.Size[arch] || l.HookID[arch]+8 != l.CountersCount[arch] || l.HookIDCount[arch]+4 != l.HookID[arch] {
				t.Errorf("%v arch %d: members do not tile: %+v", c.v, arch, l)
			}
		}
	}
	for _, v := range []winver.Version{winver.V5_2, winver.V6_1} {
		if _, ok := LayoutFor(v); ok {
			t.Errorf("%v has a PMC layout; PMC support starts in 6.2", v)
		}
	}
}

// TestImage checks the bytes of each variant at the seed's offsets.
func TestImage(t *testing.T) {
	le := binary.LittleEndian
	for _, v := range []winver.Version{winver.V6_3, winver.V1709, winver.V2004} {
		hal, _ := NewHAL(Synthetic{}, 4)
		s, err := NewSupport(v, 3, hal)
		if err != nil {
			t.Fatal(err)
		}
		must(t, s.SetCounters([]ProfileSource{ProfileTotalCycles, ProfileCacheMisses}))
		must(t, s.SetHooks([]uint32{HookCSwitch, HookSampledProfile, 0x1234}))
		for arch := X86; arch <= X64; arch++ {
			l := s.Layout()
			b := s.Image(arch)
			if len(b) != int(l.ProcessorCtrs[arch])+3*int(PointerSize(arch)) {
				t.Fatalf("%v arch %d: %d bytes", v, arch, len(b))
			}
			if l.SourceSlots > 0 {
				if le.Uint32(b[0:]) != 19 || le.Uint32(b[4:]) != 10 || le.Uint32(b[8:]) != 0 {
					t.Errorf("%v arch %d: inline sources % x", v, arch, b[:16])
				}
			} else if le.Uint32(b[0:]) == 0 {
				t.Errorf("%v arch %d: the Source pointer is null", v, arch)
			}
			if le.Uint32(b[l.HookIDCount[arch]:]) != 3 || le.Uint16(b[l.HookID[arch]:]) != HookCSwitch ||
				le.Uint16(b[l.HookID[arch]+4:]) != 0x1234 || le.Uint32(b[l.CountersCount[arch]:]) != 2 {
				t.Errorf("%v arch %d: hook or counter members wrong: % x", v, arch, b)
			}
			if le.Uint32(b[l.ProcessorCtrs[arch]+2*PointerSize(arch):]) == 0 {
				t.Errorf("%v arch %d: processor 2's PMC_HANDLE is null", v, arch)
			}
		}
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func sources(n int) []ProfileSource {
	s := make([]ProfileSource, n)
	for i := range s {
		s[i] = ProfileSource(i + 1)
	}
	return s
}

// TestCounterLimits checks the boundary of each variant: 4 in 6.2 to 1607 and 8 in 1703
// to 1809 (bounded also by the processor's counters), the processor's count from 1903.
func TestCounterLimits(t *testing.T) {
	cases := []struct {
		v        winver.Version
		platform int
		max      int
	}{
		{winver.V6_2, 8, 4}, {winver.V1607, 16, 4}, {winver.V1607, 2, 2},
		{winver.V1703, 16, 8}, {winver.V1809, 8, 8}, {winver.V1809, 6, 6},
		{winver.V1903, 6, 6}, {winver.V2004, 12, 12}, {winver.V2004, 4, 4},
	}
	for _, c := range cases {
		hal, err := NewHAL(Synthetic{}, c.platform)
		must(t, err)
		if got := hal.MaxCounters(c.v); got != c.max {
			t.Errorf("%v on %d counters: MaxCounters %d, want %d", c.v, c.platform, got, c.max)
		}
		s, _ := NewSupport(c.v, 2, hal)
		err = s.SetCounters(sources(c.max + 1))
		var r *Refusal
		if !errors.As(err, &r) || r.Rule != RuleInvalid || !errors.Is(err, winerr.ErrInvalidParameter) {
			t.Errorf("%v on %d counters: %d sources gave %v, want ERROR_INVALID_PARAMETER", c.v, c.platform, c.max+1, err)
		}
		if !errors.Is(r.Native(), winerr.StatusInvalidParameter) {
			t.Errorf("native form %v", r.Native())
		}
		must(t, s.SetCounters(sources(c.max)))
		if s.CountersCount() != c.max || hal.InUse() != c.max {
			t.Errorf("%v: CountersCount %d, in use %d", c.v, s.CountersCount(), hal.InUse())
		}
		s.Close()
		if hal.InUse() != 0 {
			t.Errorf("%v: Close left %d counters in use", c.v, hal.InUse())
		}
	}
	if _, err := NewHAL(Synthetic{}, MaxPlatformCounters+1); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("a HAL of %d counters: %v", MaxPlatformCounters+1, err)
	}
}

func rule(err error) Rule {
	var r *Refusal
	if !errors.As(err, &r) {
		return 255
	}
	return r.Rule
}

// TestConfigurationRules checks the order and once-only rules, value checks, the hook-id
// limit and sharing of the processor's counters between loggers.
func TestConfigurationRules(t *testing.T) {
	hal, _ := NewHAL(Synthetic{}, 4)
	if _, err := NewSupport(winver.V6_1, 2, hal); rule(err) != RuleUnsupported || !errors.Is(err.(*Refusal).Native(), winerr.StatusInvalidInfoClass) {
		t.Fatalf("6.1: %v", err)
	}
	s, _ := NewSupport(winver.V2004, 2, hal)
	if err := s.SetHooks([]uint32{HookCSwitch}); rule(err) != RuleInvalid {
		t.Errorf("events before counters: %v", err)
	}
	for _, bad := range [][]ProfileSource{nil, {ProfileMaximum}, {ProfileTotalCycles, ProfileTotalCycles}} {
		if err := s.SetCounters(bad); rule(err) != RuleInvalid {
			t.Errorf("counters %v: %v", bad, err)
		}
	}
	must(t, s.SetCounters([]ProfileSource{ProfileTotalCycles, ProfileTotalIssues, ProfileCacheMisses}))
	if err := s.SetCounters([]ProfileSource{ProfileTotalCycles}); rule(err) != RuleBusy || !errors.Is(err, winerr.ErrBusy) {
		t.Errorf("second counter list: %v", err)
	}
	// A second logger wants two of the processor's four counters; three are taken.
	s2, _ := NewSupport(winver.V2004, 2, hal)
	if err := s2.SetCounters(sources(2)); rule(err) != RuleBusy || !errors.Is(err.(*Refusal).Native(), winerr.StatusDeviceBusy) ||
		err.(*Refusal).Reason != "2 counters asked for, 3 of the processor's 4 are in use by other loggers" {
		t.Errorf("over-committed HAL: %v", err)
	}
	must(t, s2.SetCounters(sources(1)))
	for _, bad := range [][]uint32{nil, {1, 2, 3, 4, 5}, {0x10000}} {
		if err := s.SetHooks(bad); rule(err) != RuleInvalid {
			t.Errorf("hooks %v: %v", bad, err)
		}
	}
	if s.Selects(HookCSwitch) {
		t.Error("selects before the event list is set")
	}
	must(t, s.SetHooks([]uint32{1, 2, 3, HookCSwitch}))
	if !s.Selects(HookCSwitch) || !s.Selects(1) || s.Selects(5) {
		t.Errorf("Selects wrong for hooks %v", s.HookIDs())
	}
	if err := s.SetHooks([]uint32{5}); rule(err) != RuleBusy {
		t.Errorf("second event list while counting: %v", err)
	}
	tsc, _ := NewHAL(TSC{}, 4)
	s3, _ := NewSupport(winver.V2004, 1, tsc)
	if err := s3.SetCounters([]ProfileSource{ProfileCacheMisses}); rule(err) != RuleCannotCount || !errors.Is(err, winerr.ErrNotSupported) {
		t.Errorf("TSC counting cache misses: %v", err)
	}
}

// TestSyntheticReads checks that a processor's reads are numbered per logger and give
// SyntheticValue.
func TestSyntheticReads(t *testing.T) {
	hal, _ := NewHAL(Synthetic{}, 4)
	s, _ := NewSupport(winver.V2004, 2, hal)
	must(t, s.SetCounters([]ProfileSource{ProfileTotalCycles, ProfileBranchMispredictions}))
	var dst [4]uint64
	for seq := uint64(1); seq <= 3; seq++ {
		if n := s.Read(1, dst[:]); n != 2 || dst[0] != SyntheticValue(1, ProfileTotalCycles, seq) || dst[1] != SyntheticValue(1, ProfileBranchMispredictions, seq) {
			t.Fatalf("read %d on processor 1: %d counters %#x", seq, n, dst[:n])
		}
	}
	s.Read(0, dst[:])
	if s.Reads(0) != 1 || s.Reads(1) != 3 || dst[0] != 0x0000_1300_0000_0001 {
		t.Errorf("reads %d/%d, processor 0 value %#x", s.Reads(0), s.Reads(1), dst[0])
	}
	// A processor past the session's, or a negative number, has been read never.
	s.Read(7, dst[:]) // wraps onto processor 1
	for _, p := range []int{2, -1, math.MaxInt} {
		if n := s.Reads(p); n != 0 {
			t.Errorf("Reads(%d) = %d, want 0 for a processor the session does not have", p, n)
		}
	}
	if s.Reads(1) != 4 {
		t.Errorf("processor 1 read %d times, want 4: a read on processor 7 wraps onto 1", s.Reads(1))
	}
}

// TestInformationBuffers checks the two routes' buffers: EVENT_TRACE_PROFILE_*_INFORMATION
// and CLASSIC_EVENT_ID, and their length and class checks.
func TestInformationBuffers(t *testing.T) {
	b := CounterInformation(0x1_0005, ProfileTotalCycles, ProfileCacheMisses)
	if len(b) != 0x18 || binary.LittleEndian.Uint32(b) != 0x0F {
		t.Fatalf("counter information % x", b)
	}
	class, h, list, err := ParseInformation(b)
	if err != nil || class != EventTraceProfileCounterListInformation || h != 0x1_0005 || len(list) != 2 || list[1] != 10 {
		t.Fatalf("parsed %#x %#x %v %v", class, h, list, err)
	}
	if _, _, _, err := ParseInformation(b[:0x13]); err == nil || err.Rule != RuleLength || !errors.Is(err.Native(), winerr.StatusInfoLengthMismatch) {
		t.Errorf("short buffer: %v", err)
	}
	if _, _, _, err := ParseInformation(b[:0x10]); err == nil || err.Rule != RuleLength {
		t.Errorf("header only: %v", err)
	}
	other := append([]byte(nil), b...)
	other[0] = 0x0C // EventTraceProfileConfigInformation
	if _, _, _, err := ParseInformation(other); err == nil || err.Rule != RuleUnsupported {
		t.Errorf("another class: %v", err)
	}
	ids := ClassicEventIDs(ClassicEventID{ThreadGUID, 36}, ClassicEventID{PerfInfoGUID, 46})
	hooks, err := ParseClassicEventIDs(ids)
	if err != nil || len(hooks) != 2 || hooks[0] != HookCSwitch || hooks[1] != HookSampledProfile {
		t.Fatalf("CLASSIC_EVENT_ID hooks %#x, %v", hooks, err)
	}
	if _, err := ParseClassicEventIDs(ids[:0x17]); err == nil || err.Rule != RuleLength {
		t.Errorf("partial CLASSIC_EVENT_ID: %v", err)
	}
	if _, err := ParseClassicEventIDs(ClassicEventIDs(ClassicEventID{guid.FromName("not-kernel"), 1})); err == nil || err.Rule != RuleInvalid {
		t.Errorf("provider GUID: %v", err)
	}
	if v, err := ParseULONGs([]byte{19, 0, 0, 0, 10, 0, 0, 0}); err != nil || len(v) != 2 || v[0] != 19 {
		t.Errorf("ULONGs %v %v", v, err)
	}
	if _, err := ParseULONGs([]byte{1, 2, 3}); err == nil || err.Rule != RuleLength {
		t.Errorf("3 bytes: %v", err)
	}
}

func TestProfileSourceNames(t *testing.T) {
	for _, name := range []string{"TotalCycles", "ProfileTotalCycles", "totalcycles", "19"} {
		if s, err := ParseProfileSource(name); err != nil || s != ProfileTotalCycles {
			t.Errorf("%q: %v %v", name, s, err)
		}
	}
	if _, err := ParseProfileSource("Nope"); err == nil {
		t.Error("parsed a name that is no source")
	}
	if ProfileBranchMispredictions.String() != "BranchMispredictions" || ProfileSource(40).String() != "40" {
		t.Error("names")
	}
}

// Values no Windows has are refused or answered empty, never a panic or a 128 GB
// allocation: processor counts outside [1, MaxProcessors], versions outside the emulated
// ones, architectures other than x86 and x64.
func TestOutOfRangeArguments(t *testing.T) {
	hal, err := NewHAL(Synthetic{}, DefaultPlatformCounters)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{-1, 0, MaxProcessors + 1, math.MaxInt32} {
		if _, err := NewSupport(winver.Default, n, hal); !errors.Is(err, winerr.ErrInvalidParameter) {
			t.Errorf("NewSupport with %d processors: %v, want ERROR_INVALID_PARAMETER", n, err)
		}
	}
	for _, v := range []winver.Version{0, 255} {
		if _, ok := LayoutFor(v); ok {
			t.Errorf("LayoutFor(%d) has a layout", v)
		}
		if _, err := NewSupport(v, 1, hal); err == nil {
			t.Errorf("NewSupport(%d) succeeded", v)
		}
	}
	l, _ := LayoutFor(winver.Default)
	for _, arch := range []int{-1, 2, 64} {
		if PointerSize(arch) != 0 || l.SizeFor(arch, 4) != 0 {
			t.Errorf("architecture %d: pointer %d, size %d; want 0 and 0", arch, PointerSize(arch), l.SizeFor(arch, 4))
		}
	}
	if PointerSize(0) != 4 || PointerSize(1) != 8 {
		t.Errorf("pointers %d and %d bytes", PointerSize(0), PointerSize(1))
	}
}
