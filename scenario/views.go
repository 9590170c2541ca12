package scenario

import (
	"bytes"
	"cmp"
	"container/heap"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/etwemu/etwemu/decode"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/internal/quote"
	"github.com/etwemu/etwemu/layout"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/tracelogging"
	"github.com/etwemu/etwemu/winerr"
)

// The views read the kernel through its read-only accessors (statistics, properties,
// buffer views, GUID-entry slots) and session.Logger.Peek, which copies a synchronous
// session's buffers. Each builds a value that prints as text or, with -json, as JSON.

// show prints v as indented JSON, or calls text.
func (m *Machine) show(a args, v any, text func(w io.Writer)) error {
	if a.json() {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintln(m.out, string(b))
		return nil
	}
	tw := tabwriter.NewWriter(m.out, 0, 0, 2, ' ', 0)
	text(tw)
	return tw.Flush()
}

// loggerRow is one logger in strdump.
type loggerRow struct {
	LoggerID            uint16 `json:"loggerId"`
	Name                string `json:"name"`
	Kind                string `json:"kind"`
	LoggerMode          string `json:"loggerMode"`
	BufferSize          uint32 `json:"bufferSize"`
	NumberOfBuffers     int64  `json:"numberOfBuffers"`
	FreeBuffers         int64  `json:"freeBuffers"`
	PeakBuffers         int64  `json:"peakBuffers"`
	EventsLost          uint64 `json:"eventsLost"`
	BuffersWritten      uint64 `json:"buffersWritten"`
	LogBuffersLost      uint64 `json:"logBuffersLost"`
	RealTimeBuffersLost uint64 `json:"realTimeBuffersLost"`
	// Destinations say where the logger hands its full buffers: "file NAME" (a log
	// file), "real time" (EVENT_TRACE_REAL_TIME_MODE: to consumers) and "ring in memory"
	// (EVENT_TRACE_BUFFERING_MODE: kept until saved). The text view leaves them out.
	Destinations []string `json:"destinations"`
}

func rowOf(l *emu.Session) loggerRow {
	s := l.Stats()
	return loggerRow{LoggerID: l.ID(), Name: l.Name(), Kind: l.Kind().String(), LoggerMode: logmode.Mode(l.Mode()).Short(),
		BufferSize: l.BufferSize(), NumberOfBuffers: s.NumberOfBuffers, FreeBuffers: s.FreeBuffers, PeakBuffers: s.PeakBuffers,
		EventsLost: s.EventsLost, BuffersWritten: s.BuffersWritten, LogBuffersLost: s.LogBuffersLost, RealTimeBuffersLost: s.RealTimeBuffersLost,
		Destinations: destinations(l)}
}

// destinations says where session l's full buffers go (loggerRow.Destinations).
func destinations(l *emu.Session) []string {
	out := []string{}
	if f := l.LogFileName(); f != "" {
		out = append(out, "file "+f)
	}
	if l.Mode()&logmode.RealTime != 0 {
		out = append(out, "real time")
	}
	if l.Mode()&logmode.Buffering != 0 {
		out = append(out, "ring in memory")
	}
	return out
}

func viewStrdump(m *Machine, a args) error {
	if _, err := m.kernel(); err != nil {
		return err
	}
	rows := []loggerRow{}
	for _, l := range m.k.Sessions() {
		rows = append(rows, rowOf(l))
	}
	return m.show(a, rows, func(w io.Writer) {
		noun := "loggers"
		if len(rows) == 1 {
			noun = "logger"
		}
		fmt.Fprintf(w, "%d %s running (Windows %s)\n", len(rows), noun, m.version)
		fmt.Fprintln(w, "Id\tName\tKind\tLoggerMode\tBufferSize\tBuffers\tFree\tPeak\tEventsLost\tBuffersWritten\tLogBuffersLost\tRealTimeBuffersLost")
		for _, r := range rows {
			fmt.Fprintf(w, "%d\t%s\t%s\t%s\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%d\n", r.LoggerID, quote.Shown(r.Name), r.Kind, r.LoggerMode, r.BufferSize,
				r.NumberOfBuffers, r.FreeBuffers, r.PeakBuffers, r.EventsLost, r.BuffersWritten, r.LogBuffersLost, r.RealTimeBuffersLost)
		}
	})
}

