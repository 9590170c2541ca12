package guidtable

import "encoding/binary"

// EVENT_ENABLE_PROPERTY_* values (evntrace.h), passed in EnableProperty.
const (
	PropertySID                     = 0x001 // EVENT_ENABLE_PROPERTY_SID
	PropertyTSID                    = 0x002 // EVENT_ENABLE_PROPERTY_TS_ID
	PropertyStackTrace              = 0x004 // EVENT_ENABLE_PROPERTY_STACK_TRACE
	PropertyPSMKey                  = 0x008 // EVENT_ENABLE_PROPERTY_PSM_KEY
	PropertyIgnoreKeyword0          = 0x010 // EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0
	PropertyProviderGroup           = 0x020 // EVENT_ENABLE_PROPERTY_PROVIDER_GROUP
	PropertyEnableKeyword0          = 0x040 // EVENT_ENABLE_PROPERTY_ENABLE_KEYWORD_0
	PropertyProcessStartKey         = 0x080 // EVENT_ENABLE_PROPERTY_PROCESS_START_KEY
	PropertyEventKey                = 0x100 // EVENT_ENABLE_PROPERTY_EVENT_KEY
	PropertyExcludeInPrivate        = 0x200 // EVENT_ENABLE_PROPERTY_EXCLUDE_INPRIVATE
	PropertyEnableSilos             = 0x400 // EVENT_ENABLE_PROPERTY_ENABLE_SILOS
	PropertySourceContainerTracking = 0x800 // EVENT_ENABLE_PROPERTY_SOURCE_CONTAINER_TRACKING

	// PropertyAll is every defined property bit.
	PropertyAll = 0xFFF
)

// EnableInfoSize is sizeof(TRACE_ENABLE_INFO).
const EnableInfoSize = 0x20

// Slots is the number of TRACE_ENABLE_INFO slots in an ETW_GUID_ENTRY, and so the number of
// sessions that can enable one provider at once.
const Slots = 8

// EnableInfo models TRACE_ENABLE_INFO: what one session asked of a provider (or, for the
// aggregate, what all sessions together ask), with the filters of EnableTraceEx2 that the
// kernel applies to each event (Filter; the aggregate has none). Values are immutable
// once published in an Entry.
type EnableInfo struct {
	IsEnabled       uint32
	Level           uint8 // as requested; 0 means every level
	LoggerID        uint16
	EnableProperty  uint32
	MatchAnyKeyword uint64 // as requested; 0 means every keyword for modern providers
	MatchAllKeyword uint64

	// Target is the session that owns the slot, set by the emulated kernel so the write path
	// reaches it without a logger-table lookup. It is not in the Windows structure; it also
	// does the job of the kernel's rundown protection, since a stale slot names the exact
	// (stopped) session rather than whichever session reused its LoggerID.
	Target any
	// Filter is the enablement's PID, executable-name and event-id filters, nil for none:
	// ETW_FILTER_HEADER in Windows, beside the slot rather than in it.
	Filter *Filter
	// Special is set by the emulated kernel when its write path must look further at this
	// enablement for each event (Filter, or properties that add extended items), so that
	// it tests one field for the others. Not in the Windows structure.
	Special bool

	level uint8  // effective level: Level, or 255 for 0
	any   uint64 // effective any-keywords: MatchAnyKeyword, or all ones for 0
}

// normalize fills the effective level and keywords from the requested ones.
func (e *EnableInfo) normalize() {
	e.level = e.Level
	if e.level == 0 {
		e.level = 255
	}
	e.any = e.MatchAnyKeyword
	if e.any == 0 {
		e.any = ^uint64(0)
	}
}

