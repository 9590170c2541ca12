package etw

import (
	"fmt"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/guid"
)

// Channel is the event's channel (EVENT_DESCRIPTOR.Channel).
type Channel uint8

// ChannelTraceLogging (11) marks TraceLogging events; it is the default.
const ChannelTraceLogging Channel = 11

// Level is the event's level (EVENT_DESCRIPTOR.Level).
type Level uint8

// Levels (TRACE_LEVEL_* / WINEVENT_LEVEL_*).
const (
	LevelAlways Level = iota
	LevelCritical
	LevelError
	LevelWarning
	LevelInfo
	LevelVerbose
)

var levelNames = [...]string{"Always", "Critical", "Error", "Warning", "Info", "Verbose"} // go-winio's (stringer -trimprefix=Level)

func (l Level) String() string {
	if int(l) < len(levelNames) {
		return levelNames[l]
	}
	return fmt.Sprintf("Level(%d)", uint8(l))
}

// Opcode is the event's opcode (EVENT_DESCRIPTOR.Opcode).
type Opcode uint8

// Opcodes (WINEVENT_OPCODE_*).
const (
	OpcodeInfo Opcode = iota
	OpcodeStart
	OpcodeStop
	OpcodeDCStart
	OpcodeDCStop
)

var opcodeNames = [...]string{"Info", "Start", "Stop", "DCStart", "DCStop"} // go-winio's (stringer -trimprefix=Opcode)

func (o Opcode) String() string {
	if int(o) < len(opcodeNames) {
		return opcodeNames[o]
	}
	return fmt.Sprintf("Opcode(%d)", uint8(o))
}

// defaultDescriptor is a TraceLogging event's descriptor before its options: level
// Verbose, channel TraceLogging, id, version and task 0.
var defaultDescriptor = emu.EventDescriptor{Level: uint8(LevelVerbose), Channel: uint8(ChannelTraceLogging)}

type eventOptions struct {
	descriptor        emu.EventDescriptor
	activityID        guid.GUID
	relatedActivityID guid.GUID
	tags              uint32
}

// EventOpt sets an option of one event.
type EventOpt func(*eventOptions)

// WithEventOpts gathers event options for WriteEvent.
func WithEventOpts(opts ...EventOpt) []EventOpt { return opts }

// WithLevel sets the event's level.
func WithLevel(level Level) EventOpt {
	return func(o *eventOptions) { o.descriptor.Level = uint8(level) }
}

// WithKeyword adds keyword bits to the event (options OR together).
func WithKeyword(keyword uint64) EventOpt {
	return func(o *eventOptions) { o.descriptor.Keyword |= keyword }
}

// WithChannel sets the event's channel.
func WithChannel(channel Channel) EventOpt {
	return func(o *eventOptions) { o.descriptor.Channel = uint8(channel) }
}

// WithOpcode sets the event's opcode.
func WithOpcode(opcode Opcode) EventOpt {
	return func(o *eventOptions) { o.descriptor.Opcode = uint8(opcode) }
}

// WithTags adds tag bits to the event (28 bits, in its metadata; options OR together).
func WithTags(tags uint32) EventOpt {
	return func(o *eventOptions) { o.tags |= tags }
}

// WithActivityID sets the event's activity id.
func WithActivityID(id guid.GUID) EventOpt {
	return func(o *eventOptions) { o.activityID = id }
}

// WithRelatedActivityID sets the event's related activity id.
func WithRelatedActivityID(id guid.GUID) EventOpt {
	return func(o *eventOptions) { o.relatedActivityID = id }
}
