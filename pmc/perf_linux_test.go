//go:build linux

package pmc

import (
	"errors"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestMmapPageLayout checks the emulator's page head against x/sys/unix's.
func TestMmapPageLayout(t *testing.T) {
	var a mmapPage
	var b unix.PerfEventMmapPage
	pairs := [][2]uintptr{
		{unsafe.Offsetof(a.lock), unsafe.Offsetof(b.Lock)},
		{unsafe.Offsetof(a.index), unsafe.Offsetof(b.Index)},
		{unsafe.Offsetof(a.offset), unsafe.Offsetof(b.Offset)},
		{unsafe.Offsetof(a.capabilities), unsafe.Offsetof(b.Capabilities)},
		{unsafe.Offsetof(a.pmcWidth), unsafe.Offsetof(b.Pmc_width)},
		{unsafe.Offsetof(a.timeMult), unsafe.Offsetof(b.Time_mult)},
	}
	for i, p := range pairs {
		if p[0] != p[1] {
			t.Errorf("member %d at %#x, kernel's at %#x", i, p[0], p[1])
		}
	}
	if unsafe.Offsetof(a.pmcWidth)%8 != 0 {
		t.Error("pmc_width does not start an 8-byte word; readSelf loads it as one")
	}
}

// TestPerfReadPath runs the read(2) path of the perf source for real, with the software
// cpu-clock event standing in for a hardware one (these machines have no PMU). A page is
// mapped too: software events never allow RDPMC, so it must not be used.
func TestPerfReadPath(t *testing.T) {
	src := &perfSource{rdpmc: true, typ: unix.PERF_TYPE_SOFTWARE, events: map[ProfileSource]uint64{ProfileTotalCycles: unix.PERF_COUNT_SW_CPU_CLOCK}}
	set, err := src.Open([]ProfileSource{ProfileTotalCycles}, 1)
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
		t.Skipf("per-CPU software events not permitted here: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer set.Close()
	ps := set.(*perfSet)
	if pg := ps.ctrs[0].page; pg != nil {
		if _, ok := readSelf(pg, func(uint32) uint64 { t.Fatal("RDPMC on a software event's page"); return 0 }); ok {
			t.Fatal("a software event's page allowed RDPMC")
		}
	}
	var a, b [1]uint64
	set.Read(0, 1, a[:])
	for x := 0; x < 1e6; x++ {
		_ = x * x
	}
	set.Read(0, 2, b[:])
	if b[0] <= a[0] {
		t.Errorf("cpu-clock read %d then %d ns; read(2) did not return the running count", a[0], b[0])
	}
	if err := src.Counts(ProfileCacheMisses); err == nil {
		t.Error("counts a source it has no event for")
	}
	if err := newPerfSource(false).Counts(ProfileCacheMisses); err != nil {
		t.Errorf("hardware perf source cannot count cache misses: %v", err)
	}
}
