package main

import (
	"bufio"
	"container/heap"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/pmc"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/tracelogging"
)

func runDump(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dump", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON lines: the file header, then one object per record (or per summary row)")
	limit := fs.Int("limit", 0, "stop after this many records, or buffers with -buffers (0: all)")
	payload := fs.Int("payload", 32, "payload bytes to show in hex per record (0 to 65535)")
	summary := fs.Bool("summary", false, "instead of the records, one row per provider (or kernel hook) and event id: count, bytes, first and last time, as tracerpt -summary")
	buffers := fs.Bool("buffers", false, "instead of the records, one row per buffer: its WMI_BUFFER_HEADER as stored (offsets, sequence, processor, flags, type) and its record count")
	order := fs.String("sort", "file", "record order: file (buffer by buffer, as stored) or time (the processors' buffer streams merged by timestamp, one buffer per processor in memory)")
	about := "Usage: etwemu dump [flags] FILE.etl\n\nPrints an ETL file's header and its records: files etwemu writes (any mode,\ncompressed too) and Windows files for the header kinds the reader knows.\nFlags come before the file.\n\nA damaged file (cut short, a bad record, a buffer that does not decompress)\nprints everything that could be read, then the damage on stderr, and exits 1:\na bad record costs the rest of its buffer, not the file. Work is bounded by the\nfile's size: compressed buffers expand to at most the file's BufferSize each and\n32 times their stored bytes in all.\n\n  etwemu dump -limit 10 FILE.etl     the header and the first ten records\n  etwemu dump -summary FILE.etl      events per provider and id\n  etwemu dump -buffers FILE.etl      every buffer's header, one row each\n  etwemu dump -json FILE.etl | jq .  one JSON object per line"
	if code := parseFlags(fs, about, "FILE.etl", args, stdout, stderr); code >= 0 {
		return code
	}
	b := bounds{fs: fs}
	b.int("limit", int64(*limit), 0, math.MaxInt32, "0 means every record")
	b.int("payload", int64(*payload), 0, abi.MaxEventSize, "")
	if *summary && b.given("payload") {
		b.fail("-payload has no effect with -summary, which prints no payloads")
	}
	if *buffers && (*summary || b.given("payload") || b.given("sort")) {
		b.fail("-buffers prints one row per buffer: it takes neither -summary, -payload nor -sort")
	}
	if *order != "file" && *order != "time" {
		b.fail("-sort %q: file or time", *order)
	}
	if code := b.done(stderr); code >= 0 {
		return code
	}
	o := dumpOptions{json: *asJSON, limit: *limit, payload: *payload, summary: *summary, byTime: *order == "time"}
	run := dump
	if *buffers {
		run = dumpBuffers
	}
	// Output goes through one buffer: a line per record written straight to a terminal or
	// pipe would cost a system call each.
	w := bufio.NewWriterSize(stdout, 64<<10)
	err := run(fs.Arg(0), o, w)
	if ferr := w.Flush(); err == nil {
		err = ferr
	}
	if err != nil {
		// A damaged file's error comes after what could be read of it, printed above.
		fmt.Fprintf(stderr, "etwemu dump: %v\n", err)
		return 1
	}
	return 0
}

// dumpOptions are dump's flags.
type dumpOptions struct {
	json    bool
	limit   int // records to read; 0 for all
	payload int // payload bytes to show per record
	summary bool
	byTime  bool // -sort time: print the records merged by timestamp
}

// dumpHeader is the file header as dump prints it.
type dumpHeader struct {
	Logger          string `json:"logger"`
	File            string `json:"file"`
	OS              string `json:"os"`
	Build           uint32 `json:"build"`
	TraceFormat     string `json:"trace_format"`
	Processors      uint32 `json:"processors"`
	BufferSize      uint32 `json:"buffer_size"`
	LogFileMode     string `json:"log_file_mode"`
	MaximumFileSize uint32 `json:"maximum_file_size"`
	BuffersWritten  uint32 `json:"buffers_written"`
	EventsLost      uint32 `json:"events_lost"`
	BuffersLost     uint32 `json:"buffers_lost"`
	Clock           string `json:"clock"`
	PerfFreq        int64  `json:"perf_freq"`
	Start           string `json:"start"`
	End             string `json:"end,omitempty"`
}

