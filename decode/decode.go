// Package decode reads the records of ETL buffers, from a file or a live session, into
// events: the one place where a record's processor, wall time, provider name, kernel
// hook and TraceLogging fields are worked out. The records themselves are walked by etl
// (Buffer.Records, Reader.Walk); dump, the scenario views and the consumer format the
// events this package gives, and the event's JSON is written here once.
package decode

import (
	"fmt"
	"time"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/tracelogging"
)

// Event is one record of a buffer, decoded: the record as etl walked it, where it lies,
// and what its buffer, its provider and its metadata say about it. Its slices (Bytes,
// Payload, Ext) point into the buffer; a caller that keeps the event past the buffer
// copies them.
type Event struct {
	etl.Record
	// Buffer is the buffer's number in its source, set by the caller: its place in a
	// file (0 the header buffer), or its id in a live session.
	Buffer   int
	Sequence int64 // the buffer's SequenceNumber
	// Processor is the buffer's ETW_BUFFER_CONTEXT.ProcessorIndex, as
	// EVENT_RECORD.BufferContext gives it (abi.BufferHeader.ProcessorIndex).
	Processor int
	LoggerID  uint16 // the buffer's ETW_BUFFER_CONTEXT.LoggerId
	// Time is TimeStamp as wall time, by the buffer's reference clock or else the
	// decoder's; zero when neither can say.
	Time time.Time
	// ProviderName names Provider: from the provider traits of this record or an earlier
	// one of the same provider, a kernel event class, or the decoder's Names.
	ProviderName string
	// HookName and Detail are a kernel (system) record's: the EventTrace record or kernel
	// event class and type it is, and, for the EventTrace records of a file's header
	// buffer, what their payload says.
	HookName, Detail string
	// Name and Fields are a TraceLogging event's name and fields, typed and in order;
	// DecodeError says why they could not be decoded ("" if they were, or the event has
	// no schema).
	Name        string
	Fields      []tracelogging.Field
	DecodeError string
}

// Decoder decodes the records of one source, caching what records repeat: parsed
// TraceLogging schemas and provider names. A decoder belongs to one goroutine; each cache
// holds at most maxCached entries (those keyed by a blob at most maxBlobBytes of keys) and
// starts again empty when full: a hostile file can give every record a schema, traits or a
// provider of its own.
type Decoder struct {
	// Clock converts the timestamps of buffers that carry no reference clock of their
	// own (files before 6.2): a file's is etl.Reader.Clock. The zero Clock gives no time.
	Clock etl.Clock
	// Names names the providers that no traits and no kernel event class name (nil:
	// none).
	Names func(guid.GUID) string
	// Headers only: no TraceLogging fields, no hook details (a count or summary needs
	// neither).
	HeadersOnly bool

	schemas   blobCache[*schema]
	providers map[guid.GUID]string
	traits    blobCache[string] // provider name by traits blob
	hooks     map[uint16]string // hookName by hook id: at most 65,536

	// the last time formatted by TimeText
	lastTS   int64
	lastTime time.Time
	lastText string
}

type schema struct {
	parsed *tracelogging.Schema // nil: malformed
	err    string               // why it is malformed
}

// maxCached bounds the entries of each cache, maxBlobBytes the keys of a cache keyed by a
// blob (a schema or traits blob is up to 64 KB).
const (
	maxCached    = 4096
	maxBlobBytes = 4 << 20
)

// blobCache maps blobs (by their bytes) to what was parsed of them, within maxCached
// entries and maxBlobBytes of keys; full, it starts again empty.
type blobCache[V any] struct {
	m     map[string]V
	bytes int
}

// get returns what parse makes of b, calling it once per distinct blob.
func (c *blobCache[V]) get(b []byte, parse func([]byte) V) V {
	v, ok := c.m[string(b)]
	if !ok {
		if c.m == nil || len(c.m) >= maxCached || c.bytes+len(b) > maxBlobBytes {
			c.m, c.bytes = map[string]V{}, 0
		}
		v = parse(b)
		c.m[string(b)] = v
		c.bytes += len(b)
	}
	return v
}

// New returns a decoder with no reference clock and no extra names.
func New() *Decoder {
	return &Decoder{providers: map[guid.GUID]string{}, hooks: map[uint16]string{}}
}

// Buffer calls fn with every record of b decoded, in order, numbering the buffer n. The
// event is reused between calls. It returns fn's error, or etl's *RecordError at a bad
// record (the records before it delivered).
func (d *Decoder) Buffer(b *etl.Buffer, n int, fn func(*Event) error) error {
	var e Event
	return b.Records(func(r etl.Record) error {
		d.Decode(b, r, &e)
		e.Buffer = n
		return fn(&e)
	})
}

// Decode decodes record r of buffer b into e (e.Buffer is left to the caller).
func (d *Decoder) Decode(b *etl.Buffer, r etl.Record, e *Event) {
	buf := e.Buffer
	*e = Event{Record: r, Buffer: buf, Sequence: b.Header.SequenceNumber, Processor: b.Header.ProcessorIndex(), LoggerID: b.Header.LoggerID}
	switch c, ok := b.Clock(); {
	case r.Kind == etl.KindUnknown: // no timestamp was read: no time
	case ok:
		e.Time, _ = c.Time(r.TimeStamp)
	default:
		e.Time, _ = d.Clock.Time(r.TimeStamp)
	}
	switch r.Kind {
	case etl.KindEventHeader, etl.KindFullHeader, etl.KindInstance:
		e.ProviderName = d.providerName(r.Provider, r.Ext)
	case etl.KindSystem, etl.KindCompact, etl.KindPerfInfo:
		e.HookName = d.hookName(r.HookID)
		if !d.HeadersOnly {
			e.Detail = hookDetail(r.HookID, r.Payload)
		}
	}
	if !d.HeadersOnly {
		d.Fields(e)
	}
}

