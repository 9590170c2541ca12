package consumer

import (
	"fmt"
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
	Ext         []etl.ExtItem
	Payload     []byte
	Processor   int
	Source      string // the session name or file path the event came from
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
// notifications from; opcodes RTLostEvent and RTLostBuffer.
var RTLostEventGUID = guid.MustParse("6a399ae0-4bc6-4de9-870b-3657f8947e7e")

// Opcodes of RTLostEventGUID.
const (
	OpcodeRTLostEvent  = 32 // events were lost: EventData["EventsLost"] since the last notice
	OpcodeRTLostBuffer = 33 // buffers were lost: EventData["BuffersLost"] since the last notice
)

var levelNames = [...]string{"Log Always", "Critical", "Error", "Warning", "Information", "Verbose"}

var extNames = map[uint16]string{
	abi.ExtTypeRelatedActivityID: "RELATED_ACTIVITYID", abi.ExtTypeSID: "SID", abi.ExtTypeTSID: "TS_ID",
	abi.ExtTypeInstanceInfo: "INSTANCE_INFO", abi.ExtTypeStackTrace32: "STACK_TRACE32", abi.ExtTypeStackTrace64: "STACK_TRACE64",
	abi.ExtTypePEBSIndex: "PEBS_INDEX", abi.ExtTypePMCCounters: "PMC_COUNTERS", abi.ExtTypeEventSchemaTL: "EVENT_SCHEMA_TL",
	abi.ExtTypeProvTraits: "PROV_TRAITS",
}

// ExtTypeName names an EVENT_HEADER_EXT_TYPE_* value.
func ExtTypeName(t uint16) string {
	if s, ok := extNames[t]; ok {
		return s
	}
	return fmt.Sprintf("EXT_TYPE_%#x", t)
}

// decodeEvent builds an Event from an EVENT_HEADER record of buffer b.
func decodeEvent(b *etl.Buffer, r etl.Record, source string) *Event {
	h := r.Event
	e := &Event{Header: h, Ext: r.Ext, Payload: r.Payload, Source: source, EventData: map[string]any{}}
	e.Processor = int(b.Header.ProcessorNumber)
	if b.Header.BufferFlag&abi.BufferFlagProcIndex != 0 {
		e.Processor |= int(b.Header.Alignment) << 8
	}
	s := &e.System
	d := h.Descriptor
	s.Channel, s.EventID, s.Version = d.Channel, d.ID, d.Version
	s.Keywords.Value, s.Level.Value, s.Opcode.Value, s.Task.Value = d.Keyword, d.Level, d.Opcode, d.Task
	if int(d.Level) < len(levelNames) {
		s.Level.Name = levelNames[d.Level]
	}
	s.Execution.ProcessID, s.Execution.ThreadID = h.ProcessID, h.ThreadID
	s.Provider.Guid = "{" + h.ProviderID.String() + "}"
	if !h.ActivityID.IsZero() {
		s.Correlation.ActivityID = "{" + h.ActivityID.String() + "}"
	}
	s.TimeStamp = h.TimeStamp
	s.TimeCreated.SystemTime, _ = b.Time(h.TimeStamp)
	var schema []byte
	for _, x := range r.Ext {
		e.ExtendedData = append(e.ExtendedData, ExtTypeName(x.Type))
		switch x.Type {
		case abi.ExtTypeRelatedActivityID:
			if len(x.Data) == 16 {
				s.Correlation.RelatedActivityID = "{" + guid.FromBytes(x.Data).String() + "}"
			}
		case abi.ExtTypeProvTraits:
			if p, err := regentry.ParseTraits(x.Data); err == nil {
				s.Provider.Name = p.Name
			}
		case abi.ExtTypeEventSchemaTL:
			schema = x.Data
		}
	}
	if schema == nil {
		e.EventData["Payload"] = r.Payload
		return e
	}
	sc, err := tracelogging.ParseSchema(schema)
	if err != nil {
		e.DecodeError = err.Error()
		return e
	}
	e.Name, s.Task.Name = sc.Name, sc.Name
	e.Fields, err = sc.Decode(r.Payload)
	if err != nil {
		e.DecodeError = err.Error()
	}
	for _, f := range e.Fields {
		e.EventData[f.Name] = f.Value
	}
	return e
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
