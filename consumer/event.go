package consumer

import (
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/decode"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/tracelogging"
)

// Event is one decoded event in golang-etw's shape (0xrawsec's Event, which mirrors the
// System block of the Windows event XML), with etwemu's additions kept out of its JSON:
// the raw header, the extended items, the ordered typed fields, where it came from.
// json.Marshal(e) prints golang-etw's field names and nothing else. Left out:
// tekert's pool (Release only clears the event) and its Keywords.Mask form.
type Event struct {
	// Flags.Skippable, set by an EventRecordHelper's Skippable, lets the Events channel
	// drop the event (counted in Consumer.Skipped) rather than wait when the channel is
	// full, as golang-etw's DefaultEventCallback does.
	Flags struct {
		Skippable bool
	} `json:"-"`
	// notice: an RT_LostEvent notice the consumer made, which no provider wrote, so no
	// counter counts it when it is not delivered. Set by lostEvent, then read only.
	notice bool
	// EventData holds the event's properties by name, each formatted as a string the way
	// TDH (TdhFormatProperty) formats it and golang-etw passes it on: integers in decimal,
	// hexadecimal types as 0x..., GUIDs in braces, times in RFC 3339, binary as 0x... hex;
	// an array is a []string. Structs have no key of their own: as in golang-etw, each
	// top-level struct (and each element of an array of structs) is a map[string]string of
	// its members, appended in order to the []map[string]string under "Structures"
	// (StructurePropertyName); a member that is itself a struct or an array is in
	// tracelogging's text form, such as {x=-1} or [1 2]. The typed
	// values are in Fields. For an event without a schema, "Payload" is its user data as
	// binary; a lost-events notification holds "EventsLost" or "BuffersLost".
	EventData map[string]any `json:",omitempty"`
	// UserData is golang-etw's map for events whose template is user data (TDH's
	// TEMPLATE_USER_DATA); TraceLogging events have none, so it stays empty.
	UserData map[string]any `json:",omitempty"`
	System   System
	// ExtendedData names the event's extended items (EVENT_HEADER_EXT_TYPE_*).
	ExtendedData []string `json:",omitempty"`

	// Name is a TraceLogging event's name ("" otherwise); TDH shows it as the task name.
	Name string `json:"-"`
	// Fields are a TraceLogging event's fields in order, with typed values.
	Fields []tracelogging.Field `json:"-"`
	// DecodeError says why a TraceLogging event's fields could not be decoded ("" if
	// they were, or the event has no schema).
	DecodeError string          `json:"-"`
	Header      abi.EventHeader `json:"-"`
	// Ext and Payload are the event's extended items and user data, in memory of the
	// event's own (one allocation of their size, copied out of the buffer): the event
	// pins no buffer, and neither another consumer nor another event sees a change
	// made to them.
	Ext       []etl.ExtItem `json:"-"`
	Payload   []byte        `json:"-"`
	Processor int           `json:"-"` // the processor index of the buffer it came in
	Source    string        `json:"-"` // the session name or file path it came from
}

// System is the event's header in golang-etw's shape: names as TDH gives them, GUIDs as
// {XXXXXXXX-...} in upper case, GUID_NULL for no activity id. Task.Value is 16 bits, as
// in EVENT_DESCRIPTOR (golang-etw keeps 8).
type System struct {
	// Channel is the channel's name (winmeta.xml's: "TraceLogging" for 11, "System",
	// "Application", "Security", "ProviderMetadata", "TraceClassic" for 0), or its number
	// in decimal when it has none; the number is Header.Descriptor.Channel.
	Channel string
	// Computer is the name of the machine the consumer runs on (os.Hostname), as
	// golang-etw reports it.
	Computer string
	EventID  uint16
	Version  uint8 `json:",omitempty"` // tekert's; EVENT_DESCRIPTOR.Version
	// EventType and EventGuid are set for MOF-class events only, as golang-etw sets them:
	// here the RT_LostEvent notifications ("RT_LostEvent/RTLostEvent").
	EventType   string `json:",omitempty"`
	EventGuid   string `json:",omitempty"` //nolint:revive // golang-etw's name
	Correlation struct {
		ActivityID        string
		RelatedActivityID string
	}
	Execution struct {
		ProcessID uint32
		ThreadID  uint32 // EVENT_HEADER.ThreadId: what the writer gave (emu.WriteOptions.ThreadID), else 0
	}
	Keywords struct {
		Value uint64
		Name  string // the well-known keyword bits' names (winmeta.xml), comma-separated
	}
	Level struct {
		Value uint8
		Name  string
	}
	Opcode struct {
		Value uint8
		Name  string // winmeta.xml's opcode names (Info, Start, Stop, ...)
	}
	Task struct {
		Value uint16
		Name  string // a TraceLogging event's name
	}
	Provider struct {
		Guid string //nolint:revive // golang-etw's name
		Name string
	}
	TimeCreated struct {
		SystemTime time.Time
	}
	// TimeStamp is EVENT_HEADER.TimeStamp as written, on the session clock.
	TimeStamp int64 `json:"-"`
}