// field is one member of a logger context as the logger view prints it.
type field struct {
	Offset int    `json:"offset"` // -1 where the catalogue has no offset for this version
	Name   string `json:"name"`
	Value  string `json:"value"`
}

func viewLogger(m *Machine, a args) error {
	l, err := m.sessionNamed(a.pos[0])
	if err != nil {
		return err
	}
	st, p := l.Stats(), l.Properties()
	// A private logger's context is ETW_UM_LOGGER_CONTEXT, in the provider's process;
	// every other logger's is the kernel's WMI_LOGGER_CONTEXT.
	s := &layout.LoggerContext
	if l.Kind() == logmode.Private {
		s = &layout.UMLoggerContext
	}
	view := s.At(m.version, layout.X64)
	name := func(n string) int {
		if !view.Exists {
			return -1
		}
		return view.Offset(n)
	}
	collecting := 0
	if l.Collecting() {
		collecting = 1
	}
	fields := []field{
		{name("LoggerId"), "LoggerId", fmt.Sprintf("0x%x", l.ID())},
		{name("BufferSize"), "BufferSize", fmt.Sprintf("0x%x", l.BufferSize())},
		{name("MaximumEventSize"), "MaximumEventSize", fmt.Sprintf("0x%x", l.MaxEventSize())},
		{name("LoggerMode"), "LoggerMode", fmt.Sprintf("0x%08x (%s)", l.Mode(), logmode.Mode(l.Mode()).Short())},
		{name("LoggerName"), "LoggerName", fmt.Sprintf("%q", l.Name())},
		{name("LogFileName"), "LogFileName", fmt.Sprintf("%q", l.LogFileName())},
		{name("ClockType"), "ClockType", fmt.Sprintf("%d (%s)", l.ClockType(), l.ClockType())},
		{name("FlushTimer"), "FlushTimer", fmt.Sprintf("%d", p.FlushTimer)},
		{name("MaximumFileSize"), "MaximumFileSize", fmt.Sprintf("%d", p.MaximumFileSize)},
		{name("MinimumBuffers"), "MinimumBuffers", fmt.Sprintf("%d", p.MinimumBuffers)},
		{name("MaximumBuffers"), "MaximumBuffers", fmt.Sprintf("%d", p.MaximumBuffers)},
		{name("NumberOfBuffers"), "NumberOfBuffers", fmt.Sprintf("%d", st.NumberOfBuffers)},
		{name("BuffersAvailable"), "BuffersAvailable", fmt.Sprintf("%d", st.FreeBuffers)},
		{name("PeakBuffersCount"), "PeakBuffersCount", fmt.Sprintf("%d", st.PeakBuffers)},
		{name("EventsLost"), "EventsLost", fmt.Sprintf("%d", st.EventsLost)},
		{name("BuffersWritten"), "BuffersWritten", fmt.Sprintf("%d", st.BuffersWritten)},
		{name("LogBuffersLost"), "LogBuffersLost", fmt.Sprintf("%d", st.LogBuffersLost)},
		{name("RealTimeBuffersLost"), "RealTimeBuffersLost", fmt.Sprintf("%d", st.RealTimeBuffersLost)},
		{name("CollectionOn"), "CollectionOn", fmt.Sprintf("%d", collecting)},
		{name("NumberOfProcessors"), "NumberOfProcessors", fmt.Sprintf("%d", l.Streams())},
	}
	if in, out := l.CompressionRatio(); in > 0 {
		fields = append(fields, field{-1, "(compression)", fmt.Sprintf("%d bytes of buffers stored in %d (%.1f%%)", in, out, 100*float64(out)/float64(in))})
	}
	return m.showStruct(a, s, fmt.Sprintf("of logger %d %q", l.ID(), l.Name()), fields)
}

