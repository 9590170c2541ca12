package guidtable

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf16"
)

// EVENT_FILTER_TYPE_* values (evntprov.h) the emulator applies.
const (
	FilterTypePID            = 0x80000004 // EVENT_FILTER_TYPE_PID: ULONG process ids
	FilterTypeExecutableName = 0x80000008 // EVENT_FILTER_TYPE_EXECUTABLE_NAME: ';'-separated UTF-16 names
	FilterTypeEventID        = 0x80000200 // EVENT_FILTER_TYPE_EVENT_ID: EVENT_FILTER_EVENT_ID
)

// Limits of EnableTraceEx2's filters (evntprov.h).
const (
	MaxFilters        = 13 // MAX_EVENT_FILTERS_COUNT in the current SDK (8 in older headers)
	MaxFilterPIDs     = 8  // MAX_EVENT_FILTER_PID_COUNT
	MaxFilterEventIDs = 64 // MAX_EVENT_FILTER_EVENT_ID_COUNT
	// MaxFilterDataSize bounds an EXECUTABLE_NAME filter's data (MAX_EVENT_FILTER_DATA_SIZE).
	// [UNCERTAIN] The EVENT_FILTER_DESCRIPTOR documentation caps "many" types' data at
	// it without listing them; the emulator applies it to executable names, which have no
	// other bound.
	MaxFilterDataSize = 1024
)

// FilterDescriptor is EVENT_FILTER_DESCRIPTOR: a filter's type and its data (Ptr and Size).
type FilterDescriptor struct {
	Type uint32
	Data []byte
}

// Filter models the filters of one enablement that decide, event by event, whether the
// session gets it (the PID, EXECUTABLE_NAME and EVENT_ID filters of ETW_FILTER_HEADER);
// it leaves out the payload, event-name, stack-walk, package and container filters,
// which ParseFilters refuses. Immutable once made.
//
// [emulator choice] Windows applies the PID and executable-name filters as scope
// filters, when it enables the provider in each process, so that a process outside them
// is never enabled. The emulator runs one process and applies them as each event is
// written: the same events reach the session, but EventEnabled in a process outside
// them still answers for the session. A session that enables a provider both directly
// and through its provider group gets an event that either enablement passes, filters
// included, as for level and keywords.
// [UNCERTAIN] Windows' rule for that case is not documented.
type Filter struct {
	PIDs        []uint32 // nil: any process
	Executables []string // lower-cased file names; nil: any executable
	EventIDs    []uint16 // sorted; with eventIDs false, any id
	EventIDsIn  bool     // FilterIn: EventIDs are the ids kept, not the ids dropped
	eventIDs    bool     // an EVENT_ID filter is set
}

// Admits reports whether an event of id written by process pid, running the executable
// exe (a file name), passes the filter. A nil filter admits every event.
func (f *Filter) Admits(pid uint32, exe string, id uint16) bool {
	if f == nil {
		return true
	}
	if f.PIDs != nil && !slices.Contains(f.PIDs, pid) {
		return false
	}
	if f.Executables != nil && !slices.ContainsFunc(f.Executables, func(n string) bool { return strings.EqualFold(n, exe) }) {
		return false
	}
	if f.eventIDs {
		_, found := slices.BinarySearch(f.EventIDs, id)
		return found == f.EventIDsIn
	}
	return true
}

// Clone returns a copy of f that shares no memory with it (nil for nil).
func (f *Filter) Clone() *Filter {
	if f == nil {
		return nil
	}
	c := *f
	c.PIDs, c.Executables, c.EventIDs = slices.Clone(f.PIDs), slices.Clone(f.Executables), slices.Clone(f.EventIDs)
	return &c
}