// NewEvent returns an empty event with its maps made, as golang-etw's NewEvent does.
func NewEvent() *Event {
	return &Event{EventData: map[string]any{}, UserData: map[string]any{}}
}

// GetProperty returns the property name from EventData, else from UserData
// (golang-etw's GetProperty).
func (e *Event) GetProperty(name string) (any, bool) {
	if v, ok := e.EventData[name]; ok {
		return v, true
	}
	v, ok := e.UserData[name]
	return v, ok
}

// GetPropertyString returns the property name when it is a string (golang-etw's
// GetPropertyString): every scalar property is one.
func (e *Event) GetPropertyString(name string) (string, bool) {
	v, ok := e.GetProperty(name)
	if !ok {
		return "", false
	}
	s, ok := v.(string)
	return s, ok
}

// Release clears the event (tekert's Release, which returns it to a pool): it must not
// be used afterwards. The emulator pools no events, so calling it is optional.
func (e *Event) Release() {
	clear(e.EventData)
	clear(e.UserData)
	*e = Event{EventData: e.EventData, UserData: e.UserData}
}

// RTLostEventGUID is the RT_LostEvent class real-time consumers receive loss
// notifications from; opcodes RTLostEvent and RTLostBuffer (the MOF class RT_LostEvent
// in Microsoft's ETW documentation; tekert/golang-etw checks the same GUID).
var RTLostEventGUID = guid.MustParse("6a399ae0-4bc6-4de9-870b-3657f8947e7e")

// Opcodes of RTLostEventGUID.
const (
	OpcodeRTLostEvent  = 32 // events were lost: EventData["EventsLost"] since the last notice
	OpcodeRTLostBuffer = 33 // buffers were lost: EventData["BuffersLost"] since the last notice
)

// The names TDH gives the well-known values, from winmeta.xml.
var (
	levelNames   = [...]string{"Log Always", "Critical", "Error", "Warning", "Information", "Verbose"}
	channelNames = map[uint8]string{0: "TraceClassic", 8: "System", 9: "Application", 10: "Security", 11: "TraceLogging", 12: "ProviderMetadata"}
	opcodeNames  = map[uint8]string{0: "Info", 1: "Start", 2: "Stop", 3: "DCStart", 4: "DCStop", 5: "Extension", 6: "Reply",
		7: "Resume", 8: "Suspend", 9: "Send", 240: "Receive"}
	keywordNames = []struct {
		bit  uint64
		name string
	}{
		{0x1000000000000, "Response Time"}, {0x4000000000000, "WDI Diag"}, {0x8000000000000, "SQM"},
		{0x10000000000000, "Audit Failure"}, {0x20000000000000, "Audit Success"},
		{0x40000000000000, "Correlation Hint"}, {0x80000000000000, "Classic"},
	}
)

// keywordName names the well-known bits of keywords, comma-separated.
func keywordName(keywords uint64) string {
	var names []string
	for _, k := range keywordNames {
		if keywords&k.bit != 0 {
			names = append(names, k.name)
		}
	}
	return strings.Join(names, ",")
}

// hostname is the machine's name, read once.
var hostname, _ = os.Hostname()

// bracedGUID formats g as TDH does: {XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX}.
func bracedGUID(g guid.GUID) string {
	return tracelogging.FormatValue(tracelogging.InGUID, tracelogging.OutDefault, g)
}

var nullGUID = bracedGUID(guid.Null)

// decoder decodes the events of one source with the decode package, which works out each
// record's processor, time, provider name and TraceLogging fields, and caches the GUIDs'
// text in TDH's form. A decoder belongs to one goroutine.
type decoder struct {
	source string
	dec    *decode.Decoder
	guids  map[guid.GUID]string // "{...}" by GUID
}

// maxCached bounds the GUID cache; a full cache starts again empty.
const maxCached = 4096

func newDecoder(source string) *decoder {
	d := &decoder{source: source, dec: decode.New(), guids: map[guid.GUID]string{}}
	d.dec.HeadersOnly = true // the fields are decoded in event, after the record callbacks
	return d
}

func (d *decoder) guid(g guid.GUID) string {
	s, ok := d.guids[g]
	if !ok {
		if len(d.guids) >= maxCached {
			clear(d.guids)
		}
		s = bracedGUID(g)
		d.guids[g] = s
	}
	return s
}

// record builds the EventRecord of an EVENT_HEADER record of buffer b, in memory of its
// own.
func (d *decoder) record(b *etl.Buffer, r etl.Record) *EventRecord {
	rec := &EventRecord{}
	d.dec.Decode(b, r, &rec.ev)
	ev := &rec.ev
	ev.Payload, ev.Ext = ownCopy(r.Payload, r.Ext)
	ev.Bytes = nil // the header and items are in the copies; the buffer is not pinned
	rec.EventHeader, rec.ExtendedData, rec.UserData = r.Event, ev.Ext, ev.Payload
	rec.BufferContext.ProcessorIndex = uint16(ev.Processor)
	rec.BufferContext.LoggerID = ev.LoggerID
	return rec
}