// Passes reports whether an event of the given level and keyword passes this enablement:
// its level is at most the enabled level (0 enables all), and a keyword-0 event passes
// unless EVENT_ENABLE_PROPERTY_IGNORE_KEYWORD_0 is set, while another keyword must share a
// bit with MatchAnyKeyword and contain all of MatchAllKeyword. e is not nil: a free slot
// has no enablement, and its callers (the write path's route, once per enabled slot)
// look at the slot first. A nil check here would cost every event a compare and take
// route past the compiler's inlining budget (.ci/run checks it inlines).
func (e *EnableInfo) Passes(level uint8, keyword uint64) bool {
	if level > e.level {
		return false
	}
	if keyword == 0 {
		return e.EnableProperty&PropertyIgnoreKeyword0 == 0
	}
	return keyword&e.any != 0 && keyword&e.MatchAllKeyword == e.MatchAllKeyword
}

// EffectiveLevel returns the level the kernel compares against: 255 when 0 was requested.
func (e *EnableInfo) EffectiveLevel() uint8 { return e.level }

// EffectiveAny returns the any-keywords the kernel compares against: all ones when 0 was
// requested.
func (e *EnableInfo) EffectiveAny() uint64 { return e.any }

// Encode writes the 0x20-byte TRACE_ENABLE_INFO into b.
func (e *EnableInfo) Encode(b []byte) {
	_ = b[EnableInfoSize-1]
	le := binary.LittleEndian
	le.PutUint32(b[0x00:], e.IsEnabled)
	b[0x04] = e.Level
	b[0x05] = 0 // Reserved1
	le.PutUint16(b[0x06:], e.LoggerID)
	le.PutUint32(b[0x08:], e.EnableProperty)
	le.PutUint32(b[0x0C:], 0) // Reserved2
	le.PutUint64(b[0x10:], e.MatchAnyKeyword)
	le.PutUint64(b[0x18:], e.MatchAllKeyword)
}

// aggregate computes ProviderEnableInfo over the enabled slots: IsEnabled if any is, the
// highest effective level, the OR of the effective any-keywords and the AND of the
// all-keywords (EnableCallback's documented aggregation).
//
// [UNCERTAIN] How the kernel folds EnableProperty is not public. Here the aggregate has a
// property bit when some session has it, except IGNORE_KEYWORD_0, which the aggregate has
// only when every session has it: keyword-0 events reach the provider while any session
// wants them.
func aggregate(slots []*EnableInfo) *EnableInfo {
	agg := &EnableInfo{}
	ignoreAll := uint32(PropertyIgnoreKeyword0)
	first := true
	for _, s := range slots {
		if s == nil {
			continue
		}
		agg.IsEnabled = 1
		agg.Level = max(agg.Level, s.level)
		agg.MatchAnyKeyword |= s.any
		if first {
			agg.MatchAllKeyword = s.MatchAllKeyword
			first = false
		} else {
			agg.MatchAllKeyword &= s.MatchAllKeyword
		}
		agg.EnableProperty |= s.EnableProperty
		ignoreAll &= s.EnableProperty
	}
	agg.EnableProperty = agg.EnableProperty&^PropertyIgnoreKeyword0 | ignoreAll
	agg.normalize()
	return agg
}

// Combined is what the enable callbacks of a registration in a provider group carry: the
// aggregate, by the rules of one entry's, over the enabled slots of its own GUID entry
// and of its group's entry, that is over every session that enables the provider either
// way. EventEnabled passes an event that either entry passes, and a provider that keeps
// the level and keywords of its last callback (TraceLogging's, go-winio's) must not drop
// an event a session of the other entry asked for. Nil entries are left out.
// [UNCERTAIN] Windows' notification for a grouped registration is not public; this is
// the aggregate the EnableCallback documentation describes, over all of the provider's
// sessions.
func Combined(own, group *Entry) *EnableInfo {
	var slots [2 * Slots]*EnableInfo
	n := 0
	for _, e := range [2]*Entry{own, group} {
		if e == nil {
			continue
		}
		for i := range e.slots {
			slots[n] = e.slots[i].Load()
			n++
		}
	}
	return aggregate(slots[:n])
}