// ParseFilters reads EnableTraceEx2's filter descriptors into a Filter (nil for none).
// Errors, as the reason for ERROR_INVALID_PARAMETER: more than MaxFilters descriptors, a
// type given twice, or data that does not fit its type (no PID, or more than
// MaxFilterPIDs; an EVENT_FILTER_EVENT_ID whose Count is 0, over MaxFilterEventIDs or
// not its size; an executable name list that is empty or not UTF-16). A type the
// emulator does not apply is returned as unsupported, for ERROR_NOT_SUPPORTED.
func ParseFilters(descs []FilterDescriptor) (f *Filter, unsupported bool, err error) {
	if len(descs) == 0 {
		return nil, false, nil
	}
	if len(descs) > MaxFilters {
		return nil, false, fmt.Errorf("%d filters, more than MAX_EVENT_FILTERS_COUNT (%d)", len(descs), MaxFilters)
	}
	f = &Filter{}
	seen := map[uint32]bool{}
	for _, d := range descs {
		if seen[d.Type] {
			return nil, false, fmt.Errorf("filter type %#08x given twice", d.Type)
		}
		seen[d.Type] = true
		switch d.Type {
		case FilterTypePID:
			n := len(d.Data) / 4
			if len(d.Data)%4 != 0 || n == 0 || n > MaxFilterPIDs {
				return nil, false, fmt.Errorf("EVENT_FILTER_TYPE_PID of %d bytes: want 1 to %d ULONG process ids", len(d.Data), MaxFilterPIDs)
			}
			for i := range n {
				f.PIDs = append(f.PIDs, binary.LittleEndian.Uint32(d.Data[4*i:]))
			}
		case FilterTypeEventID:
			// EVENT_FILTER_EVENT_ID: BOOLEAN FilterIn; UCHAR Reserved; USHORT Count; USHORT Events[Count].
			if len(d.Data) < 4 {
				return nil, false, fmt.Errorf("EVENT_FILTER_TYPE_EVENT_ID of %d bytes, shorter than EVENT_FILTER_EVENT_ID's head", len(d.Data))
			}
			n := int(binary.LittleEndian.Uint16(d.Data[2:]))
			if n == 0 || n > MaxFilterEventIDs || len(d.Data) != 4+2*n {
				return nil, false, fmt.Errorf("EVENT_FILTER_TYPE_EVENT_ID with Count %d in %d bytes: want 1 to %d ids, 4 + 2 × Count bytes", n, len(d.Data), MaxFilterEventIDs)
			}
			f.eventIDs, f.EventIDsIn = true, d.Data[0] != 0
			for i := range n {
				f.EventIDs = append(f.EventIDs, binary.LittleEndian.Uint16(d.Data[4+2*i:]))
			}
			slices.Sort(f.EventIDs)
		case FilterTypeExecutableName:
			names, err := executableNames(d.Data)
			if err != nil {
				return nil, false, err
			}
			f.Executables = names
		default:
			return nil, true, fmt.Errorf("filter type %#08x is not emulated (only PID, EXECUTABLE_NAME and EVENT_ID are)", d.Type)
		}
	}
	return f, false, nil
}

// executableNames reads EVENT_FILTER_TYPE_EXECUTABLE_NAME's data: UTF-16LE file names
// separated by ';', ending at the first NUL, at most MaxFilterDataSize bytes; compared
// without regard to case.
func executableNames(b []byte) ([]string, error) {
	if len(b) == 0 || len(b)%2 != 0 || len(b) > MaxFilterDataSize {
		return nil, fmt.Errorf("EVENT_FILTER_TYPE_EXECUTABLE_NAME of %d bytes: want UTF-16 names in at most %d bytes", len(b), MaxFilterDataSize)
	}
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i < len(b); i += 2 {
		c := binary.LittleEndian.Uint16(b[i:])
		if c == 0 {
			break
		}
		u = append(u, c)
	}
	for i := 0; i < len(u); i++ { // every surrogate in a pair
		if !utf16.IsSurrogate(rune(u[i])) {
			continue
		}
		if i+1 == len(u) || utf16.DecodeRune(rune(u[i]), rune(u[i+1])) == unicode.ReplacementChar {
			return nil, fmt.Errorf("EVENT_FILTER_TYPE_EXECUTABLE_NAME: an unpaired UTF-16 surrogate at character %d", i)
		}
		i++
	}
	var names []string
	for _, n := range strings.Split(string(utf16.Decode(u)), ";") {
		if n = strings.TrimSpace(n); n != "" {
			names = append(names, strings.ToLower(n))
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("EVENT_FILTER_TYPE_EXECUTABLE_NAME names no executable")
	}
	return names, nil
}

// EventIDFilter returns the EVENT_FILTER_TYPE_EVENT_ID descriptor that keeps (in) or
// drops the events of ids: EVENT_FILTER_EVENT_ID, {BOOLEAN FilterIn; UCHAR Reserved;
// USHORT Count; USHORT Events[Count]}.
func EventIDFilter(in bool, ids ...uint16) FilterDescriptor {
	b := make([]byte, 4+2*len(ids))
	if in {
		b[0] = 1
	}
	binary.LittleEndian.PutUint16(b[2:], uint16(len(ids)))
	for i, id := range ids {
		binary.LittleEndian.PutUint16(b[4+2*i:], id)
	}
	return FilterDescriptor{Type: FilterTypeEventID, Data: b}
}

// PIDFilter returns the EVENT_FILTER_TYPE_PID descriptor that keeps the events of the
// processes pids: their ULONGs.
func PIDFilter(pids ...uint32) FilterDescriptor {
	b := make([]byte, 4*len(pids))
	for i, p := range pids {
		binary.LittleEndian.PutUint32(b[4*i:], p)
	}
	return FilterDescriptor{Type: FilterTypePID, Data: b}
}

// ExecutableNameFilter returns the EVENT_FILTER_TYPE_EXECUTABLE_NAME descriptor that
// keeps the events of processes running one of names: the names joined by ';', in
// UTF-16LE, with a terminating NUL.
func ExecutableNameFilter(names ...string) FilterDescriptor {
	u := append(utf16.Encode([]rune(strings.Join(names, ";"))), 0)
	b := make([]byte, 2*len(u))
	for i, c := range u {
		binary.LittleEndian.PutUint16(b[2*i:], c)
	}
	return FilterDescriptor{Type: FilterTypeExecutableName, Data: b}
}
