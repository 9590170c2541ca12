package consumer

import (
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/guidtable"
)

// ProviderFilter is one of the filters a Provider's Filters pass to EnableTraceEx2
// (tekert's interface): EventIDFilter, PIDFilter or ExecutableNameFilter. The kernel
// applies them to each event before the session gets it.
type ProviderFilter interface {
	descriptor() emu.FilterDescriptor
}

// EventIDFilter keeps (FilterIn) or drops the events of its ids:
// EVENT_FILTER_TYPE_EVENT_ID, at most 64 ids (tekert's type).
type EventIDFilter struct {
	IDs      []uint16
	FilterIn bool
}

// NewEventIDFilter returns a filter that keeps (filterIn) or drops the events of ids.
func NewEventIDFilter(filterIn bool, ids ...uint16) *EventIDFilter {
	return &EventIDFilter{IDs: ids, FilterIn: filterIn}
}

func (f *EventIDFilter) descriptor() emu.FilterDescriptor {
	if f == nil { // no ids: the kernel refuses it
		return guidtable.EventIDFilter(false)
	}
	return guidtable.EventIDFilter(f.FilterIn, f.IDs...)
}

// PIDFilter keeps the events of the processes PIDs only: EVENT_FILTER_TYPE_PID, at most
// 8 (tekert's type).
type PIDFilter struct {
	PIDs []uint32
}

// NewPIDFilter returns a filter that keeps the events of the processes pids.
func NewPIDFilter(pids ...uint32) *PIDFilter { return &PIDFilter{PIDs: pids} }

func (f *PIDFilter) descriptor() emu.FilterDescriptor {
	if f == nil { // no process: the kernel refuses it
		return guidtable.PIDFilter()
	}
	return guidtable.PIDFilter(f.PIDs...)
}

// ExecutableNameFilter keeps the events of processes running one of Names (file names
// such as "svchost.exe", compared without regard to case): EVENT_FILTER_TYPE_EXECUTABLE_NAME
// (tekert's type). The emulated process runs the program's own executable.
type ExecutableNameFilter struct {
	Names []string
}

// NewExecutableNameFilter returns a filter that keeps the events of processes running
// one of names.
func NewExecutableNameFilter(names ...string) *ExecutableNameFilter {
	return &ExecutableNameFilter{Names: names}
}

func (f *ExecutableNameFilter) descriptor() emu.FilterDescriptor {
	if f == nil { // no name: the kernel refuses it
		return guidtable.ExecutableNameFilter()
	}
	return guidtable.ExecutableNameFilter(f.Names...)
}