// showStruct prints fields of structure s as WinDbg's dt does, sorted by offset (the
// ones without an offset last), titled with what the structure is of; with -json, the
// structure's name, whether its layout is known and the fields.
func (m *Machine) showStruct(a args, s *layout.Struct, of string, fields []field) error {
	view := s.At(m.version, layout.X64)
	sort.SliceStable(fields, func(i, j int) bool {
		if (fields[i].Offset < 0) != (fields[j].Offset < 0) {
			return fields[j].Offset < 0
		}
		return fields[i].Offset < fields[j].Offset
	})
	out := struct {
		Structure string `json:"structure"`
		Layout    bool   `json:"layoutKnown"`
		// Offsets says where the offsets come from, as the text view's title does.
		Offsets string  `json:"offsets"`
		Fields  []field `json:"fields"`
	}{s.Name, view.Exists, offsetsFrom(s, view), fields}
	return m.show(a, out, func(w io.Writer) {
		fmt.Fprintf(w, "_%s %s (Windows %s; %s)\n", s.Name, of, m.version, out.Offsets)
		for _, f := range fields {
			off := "+?"
			if f.Offset >= 0 {
				off = fmt.Sprintf("+0x%03x", f.Offset)
			}
			fmt.Fprintf(w, "   %s\t%s\t: %s\n", off, f.Name, f.Value)
		}
	})
}

// offsetsFrom says where the offsets of view, structure s at the emulated version, come
// from: the catalogue's rows for that version, or one build's symbols that the catalogue
// shows for it (WMI_LOGGER_CONTEXT: build 19569, shown as 2004), or nowhere.
func offsetsFrom(s *layout.Struct, view layout.View) string {
	switch {
	case !view.Exists:
		return fmt.Sprintf("the catalogue has no %s layout for %s: offsets unknown", s.Name, view.Version)
	case s.Build != "":
		return fmt.Sprintf("x64 offsets of %s, which the catalogue shows as %s", s.Build, view.Version)
	}
	return "x64 offsets from the layout catalogue"
}

// bufferRow is one buffer in bufdump.
type bufferRow struct {
	session.BufferView
	StateName string `json:"stateName"`
	// Current says the buffer is its processor's current buffer, the one writers
	// reserve space in (the text view prints these ids in its first line).
	Current bool   `json:"current"`
	Records int    `json:"records"`
	Hex     string `json:"hex,omitempty"` // the first bytes after the buffer header
	// Cut says Hex holds fewer bytes than asked, or none, because bufdump had shown
	// MaxBufdumpBytes already.
	Cut bool `json:"cut,omitempty"`
}

func viewBufdump(m *Machine, a args) error {
	l, err := m.sessionNamed(a.pos[0])
	if err != nil {
		return err
	}
	limit, err := a.num("bytes", 32, 1<<16)
	if err != nil {
		return err
	}
	cur := l.CurrentBuffers()
	current := map[int]bool{}
	for _, id := range cur {
		current[id] = true
	}
	rows := []bufferRow{}
	budget, cut := MaxBufdumpBytes, 0 // the bytes shown in hex, over all buffers
	err = l.Peek(func(v session.BufferView, data []byte) {
		r := bufferRow{BufferView: v, StateName: v.State.String(), Current: current[v.ID]}
		m.walked++ // Limits.Walk: each buffer, and its records
		if len(data) > headerSize && m.ctx.Err() == nil {
			n, _ := etl.CountRecords(data, len(data))
			r.Records = n
			m.walked += int64(n)
			show := data[headerSize:min(len(data), headerSize+int(limit))]
			if len(show) > budget {
				show, cut, r.Cut = show[:budget], cut+1, true
			}
			budget -= len(show)
			r.Hex = hex.EncodeToString(show)
		}
		rows = append(rows, r)
	})
	if m.ctx.Err() != nil {
		return context.Cause(m.ctx)
	}
	live := errors.Is(err, winerr.ErrNotSupported) // a logger goroutine owns the buffers: their headers only
	if live {
		for _, v := range l.Buffers() {
			rows = append(rows, bufferRow{BufferView: v, StateName: v.State.String(), Current: current[v.ID]})
		}
	} else if err != nil {
		return err
	}
	return m.show(a, rows, func(w io.Writer) {
		fmt.Fprintf(w, "logger %d %q: %s of %d bytes; current buffer by processor %v\n", l.ID(), l.Name(), quote.Count(len(rows), "buffer"), l.BufferSize(), cur)
		if live {
			fmt.Fprintln(w, "(the session has a logger goroutine: records are not counted)")
		}
		fmt.Fprintln(w, "Buffer\tProcessor\tState\tCurrentOffset\tSavedOffset\tReferenceCount\tRecords\tFirst bytes after the header")
		for _, r := range rows {
			fmt.Fprintf(w, "%d\t%d\t%s\t0x%x\t0x%x\t%d\t%d\t%s\n", r.ID, r.Stream, r.StateName, r.CurrentOffset, r.SavedOffset, r.ReferenceCount, r.Records, r.Hex)
		}
		if cut > 0 {
			fmt.Fprintf(w, "(the bytes of %d buffers are cut short or left out: bufdump shows at most %d bytes in all)\n", cut, MaxBufdumpBytes)
		}
	})
}