// dumpRecord is one record as dump prints it.
type dumpRecord struct {
	Buffer     int      `json:"buffer"`
	Processor  int      `json:"cpu"`
	Sequence   int64    `json:"buffer_seq"`
	Offset     int      `json:"offset"`
	Kind       string   `json:"kind"`
	Size       int      `json:"size"`
	Provider   string   `json:"provider,omitempty"`
	Name       string   `json:"provider_name,omitempty"` // from the record's provider traits, or a kernel event class
	ID         *uint16  `json:"id,omitempty"`
	Version    uint8    `json:"version,omitempty"`
	Level      uint8    `json:"level,omitempty"`
	Opcode     uint8    `json:"opcode,omitempty"`
	Task       uint16   `json:"task,omitempty"`
	Keyword    string   `json:"keyword,omitempty"`
	HookID     string   `json:"hook,omitempty"`
	HookName   string   `json:"hook_name,omitempty"`
	Detail     string   `json:"detail,omitempty"`
	ThreadID   uint32   `json:"tid"`
	ProcessID  uint32   `json:"pid"`
	TimeStamp  int64    `json:"timestamp"`
	Time       string   `json:"time,omitempty"`
	Activity   string   `json:"activity,omitempty"`
	Ext        []string `json:"ext,omitempty"`
	PMC        []uint64 `json:"pmc,omitempty"`
	PayloadLen int      `json:"payload_len"`
	Payload    string   `json:"payload,omitempty"`
	Marker     string   `json:"marker,omitempty"`
	// A TraceLogging event's name and fields, decoded from its EVENT_SCHEMA_TL item.
	Event       string      `json:"event,omitempty"`
	Fields      []dumpField `json:"fields,omitempty"`
	FieldsText  string      `json:"-"`
	DecodeError string      `json:"decode_error,omitempty"`
}

