package consumer

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/etwemu/etwemu/etw"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/winerr"
)

// Provider is a provider to enable on a session, as golang-etw describes one.
type Provider struct {
	GUID            guid.GUID
	Name            string
	EnableLevel     uint8
	MatchAnyKeyword uint64
	MatchAllKeyword uint64
	// Filter, if not empty, keeps only events with these ids. golang-etw passes it to
	// the kernel as an event-id filter; the emulator applies it in the consumer, as the
	// session's providers stand when each buffer is read, and counts the others in
	// Consumer.Filtered.
	Filter []uint16
	// EnableProperties are the EVENT_ENABLE_PROPERTY_* bits the session enables the
	// provider with (ENABLE_TRACE_PARAMETERS.EnableProperty, tekert's field): SID, TS_ID,
	// STACK_TRACE, PROCESS_START_KEY and EVENT_KEY add an extended item to each event,
	// read with EventRecord's Ext methods.
	EnableProperties uint32
	// Filters are passed to EnableTraceEx2, which applies them to each event before the
	// session gets it (tekert's field): NewEventIDFilter, NewPIDFilter,
	// NewExecutableNameFilter. Where tekert's skips a filter it cannot build (no id, more
	// than 64 ids, no PID or more than 8), EnableProvider returns the kernel's
	// ERROR_INVALID_PARAMETER.
	Filters []ProviderFilter
}

// The EVENT_ENABLE_PROPERTY_* values (evntrace.h), under the names golang-etw (tekert's)
// gives them, for Provider.EnableProperties.
const (
	EVENT_ENABLE_PROPERTY_SID                       = guidtable.PropertySID
	EVENT_ENABLE_PROPERTY_TS_ID                     = guidtable.PropertyTSID
	EVENT_ENABLE_PROPERTY_STACK_TRACE               = guidtable.PropertyStackTrace
	EVENT_ENABLE_PROPERTY_PSM_KEY                   = guidtable.PropertyPSMKey
	EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0          = guidtable.PropertyIgnoreKeyword0
	EVENT_ENABLE_PROPERTY_PROVIDER_GROUP            = guidtable.PropertyProviderGroup
	EVENT_ENABLE_PROPERTY_ENABLE_KEYWORD_0          = guidtable.PropertyEnableKeyword0
	EVENT_ENABLE_PROPERTY_PROCESS_START_KEY         = guidtable.PropertyProcessStartKey
	EVENT_ENABLE_PROPERTY_EVENT_KEY                 = guidtable.PropertyEventKey
	EVENT_ENABLE_PROPERTY_EXCLUDE_INPRIVATE         = guidtable.PropertyExcludeInPrivate
	EVENT_ENABLE_PROPERTY_ENABLE_SILOS              = guidtable.PropertyEnableSilos
	EVENT_ENABLE_PROPERTY_SOURCE_CONTAINER_TRACKING = guidtable.PropertySourceContainerTracking
)

// ParseProvider reads golang-etw's provider syntax, Name[:Level[:EventIDs[:MatchAny[:MatchAll]]]]:
// Name is a provider name (its GUID derived as TraceLogging and EventSource do) or a
// GUID; Level defaults to 0xFF; EventIDs are comma-separated; numbers may be decimal or
// 0x-hexadecimal. Errors are ERROR_INVALID_PARAMETER, naming the part at fault.
func ParseProvider(s string) (Provider, error) {
	parts := strings.Split(s, ":")
	if len(parts) > 5 || parts[0] == "" {
		return Provider{}, winerr.New(winerr.ErrInvalidParameter, "consumer: provider %q: want Name[:Level[:EventIDs[:MatchAny[:MatchAll]]]]", s)
	}
	if strings.IndexByte(parts[0], 0) >= 0 {
		// A provider name ends at its first NUL, in TraceLogging's metadata as in C.
		return Provider{}, winerr.New(winerr.ErrInvalidParameter, "consumer: provider %q: the name holds a NUL", s)
	}
	p := Provider{Name: parts[0], EnableLevel: 0xFF}
	if g, err := guid.Parse(strings.Trim(parts[0], "{}")); err == nil {
		p.GUID = g
	} else if strings.HasPrefix(parts[0], "{") {
		return Provider{}, winerr.New(winerr.ErrInvalidParameter, "consumer: provider %q: %s is braced as a GUID but is not one (%v)", s, parts[0], err)
	} else {
		p.GUID = guid.FromName(parts[0])
	}
	num := func(i int, bits int) (uint64, error) {
		v, err := strconv.ParseUint(parts[i], 0, bits)
		if err != nil {
			return 0, fmt.Errorf("%w: consumer: provider %q: part %d %q: %w", winerr.ErrInvalidParameter, s, i+1, parts[i], err)
		}
		return v, nil
	}
	if len(parts) > 1 && parts[1] != "" {
		v, err := num(1, 8)
		if err != nil {
			return Provider{}, err
		}
		p.EnableLevel = uint8(v)
	}
	if len(parts) > 2 && parts[2] != "" {
		for _, id := range strings.Split(parts[2], ",") {
			v, err := strconv.ParseUint(strings.TrimSpace(id), 0, 16)
			if err != nil {
				return Provider{}, fmt.Errorf("%w: consumer: provider %q: event id %q: %w", winerr.ErrInvalidParameter, s, id, err)
			}
			p.Filter = append(p.Filter, uint16(v))
		}
	}
	if len(parts) > 3 && parts[3] != "" {
		v, err := num(3, 64)
		if err != nil {
			return Provider{}, err
		}
		p.MatchAnyKeyword = v
	}
	if len(parts) > 4 && parts[4] != "" {
		v, err := num(4, 64)
		if err != nil {
			return Provider{}, err
		}
		p.MatchAllKeyword = v
	}
	return p, nil
}

// MustParseProvider is ParseProvider that panics on a malformed string, for literals.
func MustParseProvider(s string) Provider {
	p, err := ParseProvider(s)
	if err != nil {
		panic(err)
	}
	return p
}

// IsKnownProvider reports whether p, a provider name or GUID as ParseProvider reads it,
// names a provider registered in the process's default kernel (etw.Kernel), as
// golang-etw's does for the providers Windows knows. The emulator knows only the
// providers registered in it: a Windows provider such as Microsoft-Windows-Kernel-File is
// known once the program registers a provider of that name.
func IsKnownProvider(p string) bool {
	prov, err := ParseProvider(p)
	if err != nil {
		return false
	}
	k, err := etw.Kernel()
	if err != nil {
		return false
	}
	e, ok := k.LookupGuidEntry(prov.GUID, false)
	return ok && e.Registrations() > 0
}

// MustParseGUIDFromString parses a GUID, with or without braces, and panics on a
// malformed one: 0xrawsec's name (tekert's is MustParseGUID). It returns a *guid.GUID,
// the type Provider.GUID has here.
func MustParseGUIDFromString(s string) *guid.GUID {
	g := guid.MustParse(s)
	return &g
}

// MustParseGUID is tekert's name for MustParseGUIDFromString.
func MustParseGUID(s string) *guid.GUID { return MustParseGUIDFromString(s) }