// MaxBufdumpBytes bounds the buffer bytes bufdump shows in hex, over all the session's
// buffers: a session may hold a gigabyte of buffers, and the view shows two hex digits a
// byte.
const MaxBufdumpBytes = 1 << 20

// MaxLogdumpEvents bounds logdump's t: the view holds at most this many events, however
// many the session's buffers hold (a log file and etwemu dump show them all).
const MaxLogdumpEvents = 10000

// headerSize is WMI_BUFFER_HEADER's size: records start after it.
const headerSize = 0x48

func viewLogdump(m *Machine, a args) error {
	l, err := m.sessionNamed(a.pos[0])
	if err != nil {
		return err
	}
	last, err := a.num("t", 20, MaxLogdumpEvents)
	if err != nil {
		return err
	}
	names := map[guid.GUID]string{}
	for _, p := range m.order {
		names[p.g] = p.name
	}
	m.walked += int64(len(m.order)) // Limits.Walk, with the records read below
	dec := decode.New()
	dec.Names = func(g guid.GUID) string { return names[g] }
	dec.HeadersOnly = true // the fields of the events shown only, below
	// The last t events by (timestamp, processor, buffer, offset), kept in a heap whose
	// root is the earliest of them: memory for t events, not for every event held.
	kept := &newest{}
	total := 0
	err = l.Peek(func(v session.BufferView, data []byte) {
		if len(data) <= headerSize || m.ctx.Err() != nil {
			return
		}
		_ = dec.Buffer(&etl.Buffer{Data: data}, v.ID, func(e *decode.Event) error {
			e.Processor = v.Stream // the buffer's processor, whose header a buffer in use has not written yet
			total++
			switch {
			case uint64(len(*kept)) < last:
				row := *e
				keep(dec, &row)
				heap.Push(kept, &row)
			case last > 0 && before((*kept)[0], e):
				*(*kept)[0] = *e
				keep(dec, (*kept)[0])
				heap.Fix(kept, 0)
			}
			return nil
		})
	})
	m.walked += int64(total)
	if m.ctx.Err() != nil {
		return context.Cause(m.ctx)
	}
	if err != nil {
		return err
	}
	rows := []*decode.Event(*kept)
	sort.Slice(rows, func(i, j int) bool { return before(rows[i], rows[j]) })
	if rows == nil {
		rows = []*decode.Event{}
	}
	return m.show(a, rows, func(w io.Writer) {
		fmt.Fprintf(w, "logger %d %q: %s in its buffers, the last %d by timestamp\n", l.ID(), l.Name(), quote.Count(total, "event"), len(rows))
		fmt.Fprintln(w, "TimeStamp\tProcessor\tBuffer\tOffset\tProvider\tId\tLevel\tKeyword\tPayload\tPMC")
		for _, r := range rows {
			who, id := r.ProviderName, fmt.Sprint(r.Event.Descriptor.ID)
			switch {
			case r.Kind != etl.KindEventHeader:
				who, id = r.Kind.String(), fmt.Sprintf("hook 0x%04x", r.HookID) // a kernel event
			case who == "":
				who = r.Provider.String()
			default:
				who = quote.Shown(who) // a scenario's name or a TraceLogging event's own
			}
			pmcs := "-"
			if len(r.PMC) > 0 {
				pmcs = fmt.Sprint(r.PMC)
			}
			fmt.Fprintf(w, "%d\t%d\t%d\t0x%x\t%s\t%s\t%d\t0x%x\t%d\t%s\n", r.TimeStamp, r.Processor, r.Buffer, r.Offset, who, id,
				r.Event.Descriptor.Level, r.Event.Descriptor.Keyword, len(r.Payload), pmcs)
		}
	})
}