// dumpField is one TraceLogging field as dump -json prints it (see jsonValue).
type dumpField struct {
	Name  string `json:"name"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

// noteBufferCount says when the file holds another number of buffers than its header's
// BuffersWritten, which outside readers that trust the field stop at (or read past).
func noteBufferCount(out io.Writer, read int, h etl.LogfileHeader) {
	if uint32(read) == h.BuffersWritten {
		return
	}
	why := ""
	switch m := logmode.Mode(h.LogFileMode); {
	case h.EndTime == 0:
		why = ": the header was never finalized (EndTime 0), as in the file of a session still running when it was copied; Windows fills in BuffersWritten when the session stops"
	case m&logmode.Circular != 0:
		why = ": a circular file's header counts every buffer the session wrote, the overwritten ones too"
	}
	fmt.Fprintf(out, "the file holds %d buffers, the header says BuffersWritten %d%s; readers that trust BuffersWritten read it short or past its end\n", read, h.BuffersWritten, why)
}

// hookDetail decodes the payload of the EventTrace records that the header buffer carries
// besides the log-file header itself (printed in full above the records); "" for others.
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

// fileTimeLayout is RFC 3339 with the seven fractional digits of a FILETIME's 100 ns
// ticks, trailing zeros kept, so that times line up in columns.
const fileTimeLayout = "2006-01-02T15:04:05.0000000Z07:00"

func fileTime(ft int64) string {
	if ft <= 0 {
		return ""
	}
	return clock.FromFileTime(ft).Format(fileTimeLayout)
}

func dump(path string, o dumpOptions, out io.Writer) error {
	asJSON, limit, payload := o.json, o.limit, o.payload
	f, enc, err := openWithHeader(path, asJSON, out)
	if err != nil {
		return err
	}
	defer f.Close()
	h := f.Header()
	hb := f.HeaderBuffer()
	// Timestamps to wall time: StartTime + (ts - the header event's clock) / PerfFreq.
	toTime := func(ts int64) string { return "" }
	if h.PerfFreq > 0 && h.ReservedFlags == uint32(clock.QPC) {
		var base, lastTS int64
		lastTime := ""
		toTime = func(ts int64) string {
			if ts != lastTS || lastTime == "" { // records in a row often share a tick
				lastTS, lastTime = ts, fileTime(h.StartTime+int64(float64(ts-base)*1e7/float64(h.PerfFreq)))
			}
			return lastTime
		}
		it := hb.Iter() // the header buffer: its first record's clock is the start
		if r, ok := it.Next(); ok {
			base = r.TimeStamp
		}
	}
	n, nh, buffers := 0, 0, -1 // buffer 0 is the header buffer; nh counts its records
	names := providerNames{}
	var last *etl.Buffer
	sum := summary{rows: map[summaryKey]*summaryRow{}}
	errStop := errors.New("limit")
	visit := func(b *etl.Buffer, r etl.Record) error {
		if limit > 0 && n >= limit {
			return errStop
		}
		n++
		if b != last {
			last = b
			buffers++
		}
		d := dumpRecord{
			Buffer: buffers, Processor: bufferProcessor(b.Header), Sequence: b.Header.SequenceNumber,
			Offset: r.Offset, Kind: r.Kind.String(), Size: r.Size, ThreadID: r.ThreadID, ProcessID: r.ProcessID,
			TimeStamp: r.TimeStamp, PMC: r.PMC, PayloadLen: len(r.Payload),
		}
		if !o.summary {
			d.Time = toTime(r.TimeStamp)
		}
		switch r.Kind {
		case etl.KindEventHeader:
			e := r.Event
			d.Provider, d.Name = names.text(e.ProviderID), names.learn(e.ProviderID, r.Ext)
			id := e.Descriptor.ID
			d.ID, d.Version, d.Level, d.Opcode, d.Task = &id, e.Descriptor.Version, e.Descriptor.Level, e.Descriptor.Opcode, e.Descriptor.Task
			d.Keyword = "0x" + strconv.FormatUint(e.Descriptor.Keyword, 16)
			if !e.ActivityID.IsZero() {
				d.Activity = e.ActivityID.String()
			}
		case etl.KindSystem, etl.KindCompact, etl.KindPerfInfo:
			d.HookID = fmt.Sprintf("%#04x", r.HookID)
			d.HookName, d.Detail = hookName(r.HookID), hookDetail(r.HookID, r.Payload)
		case etl.KindFullHeader, etl.KindInstance:
			d.Provider, d.Name = names.text(r.Provider), names.learn(r.Provider, r.Ext)
		case etl.KindUnknown:
			d.Marker = fmt.Sprintf("%#08x", r.Marker)
		}
		if o.summary {
			sum.add(&d)
			return nil
		}
		for _, x := range r.Ext {
			d.Ext = append(d.Ext, fmt.Sprintf("%s(%d bytes)", abi.ExtTypeName(x.Type), len(x.Data)))
			if x.Type == abi.ExtTypeEventSchemaTL {
				decodeTraceLogging(&d, x.Data, r.Payload)
			}
		}
		p := r.Payload
		if len(p) > payload {
			p = p[:payload]
		}
		d.Payload = hex.EncodeToString(p)
		return printRecord(out, enc, asJSON, &d)
	}
	err = hb.Records(func(r etl.Record) error { return visit(hb, r) })
	nh = n
	if err == nil {
		if o.byTime {
			err = mergeByTime(f.Reader, func(i int, b *etl.Buffer, r etl.Record) error {
				last, buffers = b, i // the buffer's number in file order
				return visit(b, r)
			})
		} else {
			err = f.Walk(visit)
		}
	}
	if err == errStop {
		err = nil
	}
	// A damaged file: print what was read, as for a whole file, then return the damage.
	var damage *etl.DamageError
	if errors.As(err, &damage) {
		err = nil
	}
	if err != nil {
		return err
	}
	if o.summary {
		if err := sum.print(out, asJSON, n, nh, toTime, names); err != nil {
			return err
		}
	} else if !asJSON {
		fmt.Fprintf(out, "\n%d records (%d in the header buffer)\n", n, nh)
	}
	if !asJSON && limit == 0 && damage == nil {
		noteBufferCount(out, f.BuffersRead(), h)
	}
	if damage != nil {
		return damage
	}
	return nil
}

// mergeMemory bounds the buffer data dump -sort time holds at once: one buffer per
// processor, each up to its filled bytes. A file whose processors' largest buffers
// together need more is refused before any record is printed.
const mergeMemory = 64 << 20

// mergeHeld is the most buffer data the last merge held at once (for tests).
var mergeHeld int

// mergeByTime calls fn for every record after the header buffer, the processors' records
// merged by timestamp: each processor's buffers come in sequence in the file, so the
// merge indexes the buffers by processor (headers only, nothing decompressed) and then
// takes the earliest record of one current buffer per processor. Ties go to the earlier
// buffer in the file, then the earlier record, as file order has them. It returns fn's
// error, or what the reader returns at the end (nil or its *etl.DamageError).
func mergeByTime(rd *etl.Reader, fn func(int, *etl.Buffer, etl.Record) error) error {
	streams := map[int]*mergeStream{}
	var order []*mergeStream
	fill := map[int]int{} // the largest filled bytes of each processor's buffers
	var end error
	for i := 0; ; i++ {
		b, err := rd.NextHeader()
		if err != nil {
			if err != io.EOF {
				end = err
			}
			break
		}
		if b.FileOffset == 0 {
			continue
		}
		p := bufferProcessor(b.Header)
		s := streams[p]
		if s == nil {
			s = &mergeStream{}
			streams[p] = s
			order = append(order, s)
		}
		s.offs = append(s.offs, b.FileOffset)
		s.idxs = append(s.idxs, i)
		fill[p] = max(fill[p], int(min(b.Header.Offset, uint32(max(rd.Header().BufferSize, uint32(b.Stored))))))
	}
	need := 0
	for _, f := range fill {
		need += f
	}
	if need > mergeMemory {
		return fmt.Errorf("%s: -sort time would hold one buffer per processor, %d processors' buffers of %d bytes in all, more than its bound of %d MB: use -sort file", rd.Name(), len(streams), need, mergeMemory>>20)
	}
	h := mergeHeap{}
	held := 0
	mergeHeld = 0
	for _, s := range order {
		if s.advance(rd, &held) {
			h = append(h, s)
		}
	}
	heap.Init(&h)
	for len(h) > 0 && !rd.Stopped() {
		s := h[0]
		if err := fn(s.idx, s.b, s.r); err != nil {
			return err
		}
		if s.step(rd, &held) {
			heap.Fix(&h, 0)
		} else {
			heap.Pop(&h)
		}
	}
	if end == nil || rd.Stopped() {
		end = rd.Err()
	}
	return end
}

// mergeStream is one processor's buffers, in file order, and the record it is at.
type mergeStream struct {
	offs []int64 // its buffers' file offsets, those still to read
	idxs []int   // and their numbers in file order (the header buffer is 0)
	idx  int     // the number of b
	b    *etl.Buffer
	it   etl.RecordIter
	r    etl.Record
}

// step moves to the stream's next record, reading its next buffer when one ends; false
// when the stream has no more.
func (s *mergeStream) step(rd *etl.Reader, held *int) bool {
	if r, ok := s.it.Next(); ok {
		s.r = r
		return true
	}
	return s.advance(rd, held)
}

// advance reads the stream's next buffer with a record; false when none is left.
func (s *mergeStream) advance(rd *etl.Reader, held *int) bool {
	if s.b != nil {
		*held -= len(s.b.Data)
		s.b = nil
	}
	for len(s.offs) > 0 {
		b, err := rd.ReadBuffer(s.offs[0])
		s.idx = s.idxs[0]
		s.offs, s.idxs = s.offs[1:], s.idxs[1:]
		if err != nil {
			continue // counted in the reader's damage report
		}
		s.b, s.it = b, b.Iter()
		*held += len(b.Data)
		mergeHeld = max(mergeHeld, *held)
		if r, ok := s.it.Next(); ok {
			s.r = r
			return true
		}
		*held -= len(b.Data)
		s.b = nil
	}
	return false
}

// mergeHeap orders streams by their current record's timestamp, then file position.
type mergeHeap []*mergeStream

func (h mergeHeap) Len() int { return len(h) }
func (h mergeHeap) Less(i, j int) bool {
	a, b := h[i], h[j]
	if a.r.TimeStamp != b.r.TimeStamp {
		return a.r.TimeStamp < b.r.TimeStamp
	}
	if a.b.FileOffset != b.b.FileOffset {
		return a.b.FileOffset < b.b.FileOffset
	}
	return a.r.Offset < b.r.Offset
}
func (h mergeHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *mergeHeap) Push(x any)   { *h = append(*h, x.(*mergeStream)) }
func (h *mergeHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// hookName names a system record's hook: the EventTrace record it is, or its kernel event
// class and type ("Thread type 0x24"); "" for a group without a known class.
func hookName(hook uint16) string {
	if n := etl.HookName(hook); n != "" {
		return n
	}
	if id, ok := pmc.ClassicEventIDOf(uint32(hook)); ok {
		return fmt.Sprintf("%s type %#02x", pmc.KernelClassName(id.EventGUID), id.Type)
	}
	return ""
}

// printRecord prints one record as a text line or a JSON line. The text line is built in
// one reused buffer and written once: dump prints millions of them.
func printRecord(out io.Writer, enc *json.Encoder, asJSON bool, d *dumpRecord) error {
	l := lineBuf[:0]
	if asJSON {
		l = appendRecordJSON(l, d)
		if cap(l) <= 64<<10 {
			lineBuf = l
		}
		_, err := out.Write(l)
		return err
	}
	l = append(l, "cpu "...)
	l = strconv.AppendInt(l, int64(d.Processor), 10)
	l = append(l, " seq "...)
	l = strconv.AppendInt(l, d.Sequence, 10)
	l = append(l, " +0x"...)
	l = strconv.AppendInt(l, int64(d.Offset), 16)
	l = append(append(l, ' '), d.Kind...)
	if d.Provider != "" {
		l = append(append(l, ' '), d.Provider...)
	}
	if d.Name != "" {
		l = append(append(append(l, " ("...), d.Name...), ')')
	}
	if d.ID != nil {
		l = fmt.Appendf(l, " id %d v%d level %d opcode %d task %d kw %s", *d.ID, d.Version, d.Level, d.Opcode, d.Task, d.Keyword)
	}
	if d.HookID != "" {
		l = append(append(l, " hook "...), d.HookID...)
	}
	if d.HookName != "" {
		l = append(append(l, ' '), d.HookName...)
	}
	if d.Marker != "" {
		l = append(append(append(l, " marker "...), d.Marker...), " (unknown kind; rest of buffer skipped)"...)
	}
	l = append(l, " tid "...)
	l = strconv.AppendUint(l, uint64(d.ThreadID), 10)
	l = append(l, " pid "...)
	l = strconv.AppendUint(l, uint64(d.ProcessID), 10)
	l = append(l, " ts "...)
	l = strconv.AppendInt(l, d.TimeStamp, 10)
	if d.Time != "" {
		l = append(append(l, ' '), d.Time...)
	}
	if len(d.Ext) > 0 {
		l = fmt.Appendf(l, " ext %v", d.Ext)
	}
	if len(d.PMC) > 0 {
		l = fmt.Appendf(l, " pmc %v", d.PMC)
	}
	if d.Detail != "" {
		l = append(append(append(l, " ("...), d.Detail...), ')')
	}
	if d.Event != "" {
		l = fmt.Appendf(l, " event %q {%s}", d.Event, d.FieldsText)
	}
	if d.DecodeError != "" {
		l = append(append(append(l, " (TraceLogging fields not decoded: "...), d.DecodeError...), ')')
	}
	l = append(l, " payload "...)
	l = strconv.AppendInt(l, int64(d.PayloadLen), 10)
	l = append(l, " bytes "...)
	l = append(append(l, d.Payload...), '\n')
	if cap(l) <= 64<<10 {
		lineBuf = l
	}
	_, err := out.Write(l)
	return err
}

// lineBuf is printRecord's line, reused (dump runs on one goroutine).
var lineBuf = make([]byte, 0, 512)

// jsonValue is a field's value for dump -json: numbers, bools and strings as JSON values
// (an array as a JSON array of them), except where the field's types ask for another
// reading (hexadecimal, addresses, JSON text...); those, structs, times, GUIDs and
// binary as dump's text shows them.
func jsonValue(f tracelogging.Field) any {
	one := func(v any) any {
		switch v.(type) {
		case string, bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float32, float64:
			plain := f.Out == tracelogging.OutDefault || f.Out == tracelogging.OutUTF8 || f.Out == tracelogging.OutBoolean
			if plain && f.In != tracelogging.InHexInt32 && f.In != tracelogging.InHexInt64 {
				return v
			}
		}
		return tracelogging.Field{In: f.In, Out: f.Out, Value: v}.Text()
	}
	if elems, ok := f.Value.([]any); ok && f.Array {
		out := make([]any, len(elems))
		for i, v := range elems {
			out[i] = one(v)
		}
		return out
	}
	return one(f.Value)
}

// decodeTraceLogging fills d's event name and fields from a TraceLogging schema and the
// record's payload.
func decodeTraceLogging(d *dumpRecord, schema, payload []byte) {
	sc, err := tracelogging.ParseSchema(schema)
	if err != nil {
		d.DecodeError = err.Error()
		return
	}
	d.Event = sc.Name
	fields, err := sc.Decode(payload)
	if err != nil {
		d.DecodeError = err.Error()
	}
	d.FieldsText = tracelogging.Text(fields)
	for _, f := range fields {
		typ := f.In.String()
		if f.Array {
			typ += "[]"
		}
		d.Fields = append(d.Fields, dumpField{Name: f.Name, Type: typ, Value: jsonValue(f)})
	}
}

// providerNames maps provider GUIDs to names: the kernel event classes, every name a
// record's EVENT_HEADER_EXT_TYPE_PROV_TRAITS item gives (TraceLogging providers send
// their traits, whose first field is the provider's name), the providers etwemu's
// commands register; and to their text form, computed once per provider.
type providerNames map[guid.GUID]*providerName

type providerName struct{ name, text string }

// maxProviders bounds the providers whose names dump keeps: a hostile file can give every
// record a provider of its own. Past it, the map starts over (names learned from traits
// are then forgotten).
const maxProviders = 1 << 12

func (p providerNames) get(g guid.GUID) *providerName {
	n := p[g]
	if n == nil {
		if len(p) >= maxProviders {
			clear(p)
		}
		name := pmc.KernelClassName(g)
		if name == "" {
			name = registeredName(g)
		}
		n = &providerName{name: name, text: g.String()}
		p[g] = n
	}
	return n
}

// text returns g as text.
func (p providerNames) text(g guid.GUID) string { return p.get(g).text }

// learn returns the name of provider g, reading it from ext's provider traits if they
// carry one, else from the names already known, a kernel event class or a provider
// etwemu's commands register, else "".
func (p providerNames) learn(g guid.GUID, ext []etl.ExtItem) string {
	n := p.get(g)
	for _, x := range ext {
		if x.Type == abi.ExtTypeProvTraits {
			if t, err := regentry.ParseTraits(x.Data); err == nil && t.Name != "" {
				n.name = t.Name
			}
		}
	}
	return n.name
}

// registeredName returns the name under which etwemu's own commands register provider g
// (the demo's providers, whose GUIDs are their names hashed as TraceLogging names are), or
// "": their events carry no traits to name them.
func registeredName(g guid.GUID) string {
	for _, d := range demoProviders {
		if guid.FromName(d.name) == g {
			return d.name
		}
	}
	return ""
}

// summaryKey groups records: by provider and event id for EVENT_HEADER events, by hook id
// for kernel (system, compact, perfinfo) records, by kind for the rest.
type summaryKey struct {
	Kind     string
	Provider string
	ID       int // event id, or -1
	Hook     string
}

// summaryRow is one line of dump -summary (print gives it its JSON form).
type summaryRow struct {
	summaryKey
	Count, Bytes uint64
	First, Last  int64 // timestamps
}

type summary struct {
	rows map[summaryKey]*summaryRow
}

func (s *summary) add(d *dumpRecord) {
	k := summaryKey{Kind: d.Kind, Provider: d.Provider, ID: -1, Hook: d.HookID}
	if d.ID != nil {
		k.ID = int(*d.ID)
	}
	r := s.rows[k]
	if r == nil {
		r = &summaryRow{summaryKey: k, First: d.TimeStamp, Last: d.TimeStamp}
		s.rows[k] = r
	}
	r.Count++
	r.Bytes += uint64(d.Size)
	r.First, r.Last = min(r.First, d.TimeStamp), max(r.Last, d.TimeStamp)
}

// print writes the rows sorted by kind, provider, hook and id, as a table or JSON lines.
// Providers show by name where a record's traits or the kernel's event classes give one,
// kernel hooks by their EventTrace record or event class.
func (s *summary) print(out io.Writer, asJSON bool, records, header int, toTime func(int64) string, names providerNames) error {
	nameOf := func(r *summaryRow) (provider, hook string) {
		if r.Provider != "" {
			if g, err := guid.Parse(r.Provider); err == nil {
				provider = names.learn(g, nil)
			}
		}
		if r.Hook != "" {
			if v, err := strconv.ParseUint(r.Hook, 0, 16); err == nil {
				hook = hookName(uint16(v))
			}
		}
		return provider, hook
	}
	rows := make([]*summaryRow, 0, len(s.rows))
	for _, r := range s.rows {
		rows = append(rows, r)
	}
	sort.Slice(rows, func(i, j int) bool {
		a, b := rows[i].summaryKey, rows[j].summaryKey
		if a.Kind != b.Kind {
			return a.Kind < b.Kind
		}
		if a.Provider != b.Provider {
			return a.Provider < b.Provider
		}
		if a.Hook != b.Hook {
			return a.Hook < b.Hook
		}
		return a.ID < b.ID
	})
	if asJSON {
		enc := json.NewEncoder(out)
		for _, r := range rows {
			j := struct {
				Kind      string `json:"kind"`
				Provider  string `json:"provider,omitempty"`
				Name      string `json:"provider_name,omitempty"`
				ID        *int   `json:"id,omitempty"`
				Hook      string `json:"hook,omitempty"`
				HookName  string `json:"hook_name,omitempty"`
				Count     uint64 `json:"count"`
				Bytes     uint64 `json:"bytes"`
				First     int64  `json:"first_timestamp"`
				Last      int64  `json:"last_timestamp"`
				FirstTime string `json:"first_time,omitempty"`
				LastTime  string `json:"last_time,omitempty"`
			}{Kind: r.Kind, Provider: r.Provider, Hook: r.Hook, Count: r.Count, Bytes: r.Bytes, First: r.First, Last: r.Last,
				FirstTime: toTime(r.First), LastTime: toTime(r.Last)}
			j.Name, j.HookName = nameOf(r)
			if r.ID >= 0 {
				j.ID = &r.ID
			}
			if err := enc.Encode(j); err != nil {
				return err
			}
		}
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tprovider or hook\tid\tevents\tbytes\tfirst\tlast\t")
	var events, bytes uint64
	for _, r := range rows {
		who, id := r.Provider, "-"
		pname, hname := nameOf(r)
		switch {
		case pname != "":
			who = pname
		case hname != "":
			who = hname
		case r.Hook != "":
			who = "hook " + r.Hook
		}
		if r.ID >= 0 {
			id = fmt.Sprint(r.ID)
		}
		first, last := toTime(r.First), toTime(r.Last)
		if first == "" {
			first, last = fmt.Sprint(r.First), fmt.Sprint(r.Last)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t\n", r.Kind, who, id, r.Count, r.Bytes, first, last)
		events += r.Count
		bytes += r.Bytes
	}
	tw.Flush()
	fmt.Fprintf(out, "\n%d records in %d groups (%d in the header buffer), %d bytes\n", records, len(rows), header, bytes)
	if events != uint64(records) {
		return fmt.Errorf("summary counted %d records, the walk %d", events, records)
	}
	return nil
}

// openWithHeader opens an ETL file and prints its log-file header (printHeader); the
// caller closes the file.
func openWithHeader(path string, asJSON bool, out io.Writer) (*etl.File, *json.Encoder, error) {
	f, err := etl.Open(path)
	if err != nil {
		return nil, nil, err
	}
	enc := json.NewEncoder(out)
	if err := printHeader(out, enc, asJSON, f.Header()); err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, enc, nil
}

// printHeader prints the log-file header as dump's first lines, or its first JSON line.
func printHeader(out io.Writer, enc *json.Encoder, asJSON bool, h etl.LogfileHeader) error {
	dh := dumpHeader{
		Logger: h.LoggerName, File: h.LogFileName, OS: fmt.Sprintf("%d.%d", h.MajorVersion, h.MinorVersion), Build: h.ProviderVersion,
		TraceFormat: fmt.Sprintf("%d.%d", h.SubVersion, h.SubMinorVersion), Processors: h.NumberOfProcessors, BufferSize: h.BufferSize,
		LogFileMode: logmode.Mode(h.LogFileMode).Short(), MaximumFileSize: h.MaximumFileSize, BuffersWritten: h.BuffersWritten,
		EventsLost: h.EventsLost, BuffersLost: h.BuffersLost, Clock: clock.Type(h.ReservedFlags).String(), PerfFreq: h.PerfFreq,
		Start: fileTime(h.StartTime), End: fileTime(h.EndTime),
	}
	if asJSON {
		return enc.Encode(dh)
	}
	fmt.Fprintf(out, "logger %q, file %q\n", dh.Logger, dh.File)
	fmt.Fprintf(out, "Windows %s build %d, trace format %s, %s, buffers of %d bytes, mode %s\n",
		dh.OS, dh.Build, dh.TraceFormat, plural(int(dh.Processors), "processor"), dh.BufferSize, dh.LogFileMode)
	end := dh.End
	if h.EndTime == 0 {
		end = "none (the header was never finalized: the session had not stopped, or was killed)"
	}
	fmt.Fprintf(out, "buffers written %d, events lost %d, buffers lost %d, clock %s (%d Hz), start %s, end %s\n\n",
		dh.BuffersWritten, dh.EventsLost, dh.BuffersLost, dh.Clock, dh.PerfFreq, dh.Start, end)
	return nil
}

// bufferProcessor returns the processor a buffer was written on: ETW_BUFFER_CONTEXT's
// ProcessorIndex (ProcessorNumber and Alignment as one 11-bit number) when the buffer has
// ETW_BUFFER_FLAG_PROC_INDEX, else ProcessorNumber.
func bufferProcessor(h abi.BufferHeader) int {
	if h.BufferFlag&abi.BufferFlagProcIndex == 0 {
		return int(h.ProcessorNumber)
	}
	return (int(h.ProcessorNumber) | int(h.Alignment)<<8) & 0x7FF
}

// dumpBuffer is one buffer's WMI_BUFFER_HEADER as stored, as dump -buffers prints it.
type dumpBuffer struct {
	Buffer        int    `json:"buffer"`
	FileOffset    int64  `json:"file_offset"`
	Sequence      int64  `json:"seq"`
	Processor     int    `json:"cpu"`
	BufferSize    uint32 `json:"buffer_size"`
	SavedOffset   uint32 `json:"saved_offset"`
	CurrentOffset uint32 `json:"current_offset"`
	Offset        uint32 `json:"offset"`
	Flags         string `json:"flags"`
	Type          string `json:"type"`
	State         string `json:"state"`
	TimeStamp     int64  `json:"timestamp"`
	Records       int    `json:"records"`
	Compressed    bool   `json:"compressed,omitempty"`
}

// dumpBuffers prints the file header and then one row (or JSON line) per buffer, the
// header buffer first, in file order. Rows are printed as they are read, in columns of
// fixed width, so nothing is held but the buffer being read.
func dumpBuffers(path string, o dumpOptions, out io.Writer) error {
	f, enc, err := openWithHeader(path, o.json, out)
	if err != nil {
		return err
	}
	defer f.Close()
	h := f.Header()
	const row = "%6s %12s %8s %4s %10s %11s %13s %10s %7s  %s  %s\n"
	if !o.json {
		fmt.Fprintf(out, row, "buffer", "file offset", "seq", "cpu", "BufferSize", "SavedOffset", "CurrentOffset", "Offset", "records", "flags", "type")
	}
	n := 0
	var damage error
	for ; o.limit == 0 || n < o.limit; n++ {
		b, err := f.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			damage = err
			break
		}
		x := b.Header
		d := dumpBuffer{
			Buffer: n, FileOffset: b.FileOffset, Sequence: x.SequenceNumber, Processor: bufferProcessor(x),
			BufferSize: x.BufferSize, SavedOffset: x.SavedOffset, CurrentOffset: x.CurrentOffset, Offset: x.Offset,
			Flags: abi.BufferFlagNames(x.BufferFlag), Type: abi.BufferTypeName(x.BufferType), State: x.State.String(),
			TimeStamp: x.TimeStamp, Compressed: b.Compressed,
		}
		// A bad record ends the count; the reader reports the buffer with the damage.
		for it := b.Iter(); ; d.Records++ {
			if _, ok := it.Next(); !ok {
				break
			}
		}
		if o.json {
			if err := enc.Encode(d); err != nil {
				return err
			}
			continue
		}
		// The row of the header line's format, without fmt: one per buffer, millions
		// in a file of small buffers.
		l := lineBuf[:0]
		col := func(width int, v []byte) {
			for i := len(v); i < width; i++ {
				l = append(l, ' ')
			}
			l = append(append(l, v...), ' ')
		}
		var num [24]byte
		dec := func(v int64) []byte { return strconv.AppendInt(num[:0], v, 10) }
		hx := func(v int64) []byte { return strconv.AppendInt(append(num[:0], '0', 'x'), v, 16) }
		col(6, dec(int64(d.Buffer)))
		col(12, hx(d.FileOffset))
		col(8, dec(d.Sequence))
		col(4, dec(int64(d.Processor)))
		col(10, hx(int64(d.BufferSize)))
		col(11, hx(int64(d.SavedOffset)))
		col(13, hx(int64(d.CurrentOffset)))
		col(10, hx(int64(d.Offset)))
		col(7, dec(int64(d.Records)))
		l = append(append(append(append(append(l, ' '), d.Flags...), ' ', ' '), d.Type...), '\n')
		lineBuf = l[:0]
		if _, err := out.Write(l); err != nil {
			return err
		}
	}
	if !o.json {
		fmt.Fprintf(out, "\n%d buffers\n", n)
		if o.limit == 0 && damage == nil {
			noteBufferCount(out, f.BuffersRead(), h)
		}
	}
	return damage
}

// appendRecordJSON appends d as one JSON object, as encoding/json encodes dumpRecord (its
// tags and omitempty rules), without reflection: dump -json prints millions of records.
// The TraceLogging fields, whose values are of any type, go through encoding/json.
func appendRecordJSON(l []byte, d *dumpRecord) []byte {
	num := func(l []byte, key string, v int64) []byte {
		return strconv.AppendInt(append(append(l, ",\""...), key...), v, 10)
	}
	str := func(l []byte, key, v string) []byte {
		if v == "" {
			return l
		}
		return appendJSONString(append(append(append(l, ",\""...), key...), "\":"...), v)
	}
	l = strconv.AppendInt(append(l, `{"buffer":`...), int64(d.Buffer), 10)
	l = num(l, `cpu":`, int64(d.Processor))
	l = num(l, `buffer_seq":`, d.Sequence)
	l = num(l, `offset":`, int64(d.Offset))
	l = appendJSONString(append(l, `,"kind":`...), d.Kind)
	l = num(l, `size":`, int64(d.Size))
	l = str(l, "provider", d.Provider)
	l = str(l, "provider_name", d.Name)
	if d.ID != nil {
		l = num(l, `id":`, int64(*d.ID))
	}
	for _, f := range []struct {
		key string
		v   int64
	}{{`version":`, int64(d.Version)}, {`level":`, int64(d.Level)}, {`opcode":`, int64(d.Opcode)}, {`task":`, int64(d.Task)}} {
		if f.v != 0 {
			l = num(l, f.key, f.v)
		}
	}
	l = str(l, "keyword", d.Keyword)
	l = str(l, "hook", d.HookID)
	l = str(l, "hook_name", d.HookName)
	l = str(l, "detail", d.Detail)
	l = num(l, `tid":`, int64(d.ThreadID))
	l = num(l, `pid":`, int64(d.ProcessID))
	l = num(l, `timestamp":`, d.TimeStamp)
	l = str(l, "time", d.Time)
	l = str(l, "activity", d.Activity)
	if len(d.Ext) > 0 {
		l = append(l, `,"ext":[`...)
		for i, x := range d.Ext {
			if i > 0 {
				l = append(l, ',')
			}
			l = appendJSONString(l, x)
		}
		l = append(l, ']')
	}
	if len(d.PMC) > 0 {
		l = append(l, `,"pmc":[`...)
		for i, v := range d.PMC {
			if i > 0 {
				l = append(l, ',')
			}
			l = strconv.AppendUint(l, v, 10)
		}
		l = append(l, ']')
	}
	l = num(l, `payload_len":`, int64(d.PayloadLen))
	l = str(l, "payload", d.Payload)
	l = str(l, "marker", d.Marker)
	l = str(l, "event", d.Event)
	if len(d.Fields) > 0 {
		if b, err := json.Marshal(d.Fields); err == nil {
			l = append(append(l, `,"fields":`...), b...)
		}
	}
	l = str(l, "decode_error", d.DecodeError)
	return append(l, "}\n"...)
}

// appendJSONString appends s as a JSON string: quotes, backslashes and control characters
// escaped, invalid UTF-8 replaced by U+FFFD, as encoding/json writes strings.
func appendJSONString(l []byte, s string) []byte {
	const hexDigits = "0123456789abcdef"
	l = append(l, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				l = append(l, '\\', c)
			case c < 0x20 || c == '<' || c == '>' || c == '&':
				l = append(l, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&15])
			default:
				l = append(l, c)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			l = append(l, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			l = append(l, '\\', 'u', '2', '0', '2', hexDigits[r&15])
		default:
			l = append(l, s[i:i+n]...)
		}
		i += n
	}
	return append(l, '"')
}