// event builds an Event from an EventRecord.
func (d *decoder) event(rec *EventRecord) *Event {
	h := rec.EventHeader
	e := &Event{Header: h, Ext: rec.ExtendedData, Payload: rec.UserData, Source: d.source, EventData: map[string]any{}}
	e.Processor = int(rec.BufferContext.ProcessorIndex)
	s := &e.System
	ed := h.Descriptor
	s.Computer = hostname
	s.Channel = channelNames[ed.Channel]
	if s.Channel == "" {
		s.Channel = strconv.Itoa(int(ed.Channel))
	}
	s.EventID, s.Version = ed.ID, ed.Version
	s.Keywords.Value, s.Level.Value, s.Opcode.Value, s.Task.Value = ed.Keyword, ed.Level, ed.Opcode, ed.Task
	s.Keywords.Name = keywordName(ed.Keyword)
	s.Opcode.Name = opcodeNames[ed.Opcode]
	if int(ed.Level) < len(levelNames) {
		s.Level.Name = levelNames[ed.Level]
	}
	s.Execution.ProcessID, s.Execution.ThreadID = h.ProcessID, h.ThreadID
	s.Provider.Guid = d.guid(h.ProviderID)
	s.Provider.Name = rec.ev.ProviderName
	s.Correlation.ActivityID = d.guid(h.ActivityID)
	s.Correlation.RelatedActivityID = nullGUID
	s.TimeStamp = h.TimeStamp
	s.TimeCreated.SystemTime = rec.ev.Time
	for _, x := range e.Ext {
		e.ExtendedData = append(e.ExtendedData, abi.ExtTypeName(x.Type))
		if x.Type == abi.ExtTypeRelatedActivityID && len(x.Data) == 16 {
			s.Correlation.RelatedActivityID = d.guid(guid.FromBytes(x.Data))
		}
	}
	// The record's user data and items, which a record callback may have changed.
	ev := rec.ev
	ev.Event, ev.Payload, ev.Ext = h, rec.UserData, rec.ExtendedData
	if !d.dec.Fields(&ev) { // no schema
		if len(e.Payload) > 0 {
			e.EventData["Payload"] = tracelogging.FormatValue(tracelogging.InBinary, tracelogging.OutDefault, e.Payload)
		}
		return e
	}
	e.Name, s.Task.Name = ev.Name, ev.Name
	e.Fields, e.DecodeError = ev.Fields, ev.DecodeError
	setEventData(e.EventData, e.Fields)
	return e
}

// ownCopy copies an event's user data and extended items out of the buffer they lie in,
// into one allocation; each slice's capacity ends at its length, so that an append to
// one does not write over the next.
func ownCopy(payload []byte, ext []etl.ExtItem) ([]byte, []etl.ExtItem) {
	n := len(payload)
	for _, x := range ext {
		n += len(x.Data)
	}
	mem := make([]byte, 0, n)
	mem = append(mem, payload...)
	own := mem[:len(mem):len(mem)]
	var items []etl.ExtItem
	if len(ext) > 0 {
		items = make([]etl.ExtItem, len(ext))
		for i, x := range ext {
			start := len(mem)
			mem = append(mem, x.Data...)
			items[i] = etl.ExtItem{Type: x.Type, Data: mem[start:len(mem):len(mem)]}
		}
	}
	return own, items
}

// lostEvent builds a loss notification of the RT_LostEvent class, a MOF class: golang-etw
// gives such events an EventType and an EventGuid.
func lostEvent(opcode uint8, key string, n uint64, source string) *Event {
	e := &Event{EventData: map[string]any{key: strconv.FormatUint(n, 10)}, Source: source, notice: true}
	s := &e.System
	s.Computer = hostname
	s.Channel = channelNames[0]
	s.Provider.Guid = bracedGUID(RTLostEventGUID)
	s.Provider.Name = "RT_LostEvent"
	s.EventGuid = s.Provider.Guid
	s.Correlation.ActivityID, s.Correlation.RelatedActivityID = nullGUID, nullGUID
	s.Opcode.Value = opcode
	s.TimeCreated.SystemTime = time.Now().UTC()
	if opcode == OpcodeRTLostEvent {
		s.Opcode.Name = "RTLostEvent"
	} else {
		s.Opcode.Name = "RTLostBuffer"
	}
	s.EventType = "RT_LostEvent/" + s.Opcode.Name
	// The raw header says the same as System, as a notice's EVENT_RECORD does: the class
	// as ProviderId, the opcode, a classic (MOF) header.
	e.Header.ProviderID = RTLostEventGUID
	e.Header.Descriptor.Opcode = opcode
	e.Header.Flags = abi.EventFlagClassicHeader
	return e
}