// keep readies an event logdump keeps past the buffer Peek lent it: its TraceLogging
// fields decoded while the bytes are there, then its byte slices let go of the buffer.
// The view prints the sizes of the payload and of the extended items, never their bytes
// (decode.Event's JSON gives payloadBytes), so each slice becomes that many bytes of
// zeroBytes: a kept event holds no buffer and no copy of its record, and t events cost
// what their rows print, not t buffers.
func keep(dec *decode.Decoder, e *decode.Event) {
	dec.Fields(e)
	e.Bytes, e.Payload = nil, zeroBytes[:len(e.Payload)]
	ext := make([]etl.ExtItem, len(e.Ext))
	for i, x := range e.Ext {
		ext[i] = etl.ExtItem{Type: x.Type, Data: zeroBytes[:len(x.Data)]}
	}
	e.Ext, e.PMC = ext, slices.Clone(e.PMC)
	for i := range e.Fields {
		e.Fields[i].Value = ownValue(e.Fields[i].Value)
	}
}

// ownValue returns a field's value with the payload's bytes it holds copied: a binary or
// custom field's []byte is a slice of the payload, and arrays and structs hold such values.
func ownValue(v any) any {
	switch v := v.(type) {
	case []byte:
		return slices.Clone(v)
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = ownValue(x)
		}
		return out
	case []tracelogging.Field:
		out := slices.Clone(v)
		for i := range out {
			out[i].Value = ownValue(out[i].Value)
		}
		return out
	}
	return v
}

// zeroBytes stands in for the bytes of the records logdump keeps: a record is at most
// 0xFFFF bytes.
var zeroBytes [0x10000]byte

// before orders logdump's events: by timestamp, then processor, buffer and offset, which
// no two records share.
func before(x, y *decode.Event) bool {
	return cmp.Or(cmp.Compare(x.TimeStamp, y.TimeStamp), cmp.Compare(x.Processor, y.Processor),
		cmp.Compare(x.Buffer, y.Buffer), cmp.Compare(x.Offset, y.Offset)) < 0
}

// newest is logdump's heap (container/heap) of the latest events seen, the earliest of
// them at the root.
type newest []*decode.Event

func (h newest) Len() int           { return len(h) }
func (h newest) Less(i, j int) bool { return before(h[i], h[j]) }
func (h newest) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *newest) Push(x any)        { *h = append(*h, x.(*decode.Event)) }
func (h *newest) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// slotRow is one enabled slot of a GUID entry. The keywords are hexadecimal strings, as
// logdump's are: a 64-bit mask as a JSON number loses its low bits in JavaScript and jq
// (0xffffffffffffffff read back as 2^64).
type slotRow struct {
	Slot            int    `json:"slot"`
	LoggerID        uint16 `json:"loggerId"`
	Level           uint8  `json:"level"`
	MatchAnyKeyword string `json:"matchAnyKeyword"`
	MatchAllKeyword string `json:"matchAllKeyword"`
}

// guidRow is one GUID entry.
type guidRow struct {
	GUID          string    `json:"guid"`
	Provider      string    `json:"provider,omitempty"`
	Type          string    `json:"type"`
	RefCount      int64     `json:"refCount"`
	Mask          uint8     `json:"enabledSlots"`
	Slots         []slotRow `json:"slots"`
	Registrations int       `json:"registrations"`
}

