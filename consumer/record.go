package consumer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/decode"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
)

// EventRecord is EVENT_RECORD as golang-etw's EventRecordCallback receives it, with Go
// names: the header (EventHeader), the buffer context, and the extended items and user
// data as slices in memory of the record's own (EVENT_RECORD's counts and pointers).
// Leaves out UserContext.
type EventRecord struct {
	EventHeader   abi.EventHeader
	BufferContext BufferContext
	ExtendedData  []etl.ExtItem
	UserData      []byte

	ev decode.Event // the record as decoded (its processor, time and provider name), in memory of its own
}

// BufferContext is ETW_BUFFER_CONTEXT: the processor index (ProcessorNumber and
// Alignment read as one USHORT where ETW_BUFFER_FLAG_PROC_INDEX says so) and the
// LoggerId of the buffer the event came in.
type BufferContext struct {
	ProcessorIndex uint16
	LoggerID       uint16
}

// RelatedActivityID returns the event's related activity id as {XXXXXXXX-...}, or
// GUID_NULL's text when it has none (golang-etw's RelatedActivityID).
func (r *EventRecord) RelatedActivityID() string {
	for _, x := range r.ExtendedData {
		if x.Type == abi.ExtTypeRelatedActivityID && len(x.Data) == 16 {
			return bracedGUID(guid.FromBytes(x.Data))
		}
	}
	return nullGUID
}

// ext returns the data of the event's first extended item of type typ, if it has one.
func (r *EventRecord) ext(typ uint16) ([]byte, bool) {
	for _, x := range r.ExtendedData {
		if x.Type == typ {
			return x.Data, true
		}
	}
	return nil, false
}

// SID is a security identifier as an event's EVENT_HEADER_EXT_TYPE_SID item carries it:
// the binary SID.
type SID struct{ b []byte }

// String formats the SID as S-1-5-18 (ConvertSidToStringSid), or "" when malformed.
func (s *SID) String() string {
	b := s.b
	if len(b) < 8 || len(b) != 8+4*int(b[1]) {
		return ""
	}
	var auth uint64
	for _, c := range b[2:8] {
		auth = auth<<8 | uint64(c)
	}
	out := "S-" + strconv.Itoa(int(b[0])) + "-" + strconv.FormatUint(auth, 10)
	for i := 8; i < len(b); i += 4 {
		out += "-" + strconv.FormatUint(uint64(binary.LittleEndian.Uint32(b[i:])), 10)
	}
	return out
}

// ExtSid returns the SID of the user that wrote the event, from its SID item
// (EVENT_ENABLE_PROPERTY_SID), or nil without one (tekert's ExtSid).
func (r *EventRecord) ExtSid() *SID {
	if d, ok := r.ext(abi.ExtTypeSID); ok {
		return &SID{d}
	}
	return nil
}

// ExtTerminalSessionID returns the writer's terminal session, from its TS_ID item
// (EVENT_ENABLE_PROPERTY_TS_ID), and whether the event has one (tekert's name).
func (r *EventRecord) ExtTerminalSessionID() (uint32, bool) {
	if d, ok := r.ext(abi.ExtTypeTSID); ok && len(d) >= 4 {
		return binary.LittleEndian.Uint32(d), true
	}
	return 0, false
}

// ExtProcessStartKey returns the writing process's start key, from its
// PROCESS_START_KEY item (EVENT_ENABLE_PROPERTY_PROCESS_START_KEY), and whether the
// event has one (tekert's name).
func (r *EventRecord) ExtProcessStartKey() (uint64, bool) { return r.ext64(abi.ExtTypeProcessStartKey) }

// ExtEventKey returns the event's key, the same in every session that asked for it, from
// its EVENT_KEY item (EVENT_ENABLE_PROPERTY_EVENT_KEY), and whether the event has one
// (tekert's name).
func (r *EventRecord) ExtEventKey() (uint64, bool) { return r.ext64(abi.ExtTypeEventKey) }

// ext64 reads an item of type typ whose data is one ULONG64.
func (r *EventRecord) ext64(typ uint16) (uint64, bool) {
	if d, ok := r.ext(typ); ok && len(d) >= 8 {
		return binary.LittleEndian.Uint64(d), true
	}
	return 0, false
}

// EventStackTrace is EVENT_EXTENDED_ITEM_STACK_TRACE64 (or _STACK_TRACE32, its
// addresses widened): the MatchId and the return addresses, innermost first (tekert's
// type).
type EventStackTrace struct {
	MatchID   uint64
	Addresses []uint64
}

