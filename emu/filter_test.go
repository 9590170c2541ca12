package emu

import (
	"errors"
	"slices"
	"testing"

	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

var (
	filterEventIDs   = guidtable.EventIDFilter
	filterPIDs       = guidtable.PIDFilter
	filterExecutable = func(name string) FilterDescriptor { return guidtable.ExecutableNameFilter(name) }
)

// TestEnableFilters: each session gets the events its enablement's filters admit, and
// the others get theirs: an EVENT_ID filter in and out, a PID filter of the emulated
// process and of another, an EXECUTABLE_NAME filter of the program's own name (in
// another case) and of another; a re-enable without filters clears them. Ids 1 to 4 are
// written, once through the general path (several sessions) and once through a
// kernel whose one session's route is cached.
func TestEnableFilters(t *testing.T) {
	cases := []struct {
		name    string
		filters func(k *Kernel) []FilterDescriptor
		want    []uint16
	}{
		{"none", func(*Kernel) []FilterDescriptor { return nil }, []uint16{1, 2, 3, 4}},
		{"ids in", func(*Kernel) []FilterDescriptor { return []FilterDescriptor{filterEventIDs(true, 2, 4)} }, []uint16{2, 4}},
		{"ids out", func(*Kernel) []FilterDescriptor { return []FilterDescriptor{filterEventIDs(false, 2, 4)} }, []uint16{1, 3}},
		{"own pid", func(k *Kernel) []FilterDescriptor { return []FilterDescriptor{filterPIDs(k.pid+1, k.pid)} }, []uint16{1, 2, 3, 4}},
		{"other pid", func(k *Kernel) []FilterDescriptor { return []FilterDescriptor{filterPIDs(k.pid + 1)} }, nil},
		{"own executable", func(k *Kernel) []FilterDescriptor {
			return []FilterDescriptor{filterExecutable("other.exe;" + k.exe), filterEventIDs(true, 3)}
		}, []uint16{3}},
		{"other executable", func(*Kernel) []FilterDescriptor { return []FilterDescriptor{filterExecutable("other.exe")} }, nil},
	}
	for _, cached := range []bool{false, true} {
		for _, c := range cases {
			var k *Kernel
			if cached {
				k = routingKernel(t)
			} else {
				k = newKernel(t, winver.V2004)
			}
			h, sink := startMem(t, k, "Filtered", 0)
			r, _ := k.EventRegister(provA, nil, nil)
			hAll, sinkAll := TraceHandle(0), sink
			if !cached { // a second session without filters: the general path
				hAll, sinkAll = startMem(t, k, "All", 0)
				if err := k.EnableTraceEx2(hAll, provA, regentry.ControlEnable, 5, 0, 0, nil); err != nil {
					t.Fatal(err)
				}
			}
			if err := k.EnableTraceEx2(h, provA, regentry.ControlEnable, 5, 0, 0, &EnableParameters{Filters: c.filters(k)}); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			for range 2 { // the second round takes a route the first cached
				for id := uint16(1); id <= 4; id++ {
					if err := k.EventWrite(r, &EventDescriptor{ID: id, Level: 4}, []byte("x")); err != nil {
						t.Fatal(err)
					}
				}
			}
			k.FlushTrace(h, "", &Properties{})
			var got []uint16
			for _, e := range records(t, sink) {
				got = append(got, e.Descriptor.ID)
			}
			want := append(slices.Clone(c.want), c.want...)
			if !slices.Equal(got, want) {
				t.Errorf("cached route %v, %s: the filtered session got ids %v, want %v", cached, c.name, got, want)
			}
			if !cached {
				k.FlushTrace(hAll, "", &Properties{})
				if n := len(records(t, sinkAll)); n != 8 {
					t.Errorf("%s: the session without filters got %d events, want 8", c.name, n)
				}
			}
			// A re-enable without filters clears them.
			if err := k.EnableTraceEx2(h, provA, regentry.ControlEnable, 5, 0, 0, nil); err != nil {
				t.Fatal(err)
			}
			before := len(records(t, sink))
			for id := uint16(1); id <= 4; id++ {
				k.EventWrite(r, &EventDescriptor{ID: id, Level: 4}, []byte("x"))
			}
			k.FlushTrace(h, "", &Properties{})
			if n := len(records(t, sink)) - before; n != 4 {
				t.Errorf("cached route %v, %s: %d events after a re-enable without filters, want 4", cached, c.name, n)
			}
		}
	}
}

// TestEnableFiltersRefused: EnableTraceEx2 refuses filters before Windows 8.1 and of a
// type the emulator does not apply (ERROR_NOT_SUPPORTED), and descriptors that break the
// rules (ERROR_INVALID_PARAMETER), and enables nothing then.
func TestEnableFiltersRefused(t *testing.T) {
	for _, c := range []struct {
		v       winver.Version
		filters []FilterDescriptor
		want    error
	}{
		{winver.V6_2, []FilterDescriptor{filterPIDs(1)}, winerr.ErrNotSupported},
		{winver.V2004, []FilterDescriptor{{Type: 0x80000100, Data: []byte{1}}}, winerr.ErrNotSupported},
		{winver.V2004, []FilterDescriptor{filterPIDs(1), filterPIDs(2)}, winerr.ErrInvalidParameter},
		{winver.V2004, []FilterDescriptor{filterEventIDs(true)}, winerr.ErrInvalidParameter},
	} {
		k := newKernel(t, c.v)
		h, _ := startMem(t, k, "Refused", 0)
		err := k.EnableTraceEx2(h, provA, regentry.ControlEnable, 5, 0, 0, &EnableParameters{Filters: c.filters})
		if !errors.Is(err, c.want) {
			t.Errorf("%v, %+v: %v, want %v", c.v, c.filters, err, c.want)
		}
		if _, ok := k.LookupGuidEntry(provA, false); ok {
			t.Errorf("%v: a refused enable left a GUID entry", c.v)
		}
	}
}

// TestConfigExecutable: Config.Executable names the process EXECUTABLE_NAME filters
// match, the last element of a path, in any case; left empty, the program's own name.
func TestConfigExecutable(t *testing.T) {
	for _, c := range []struct {
		exe, filter string
		admits      bool
	}{
		{`C:\Apps\App.EXE`, "app.exe", true},
		{"/opt/bin/app.exe", "other.exe;APP.exe", true},
		{"app.exe", "other.exe", false},
		{"", executableName(), true},
		{"C:app.exe", "app.exe", true},
	} {
		k, err := New(Config{Version: winver.V2004, Processors: 1, Executable: c.exe, FileSystem: &etl.MemFS{}})
		if err != nil {
			t.Fatal(err)
		}
		h, sink := startMem(t, k, "Filtered", 0)
		r, _ := k.EventRegister(provA, nil, nil)
		if err := k.EnableTraceEx2(h, provA, regentry.ControlEnable, 5, 0, 0, &EnableParameters{Filters: []FilterDescriptor{filterExecutable(c.filter)}}); err != nil {
			t.Fatal(err)
		}
		if err := k.EventWrite(r, &EventDescriptor{ID: 1, Level: 4}, []byte("x")); err != nil {
			t.Fatal(err)
		}
		k.FlushTrace(h, "", &Properties{})
		if got := len(records(t, sink)) == 1; got != c.admits {
			t.Errorf("Executable %q, filter %q: the event reached the session %v, want %v", c.exe, c.filter, got, c.admits)
		}
		k.Close()
	}
	for _, exe := range []string{`C:\Apps\`, "/opt/", "C:"} {
		if _, err := New(Config{Executable: exe}); !errors.Is(err, winerr.ErrInvalidParameter) {
			t.Errorf("Executable %q: %v, want ERROR_INVALID_PARAMETER", exe, err)
		}
	}
}