// Fields decodes a TraceLogging event's name and fields from its EVENT_SCHEMA_TL item and
// payload into e (Decode does unless HeadersOnly): a caller that kept events decoded
// with HeadersOnly decodes those it shows. It reports whether the event has a schema.
func (d *Decoder) Fields(e *Event) bool {
	if e.Kind != etl.KindEventHeader {
		return false
	}
	for _, x := range e.Ext {
		if x.Type != abi.ExtTypeEventSchemaTL {
			continue
		}
		sc := d.schema(x.Data)
		if sc.parsed == nil {
			e.DecodeError = sc.err
			return true
		}
		e.Name = sc.parsed.Name
		var err error
		if e.Fields, err = sc.parsed.Decode(e.Payload); err != nil {
			e.DecodeError = err.Error()
		}
		return true
	}
	return false
}

func (d *Decoder) schema(b []byte) *schema {
	return d.schemas.get(b, func(b []byte) *schema {
		sc := &schema{}
		if parsed, err := tracelogging.ParseSchema(b); err != nil {
			sc.err = err.Error()
		} else {
			sc.parsed = &parsed
		}
		return sc
	})
}

// providerName names provider g: by the traits among ext, which it remembers for the
// provider's later records, else by what it remembers, a kernel event class or Names.
func (d *Decoder) providerName(g guid.GUID, ext []etl.ExtItem) string {
	name, known := d.providers[g]
	for _, x := range ext {
		if x.Type != abi.ExtTypeProvTraits {
			continue
		}
		if t := d.traitsName(x.Data); t != "" && t != name {
			name, known = t, false
		}
	}
	if known {
		return name
	}
	if name == "" {
		if name = pmc.KernelClassName(g); name == "" && d.Names != nil {
			name = d.Names(g)
		}
	}
	if len(d.providers) >= maxCached {
		clear(d.providers)
	}
	d.providers[g] = name
	return name
}

// traitsName returns the provider name a traits blob gives ("" for a malformed one),
// parsing each distinct blob once: every TraceLogging record carries its provider's.
func (d *Decoder) traitsName(blob []byte) string {
	return d.traits.get(blob, func(b []byte) string {
		if t, err := regentry.ParseTraits(b); err == nil {
			return t.Name
		}
		return ""
	})
}

// TimeText returns e.Time in TimeLayout, or "" when the event has no time. Records in a
// row often share a tick: the last text is kept.
func (d *Decoder) TimeText(e *Event) string {
	if e.Time.IsZero() {
		return ""
	}
	if e.TimeStamp != d.lastTS || !e.Time.Equal(d.lastTime) || d.lastText == "" {
		d.lastTS, d.lastTime, d.lastText = e.TimeStamp, e.Time, e.Time.UTC().Format(TimeLayout)
	}
	return d.lastText
}

// TimeLayout is RFC 3339 with the seven fractional digits of a FILETIME's 100 ns ticks,
// trailing zeros kept, so that times line up in columns.
const TimeLayout = "2006-01-02T15:04:05.0000000Z07:00"

// hookName names a system record's hook: the EventTrace record it is, or its kernel event
// class and type ("Thread type 0x24"); "" for a group without a known class.
func (d *Decoder) hookName(hook uint16) string {
	if n := etl.HookName(hook); n != "" {
		return n
	}
	n, ok := d.hooks[hook] // the kernel class names are formatted once a hook, not once a record
	if !ok {
		if id, known := pmc.ClassicEventIDOf(uint32(hook)); known {
			n = fmt.Sprintf("%s type %#02x", pmc.KernelClassName(id.EventGUID), id.Type)
		}
		d.hooks[hook] = n
	}
	return n
}

// hookDetail decodes the payload of the EventTrace records that a file's header buffer
// carries besides the log-file header itself; "" for others.
func hookDetail(hook uint16, p []byte) string {
	switch hook {
	case etl.HookHeaderExtension:
		x, err := etl.DecodeHeaderExtension(p)
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("group masks %#x, KernelEventVersion %d", x.GroupMasks, x.KernelEventVersion)
	case etl.HookPartitionInfo:
		x, err := etl.DecodePartitionInfo(p)
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("PartitionId %s, ParentId %s, QpcOffsetFromRoot %d, PartitionType %d", x.PartitionID, x.ParentID, x.QpcOffsetFromRoot, x.PartitionType)
	case etl.HookDbgIDRSDS:
		x, err := etl.DecodeDbgIDRSDS(p)
		if err != nil {
			return err.Error()
		}
		return fmt.Sprintf("PDB %q, signature %s, age %d", x.PdbName, x.Signature, x.Age)
	case etl.HookBuildLab:
		return fmt.Sprintf("build lab %q", etl.DecodeBuildLab(p))
	}
	return ""
}