func viewGuids(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	names := map[guid.GUID]string{}
	for _, p := range m.order {
		names[p.g] = p.name
	}
	m.walked += int64(len(m.order) + k.GuidEntryCount()) // Limits.Walk
	rows := []guidRow{}
	for _, e := range k.GuidEntries() {
		r := guidRow{GUID: e.GUID().String(), Provider: names[e.GUID()], Type: e.Type().String(), RefCount: e.RefCount(), Mask: e.Mask(),
			Slots: []slotRow{}, Registrations: e.Registrations()}
		for i := range 8 {
			if s, ok := e.Slot(i); ok && s.IsEnabled {
				r.Slots = append(r.Slots, slotRow{Slot: i, LoggerID: s.LoggerID, Level: s.Level,
					MatchAnyKeyword: fmt.Sprintf("0x%x", s.MatchAnyKeyword), MatchAllKeyword: fmt.Sprintf("0x%x", s.MatchAllKeyword)})
			}
		}
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].GUID < rows[j].GUID })
	return m.show(a, rows, func(w io.Writer) {
		fmt.Fprintf(w, "%d GUID entries (ETW_GUID_ENTRY)\n", len(rows))
		for _, r := range rows {
			fmt.Fprintf(w, "%s %s\t%s\tRefCount %d\tRegistrations %d\tslots in use 0b%08b\n", r.GUID, quote.Shown(r.Provider), r.Type, r.RefCount, r.Registrations, r.Mask)
			for _, s := range r.Slots {
				fmt.Fprintf(w, "  EnableInfo[%d]\tLoggerId %d\tLevel %d\tMatchAnyKeyword %s\tMatchAllKeyword %s\n", s.Slot, s.LoggerID, s.Level, s.MatchAnyKeyword, s.MatchAllKeyword)
			}
		}
	})
}

// regRow is one of the scenario's providers.
type regRow struct {
	Provider        string `json:"provider"`
	GUID            string `json:"guid"`
	Registered      bool   `json:"registered"`
	Index           uint16 `json:"index,omitempty"`
	EnableMask      uint8  `json:"enableMask"`
	GroupEnableMask uint8  `json:"groupEnableMask"`
	Flags           string `json:"flags,omitempty"`
}

func viewRegs(m *Machine, a args) error {
	if _, err := m.kernel(); err != nil {
		return err
	}
	rows := []regRow{}
	m.walked += int64(len(m.order)) // Limits.Walk
	for _, p := range m.order {
		r := regRow{Provider: p.name, GUID: p.g.String()}
		if e := p.reg; e != nil {
			r.Registered, r.Index, r.EnableMask, r.GroupEnableMask, r.Flags = true, e.Index(), e.EnableMask(), e.GroupEnableMask(), e.Flags().String()
		}
		rows = append(rows, r)
	}
	return m.show(a, rows, func(w io.Writer) {
		fmt.Fprintln(w, "Provider\tGUID\tETW_REG_ENTRY\tEnableMask\tGroupEnableMask\tFlags")
		for _, r := range rows {
			idx := "not registered"
			if r.Registered {
				idx = fmt.Sprintf("index %d", r.Index)
			}
			fmt.Fprintf(w, "%s\t%s\t%s\t0b%08b\t0b%08b\t%s\n", quote.Shown(r.Provider), r.GUID, idx, r.EnableMask, r.GroupEnableMask, r.Flags)
		}
	})
}

func viewPMC(m *Machine, a args) error {
	l, err := m.sessionNamed(a.pos[0])
	if err != nil {
		return err
	}
	s := l.PMC()
	type pmcView struct {
		Sources []string `json:"sources"`
		HookIDs []string `json:"hookIds"`
		Reads   []uint64 `json:"readsPerProcessor"`
	}
	v := pmcView{Sources: []string{}, HookIDs: []string{}, Reads: []uint64{}}
	if s != nil {
		for _, src := range s.Sources() {
			v.Sources = append(v.Sources, src.String())
		}
		for _, h := range s.HookIDs() {
			v.HookIDs = append(v.HookIDs, fmt.Sprintf("0x%04x", h))
		}
		for p := range m.k.Processors() {
			v.Reads = append(v.Reads, s.Reads(p))
		}
	}
	return m.show(a, v, func(w io.Writer) {
		if s == nil {
			fmt.Fprintf(w, "logger %d %q has no PMC support (no counter list was set)\n", l.ID(), l.Name())
			return
		}
		fmt.Fprintf(w, "logger %d %q: ETW_PMC_SUPPORT with %d counters: %s\n", l.ID(), l.Name(), len(v.Sources), strings.Join(v.Sources, ", "))
		fmt.Fprintf(w, "hook ids: %s\nreads per processor: %v\n", strings.Join(v.HookIDs, " "), v.Reads)
	})
}