// ExtStackTrace returns the stack the event was written from, from its STACK_TRACE64 or
// STACK_TRACE32 item (EVENT_ENABLE_PROPERTY_STACK_TRACE), and whether the event has one
// (tekert's name). In the emulator the addresses are the writing goroutine's.
func (r *EventRecord) ExtStackTrace() (EventStackTrace, bool) {
	for _, x := range r.ExtendedData {
		width := 0
		switch x.Type {
		case abi.ExtTypeStackTrace64:
			width = 8
		case abi.ExtTypeStackTrace32:
			width = 4
		default:
			continue
		}
		if len(x.Data) < 8 {
			continue
		}
		st := EventStackTrace{MatchID: binary.LittleEndian.Uint64(x.Data)}
		for i := 8; i+width <= len(x.Data); i += width {
			if width == 8 {
				st.Addresses = append(st.Addresses, binary.LittleEndian.Uint64(x.Data[i:]))
			} else {
				st.Addresses = append(st.Addresses, uint64(binary.LittleEndian.Uint32(x.Data[i:])))
			}
		}
		return st, true
	}
	return EventStackTrace{}, false
}

// The errors of EventRecordHelper's property calls, golang-etw's names.
var (
	ErrPropertyParsing = errors.New("consumer: error parsing property")
	ErrUnknownProperty = errors.New("consumer: unknown property")
)

// EventRecordHelper is the event between its record and its delivery, as golang-etw's
// EventRecordHelperCallback and PreparedCallback see it: they may skip it (Skip), let the
// Events channel drop it when full (Skippable), keep only some properties (SelectFields)
// or read and change properties. Here the event is decoded before the first helper
// callback (TraceLogging decoding is cheap), so every property is at hand in both; it
// leaves out golang-etw's TraceInfo (TRACE_EVENT_INFO) and its raw property list.
type EventRecordHelper struct {
	EventRec *EventRecord
	Flags    struct {
		Skip      bool
		Skippable bool
	}

	event    *Event
	selected map[string]bool // SelectFields' names; nil: all
}

// Skip drops the event: it is counted in Consumer.Filtered and not delivered.
func (h *EventRecordHelper) Skip() { h.Flags.Skip = true }

// Skippable lets the Events channel drop the event, counted in Consumer.Skipped, rather
// than wait when the channel is full.
func (h *EventRecordHelper) Skippable() { h.Flags.Skippable = true }

// SelectFields keeps only the named properties in the event's EventData (and
// "Structures" only when named); without a call every property is kept.
func (h *EventRecordHelper) SelectFields(names ...string) {
	if h.selected == nil {
		h.selected = map[string]bool{}
	}
	for _, n := range names {
		h.selected[n] = true
	}
}

// ProviderGUID returns the provider's GUID, of Provider.GUID's type, so that
// h.ProviderGUID() == p.GUID compares them as in both forks (tekert's returns its GUID
// type, as here; 0xrawsec's a string, as its Provider.GUID is); the event's
// System.Provider.Guid has the {XXXXXXXX-...} text.
func (h *EventRecordHelper) ProviderGUID() guid.GUID { return h.event.Header.ProviderID }

// Provider returns the provider's name (from its traits), "" when unknown.
func (h *EventRecordHelper) Provider() string { return h.event.System.Provider.Name }

// Channel returns the channel's name, as Event.System.Channel.
func (h *EventRecordHelper) Channel() string { return h.event.System.Channel }

// EventID returns the event descriptor's id.
func (h *EventRecordHelper) EventID() uint16 { return h.event.System.EventID }

// GetPropertyString returns a property as its string, ErrUnknownProperty when the event
// has no such scalar property.
func (h *EventRecordHelper) GetPropertyString(name string) (string, error) {
	if s, ok := h.event.EventData[name].(string); ok {
		return s, nil
	}
	return "", fmt.Errorf("%w %s", ErrUnknownProperty, name)
}

// GetPropertyInt returns a property parsed as a signed integer (decimal or 0x hex).
func (h *EventRecordHelper) GetPropertyInt(name string) (int64, error) {
	s, err := h.GetPropertyString(name)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("%w %s: %v", ErrPropertyParsing, name, err)
	}
	return v, nil
}

// GetPropertyUint returns a property parsed as an unsigned integer (decimal or 0x hex).
func (h *EventRecordHelper) GetPropertyUint(name string) (uint64, error) {
	s, err := h.GetPropertyString(name)
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		return 0, fmt.Errorf("%w %s: %v", ErrPropertyParsing, name, err)
	}
	return v, nil
}

// SetProperty sets a property of the event to be delivered, adding it if new.
func (h *EventRecordHelper) SetProperty(name, value string) { h.event.EventData[name] = value }

// ParseProperties parses the named properties (golang-etw's; the emulator decoded every
// property already, so there is nothing left to fail). A name the event does not have is
// no error, as in both forks, which report only a property that fails to parse:
// callbacks ask for the properties of several kinds of event at once. GetPropertyString
// and the other getters report ErrUnknownProperty for a missing one.
func (h *EventRecordHelper) ParseProperties(names ...string) error { return nil }

// ParseProperty is ParseProperties for one name.
func (h *EventRecordHelper) ParseProperty(name string) error { return nil }

// applySelection drops the properties SelectFields did not name.
func (h *EventRecordHelper) applySelection() {
	if h.selected == nil {
		return
	}
	for k := range h.event.EventData {
		if !h.selected[k] {
			delete(h.event.EventData, k)
		}
	}
}
