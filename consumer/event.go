package consumer

import (
	"time"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/tracelogging"
)

// Event is one decoded event, in the shape golang-etw gives its users (System mirrors the
// System block of the Windows event XML), with etwemu's additions: the raw header, the
// extended items and the ordered TraceLogging fields.
type Event struct {
	System System
	// EventData holds a TraceLogging event's fields by name; for an event without a
	// schema, "Payload" holds its user data bytes. A lost-events notification holds
	// "EventsLost" or "BuffersLost".
	EventData map[string]any
	// ExtendedData names the event's extended items (EVENT_HEADER_EXT_TYPE_*).
	ExtendedData []string

	// Name is a TraceLogging event's name ("" otherwise); TDH shows it as the task name.
	Name string
	// Fields are a TraceLogging event's fields in order.
	Fields []tracelogging.Field
	// DecodeError says why a TraceLogging event's fields could not be decoded ("" if
	// they were, or the event has no schema).
	DecodeError string
	Header      abi.EventHeader
	// Ext and Payload are the event's extended items and user data, in memory of the
	// event's own (one allocation of their size, copied out of the buffer): the event
	// pins no buffer, and neither another consumer nor another event sees a change
	// made to them.
	Ext       []etl.ExtItem
	Payload   []byte
	Processor int
	Source    string // the session name or file path the event came from
}

// System is the event's header in golang-etw's shape.
type System struct {
	Channel     uint8
	EventID     uint16
	Version     uint8
	Correlation struct {
		ActivityID        string
		RelatedActivityID string
	}
	Execution struct {
		ProcessID uint32
		ThreadID  uint32
	}
	Keywords struct {
		Value uint64
		Name  string
	}
	Level struct {
		Value uint8
		Name  string
	}
	Opcode struct {
		Value uint8
		Name  string
	}
	Task struct {
		Value uint16
		Name  string
	}
	Provider struct {
		Guid string //nolint:revive // golang-etw's name
		Name string
	}
	TimeCreated struct {
		SystemTime time.Time
	}
	// TimeStamp is EVENT_HEADER.TimeStamp as written, on the session clock.
	TimeStamp int64
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

var levelNames = [...]string{"Log Always", "Critical", "Error", "Warning", "Information", "Verbose"}

// decoder decodes the events of one source, caching what events repeat: the parsed
// schemas, the provider names of traits blobs and the GUIDs' text. A decoder belongs to
// one goroutine.
type decoder struct {
	source  string
	schemas map[string]*tracelogging.Schema // by the schema's bytes; nil entry: malformed
	errs    map[string]string               // why a schema is malformed
	names   map[string]string               // provider name by traits blob
	guids   map[guid.GUID]string            // "{...}" by GUID
}

// maxCached bounds each cache; a full cache starts again empty.
const maxCached = 4096

func newDecoder(source string) *decoder {
	return &decoder{source: source, schemas: map[string]*tracelogging.Schema{}, errs: map[string]string{},
		names: map[string]string{}, guids: map[guid.GUID]string{}}
}

func (d *decoder) guid(g guid.GUID) string {
	s, ok := d.guids[g]
	if !ok {
		if len(d.guids) >= maxCached {
			clear(d.guids)
		}
		s = "{" + g.String() + "}"
		d.guids[g] = s
	}
	return s
}

func (d *decoder) providerName(traits []byte) string {
	n, ok := d.names[string(traits)]
	if !ok {
		if len(d.names) >= maxCached {
			clear(d.names)
		}
		if t, err := regentry.ParseTraits(traits); err == nil {
			n = t.Name
		}
		d.names[string(traits)] = n
	}
	return n
}

func (d *decoder) schema(b []byte) (*tracelogging.Schema, string) {
	sc, ok := d.schemas[string(b)]
	if !ok {
		if len(d.schemas) >= maxCached {
			clear(d.schemas)
			clear(d.errs)
		}
		parsed, err := tracelogging.ParseSchema(b)
		if err != nil {
			d.errs[string(b)] = err.Error()
		} else {
			sc = &parsed
		}
		d.schemas[string(b)] = sc
	}
	if sc == nil {
		return nil, d.errs[string(b)]
	}
	return sc, ""
}

// event builds an Event from an EVENT_HEADER record of buffer b.
func (d *decoder) event(b *etl.Buffer, r etl.Record) *Event {
	source := d.source
	h := r.Event
	payload, ext := ownCopy(r.Payload, r.Ext)
	e := &Event{Header: h, Ext: ext, Payload: payload, Source: source, EventData: map[string]any{}}
	e.Processor = int(b.Header.ProcessorNumber)
	if b.Header.BufferFlag&abi.BufferFlagProcIndex != 0 {
		e.Processor |= int(b.Header.Alignment) << 8
	}
	s := &e.System
	ed := h.Descriptor
	s.Channel, s.EventID, s.Version = ed.Channel, ed.ID, ed.Version
	s.Keywords.Value, s.Level.Value, s.Opcode.Value, s.Task.Value = ed.Keyword, ed.Level, ed.Opcode, ed.Task
	if int(ed.Level) < len(levelNames) {
		s.Level.Name = levelNames[ed.Level]
	}
	s.Execution.ProcessID, s.Execution.ThreadID = h.ProcessID, h.ThreadID
	s.Provider.Guid = d.guid(h.ProviderID)
	if !h.ActivityID.IsZero() {
		s.Correlation.ActivityID = d.guid(h.ActivityID)
	}
	s.TimeStamp = h.TimeStamp
	s.TimeCreated.SystemTime, _ = b.Time(h.TimeStamp)
	var schema []byte
	for _, x := range ext {
		e.ExtendedData = append(e.ExtendedData, abi.ExtTypeName(x.Type))
		switch x.Type {
		case abi.ExtTypeRelatedActivityID:
			if len(x.Data) == 16 {
				s.Correlation.RelatedActivityID = d.guid(guid.FromBytes(x.Data))
			}
		case abi.ExtTypeProvTraits:
			s.Provider.Name = d.providerName(x.Data)
		case abi.ExtTypeEventSchemaTL:
			schema = x.Data
		}
	}
	if schema == nil {
		e.EventData["Payload"] = payload
		return e
	}
	sc, why := d.schema(schema)
	if sc == nil {
		e.DecodeError = why
		return e
	}
	e.Name, s.Task.Name = sc.Name, sc.Name
	var err error
	e.Fields, err = sc.Decode(payload)
	if err != nil {
		e.DecodeError = err.Error()
	}
	for _, f := range e.Fields {
		e.EventData[f.Name] = f.Value
	}
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

// lostEvent builds a loss notification of the RT_LostEvent class.
func lostEvent(opcode uint8, key string, n uint64, source string) *Event {
	e := &Event{EventData: map[string]any{key: n}, Source: source}
	e.System.Provider.Guid = "{" + RTLostEventGUID.String() + "}"
	e.System.Provider.Name = "RT_LostEvent"
	e.System.Opcode.Value = opcode
	e.System.TimeCreated.SystemTime = time.Now().UTC()
	if opcode == OpcodeRTLostEvent {
		e.System.Opcode.Name = "RTLostEvent"
	} else {
		e.System.Opcode.Name = "RTLostBuffer"
	}
	return e
}