// fileRow is one in-memory log file in files.
type fileRow struct {
	Name string `json:"name"`
	Size int    `json:"size"`
	// Buffers are the file's buffers in file order, the header buffer first (at most
	// maxFileBuffers of them; More counts the rest). The text view leaves them out.
	Buffers []fileBuffer `json:"buffers"`
	More    int          `json:"moreBuffers,omitempty"`
	// WrapAt is the index in Buffers of the oldest buffer after the header when the file
	// wrapped: a circular file wrapped there, and the buffers before it are newer. It is
	// 1 when the ring came round to its start: a circular file whose first buffer after
	// the header is not the session's first (SequenceNumber 1, the header buffer being
	// 0), or, finalized, holds fewer buffers than its BuffersWritten. -1 when the file
	// never wrapped.
	WrapAt int `json:"wrapAt"`
	// Err is why the buffers could not all be read, if they could not.
	Err string `json:"error,omitempty"`
}

// fileBuffer is one buffer of a log file, as its WMI_BUFFER_HEADER says.
type fileBuffer struct {
	FileOffset     int64  `json:"fileOffset"`
	Processor      uint8  `json:"processor"`
	SequenceNumber int64  `json:"sequenceNumber"`
	Filled         uint32 `json:"filled"` // WMI_BUFFER_HEADER.Offset: the bytes in use
	BufferSize     uint32 `json:"bufferSize"`
	Compressed     bool   `json:"compressed,omitempty"`
}

// maxFileBuffers bounds the buffers the files view lists per file.
const maxFileBuffers = 256

// fileRowOf reads the buffers of file name, whose bytes are data.
func fileRowOf(name string, data []byte) fileRow {
	f := fileRow{Name: name, Size: len(data), Buffers: []fileBuffer{}, WrapAt: -1}
	rd, err := etl.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		f.Err = err.Error()
		return f
	}
	for {
		b, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			f.Err = err.Error()
			break
		}
		if len(f.Buffers) == maxFileBuffers {
			f.More++
			continue
		}
		f.Buffers = append(f.Buffers, fileBuffer{FileOffset: b.FileOffset, Processor: b.Header.ProcessorNumber, SequenceNumber: b.Header.SequenceNumber,
			Filled: b.Header.Offset, BufferSize: b.Header.BufferSize, Compressed: b.Compressed})
	}
	oldest := -1
	for i := 1; i < len(f.Buffers); i++ {
		if oldest < 0 || f.Buffers[i].SequenceNumber < f.Buffers[oldest].SequenceNumber {
			oldest = i
		}
	}
	h := rd.Header()
	came := h.LogFileMode&uint32(logmode.Circular) != 0 && oldest == 1 &&
		(f.Buffers[1].SequenceNumber > 1 || h.EndTime != 0 && rd.BuffersRead() < int(h.BuffersWritten))
	if oldest > 1 || came {
		f.WrapAt = oldest
	}
	return f
}

func viewFiles(m *Machine, a args) error {
	if _, err := m.kernel(); err != nil {
		return err
	}
	files := []fileRow{}
	if m.fs != nil {
		for _, n := range m.fs.Names() {
			if !a.json() {
				size, _ := m.fs.Size(n)
				files = append(files, fileRow{Name: n, Size: int(size)})
				continue
			}
			data, _ := m.fs.ReadFile(n)
			files = append(files, fileRowOf(n, data))
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Name < files[j].Name })
	return m.show(a, files, func(w io.Writer) {
		for _, f := range files {
			fmt.Fprintf(w, "%s\t%d bytes\n", quote.Shown(f.Name), f.Size)
		}
	})
}
