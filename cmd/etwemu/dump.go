package main

import (
	"bufio"
	"cmp"
	"container/heap"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/decode"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/internal/quote"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/tracelogging"
)

func runDump(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("dump", flag.ContinueOnError)
	asJSON := fs.Bool("json", false, "print JSON lines: the file header, then one object per record (or per summary row)")
	limit := fs.Int("limit", 0, "stop after this many records, or buffers with -buffers (0: all)")
	payload := fs.Int("payload", 32, "payload bytes to show in hex per record (0 to 65535)")
	summary := fs.Bool("summary", false, "instead of the records, one row per provider (or kernel hook) and event id: count, bytes, first and last time, as tracerpt -summary")
	buffers := fs.Bool("buffers", false, "instead of the records, one row per buffer: its WMI_BUFFER_HEADER as stored (offsets, sequence, processor, flags, type) and its record count")
	order := fs.String("sort", "file", "record order: file (buffer by buffer, as stored) or time (the processors' buffer streams merged by timestamp, holding one buffer per processor and an index of 16 bytes a buffer; for files of at most 2,097,152 buffers, 128 GB of 64 KB buffers)")
	about := "Usage: etwemu dump [flags] FILE.etl\n\nPrints an ETL file's header and its records: files etwemu writes (any mode,\ncompressed too) and Windows files for the header kinds the reader knows.\nFlags come before the file.\n\nA damaged file (cut short, a bad record or one of a kind the reader does not\nknow, a buffer that does not decompress) prints everything that could be read,\nthen the damage on stderr, and exits 1: a bad record costs the rest of its\nbuffer, not the file. Work is bounded by the file's size: compressed buffers\nexpand to at most the file's BufferSize each and, in all, to 4 GB or 32 times\ntheir stored bytes, whichever is more.\n\n  etwemu dump -limit 10 FILE.etl     the header and the first ten records\n  etwemu dump -summary FILE.etl      events per provider and id\n  etwemu dump -buffers FILE.etl      every buffer's header, one row each\n  etwemu dump -json FILE.etl | jq .  one JSON object per line"
	if code := parseFlags(fs, about, "FILE.etl", args, stdout, stderr); code >= 0 {
		return code
	}
	b := bounds{fs: fs}
	b.int("limit", int64(*limit), 0, math.MaxInt32, "0 means every record")
	b.int("payload", int64(*payload), 0, abi.MaxEventSize, "")
	if *summary && b.given("payload") {
		b.fail("-payload has no effect with -summary, which prints no payloads")
	}
	if *summary && b.given("sort") {
		b.fail("-sort has no effect with -summary, which counts the records per group whatever their order")
	}
	if *buffers && (*summary || b.given("payload") || b.given("sort")) {
		b.fail("-buffers prints one row per buffer: it takes neither -summary, -payload nor -sort")
	}
	if *order != "file" && *order != "time" {
		b.fail("-sort %s: file or time", quote.Short(*order))
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
	TraceFormat     string `json:"traceFormat"`
	Processors      uint32 `json:"processors"`
	BufferSize      uint32 `json:"bufferSize"`
	LogFileMode     string `json:"logFileMode"`
	MaximumFileSize uint32 `json:"maximumFileSize"`
	BuffersWritten  uint32 `json:"buffersWritten"`
	EventsLost      uint32 `json:"eventsLost"`
	BuffersLost     uint32 `json:"buffersLost"`
	Clock           string `json:"clock"`
	PerfFreq        int64  `json:"perfFreq"`
	Start           string `json:"start"`
	End             string `json:"end,omitempty"`
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

func fileTime(ft int64) string {
	if ft <= 0 {
		return ""
	}
	return clock.FromFileTime(ft).Format(decode.TimeLayout)
}

func dump(path string, o dumpOptions, out io.Writer) error {
	asJSON, limit := o.json, o.limit
	f, _, err := openWithHeader(path, asJSON, out)
	if err != nil {
		return err
	}
	defer f.Close()
	h := f.Header()
	hb := f.HeaderBuffer()
	dec := decode.New()
	dec.Clock, dec.Names, dec.HeadersOnly = f.Clock(), registeredName, o.summary
	n, nh, buffers := 0, 0, -1 // buffer 0 is the header buffer; nh counts its records
	var last *etl.Buffer
	var ev decode.Event
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
		dec.Decode(b, r, &ev)
		ev.Buffer = buffers
		if o.summary {
			sum.add(&ev)
			return nil
		}
		return printRecord(out, dec, asJSON, o.payload, &ev)
	}
	err = hb.Records(func(r etl.Record) error { return visit(hb, r) })
	nh = n
	if bad := (*etl.RecordError)(nil); errors.As(err, &bad) {
		// A bad record costs the rest of the header buffer, as of any buffer: the reader
		// counts it, and the damage is reported after every buffer that reads.
		err = nil
	}
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
		if err := sum.print(out, asJSON, n, nh); err != nil {
			return err
		}
	} else if !asJSON {
		fmt.Fprintf(out, "\n%s (%d in the header buffer)\n", quote.Count(n, "record"), nh)
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

// mergeIndexMax bounds the buffers dump -sort time indexes (16 bytes each, their file
// offsets and numbers): a file of more is refused, rather than indexed in memory that
// grows with the file (a 151 MB file of 2.1 million empty buffers took 150 MB).
var mergeIndexMax = 1 << 21 // a variable for tests

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
		if i > mergeIndexMax {
			return fmt.Errorf("%s: -sort time indexes every buffer of the file, and it has more than %d: use -sort file", rd.Name(), mergeIndexMax)
		}
		p := b.Header.ProcessorIndex()
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

// printRecord prints one event as a text line or a JSON line (the decode package's
// JSON). The line is built in one reused buffer and written once: dump prints millions.
func printRecord(out io.Writer, dec *decode.Decoder, asJSON bool, payload int, e *decode.Event) error {
	l := lineBuf[:0]
	if asJSON {
		l = dec.AppendJSON(l, e, payload)
		if cap(l) <= 64<<10 {
			lineBuf = l
		}
		_, err := out.Write(l)
		return err
	}
	l = append(l, "cpu "...)
	l = strconv.AppendInt(l, int64(e.Processor), 10)
	l = append(l, " seq "...)
	l = strconv.AppendInt(l, e.Sequence, 10)
	l = append(l, " +0x"...)
	l = strconv.AppendInt(l, int64(e.Offset), 16)
	l = append(append(l, ' '), e.Kind.String()...)
	switch e.Kind {
	case etl.KindEventHeader, etl.KindFullHeader, etl.KindInstance:
		l = e.Provider.Append(append(l, ' '))
		if e.ProviderName != "" {
			l = append(append(append(l, " ("...), quote.Printable(e.ProviderName)...), ')') // the file's bytes: one record, one line
		}
	}
	if e.Kind == etl.KindEventHeader {
		d := e.Event.Descriptor
		l = fmt.Appendf(l, " id %d v%d level %d opcode %d task %d kw %#x", d.ID, d.Version, d.Level, d.Opcode, d.Task, d.Keyword)
	}
	switch e.Kind {
	case etl.KindSystem, etl.KindCompact, etl.KindPerfInfo:
		l = fmt.Appendf(l, " hook %#04x", e.HookID)
		if e.HookName != "" {
			l = append(append(l, ' '), e.HookName...)
		}
	case etl.KindUnknown:
		l = fmt.Appendf(l, " marker %#08x (unknown kind; rest of buffer skipped)", e.Marker)
	}
	l = append(l, " tid "...)
	l = strconv.AppendUint(l, uint64(e.ThreadID), 10)
	l = append(l, " pid "...)
	l = strconv.AppendUint(l, uint64(e.ProcessID), 10)
	l = append(l, " ts "...)
	l = strconv.AppendInt(l, e.TimeStamp, 10)
	if t := dec.TimeText(e); t != "" {
		l = append(append(l, ' '), t...)
	}
	if len(e.Ext) > 0 {
		l = append(l, " ext ["...)
		for i, x := range e.Ext {
			if i > 0 {
				l = append(l, ' ')
			}
			l = append(l, decode.ExtText(x)...)
		}
		l = append(l, ']')
	}
	if len(e.PMC) > 0 {
		l = fmt.Appendf(l, " pmc %v", e.PMC)
	}
	if e.Detail != "" {
		l = append(append(append(l, " ("...), e.Detail...), ')')
	}
	if e.Name != "" {
		l = fmt.Appendf(l, " event %q {%s}", e.Name, tracelogging.Text(e.Fields))
	}
	if e.DecodeError != "" {
		l = append(append(append(l, " (TraceLogging fields not decoded: "...), e.DecodeError...), ')')
	}
	l = append(l, " payload "...)
	l = strconv.AppendInt(l, int64(len(e.Payload)), 10)
	l = append(l, " bytes "...)
	l = hex.AppendEncode(l, e.Payload[:min(len(e.Payload), payload)])
	l = append(l, '\n')
	if cap(l) <= 64<<10 {
		lineBuf = l
	}
	_, err := out.Write(l)
	return err
}

// lineBuf is printRecord's line, reused (dump runs on one goroutine).
var lineBuf = make([]byte, 0, 512)

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
	Kind     etl.Kind
	Provider guid.GUID
	ID       int // event id, or -1
	Hook     int // hook id, or -1
}

// summaryRow is one line of dump -summary (print gives it its JSON form).
type summaryRow struct {
	summaryKey
	Name, HookName string // the provider's name as the decoder last gave it; the hook's
	Count, Bytes   uint64
	First, Last    time.Time
	FirstTS        int64 // timestamps, where the file gives no time
	LastTS         int64
}

type summary struct {
	rows map[summaryKey]*summaryRow
	// other sums the records of the groups past the first maxSummaryGroups, once rows
	// holds that many: a file whose every record names a provider of its own would
	// otherwise need a row per record (others says some were summed).
	other  summaryRow
	others bool
}

// maxSummaryGroups bounds the groups dump -summary keeps a row for.
const maxSummaryGroups = 10000

func (s *summary) add(e *decode.Event) {
	k := summaryKey{Kind: e.Kind, ID: -1, Hook: -1}
	switch e.Kind {
	case etl.KindEventHeader:
		k.Provider, k.ID = e.Provider, int(e.Event.Descriptor.ID)
	case etl.KindFullHeader, etl.KindInstance:
		k.Provider = e.Provider
	case etl.KindSystem, etl.KindCompact, etl.KindPerfInfo:
		k.Hook = int(e.HookID)
	}
	r := s.rows[k]
	switch {
	case r != nil:
	case len(s.rows) >= maxSummaryGroups:
		r = &s.other
		if !s.others {
			s.others = true
			*r = summaryRow{summaryKey: summaryKey{ID: -1, Hook: -1}, First: e.Time, Last: e.Time, FirstTS: e.TimeStamp, LastTS: e.TimeStamp}
		}
	default:
		r = &summaryRow{summaryKey: k, First: e.Time, Last: e.Time, FirstTS: e.TimeStamp, LastTS: e.TimeStamp}
		s.rows[k] = r
	}
	if r != &s.other {
		r.Name, r.HookName = e.ProviderName, e.HookName
	}
	r.Count++
	r.Bytes += uint64(e.Size)
	r.FirstTS, r.LastTS = min(r.FirstTS, e.TimeStamp), max(r.LastTS, e.TimeStamp)
	if !e.Time.IsZero() {
		if r.First.IsZero() || e.Time.Before(r.First) {
			r.First = e.Time
		}
		if e.Time.After(r.Last) {
			r.Last = e.Time
		}
	}
}

// who is what a summary row is about: the provider's name, else its GUID; the hook's
// EventTrace record or kernel event class, else "hook 0x...".
func (r *summaryRow) who() string {
	switch {
	case r.Name != "":
		return quote.Printable(r.Name)
	case r.Provider != guid.Null:
		return r.Provider.String()
	case r.HookName != "":
		return r.HookName
	case r.Hook >= 0:
		return fmt.Sprintf("hook %#04x", r.Hook)
	}
	return ""
}

// print writes the rows sorted by kind, then by what they are about (providers by name
// where a record's traits or the kernel's event classes give one, else by GUID; kernel
// hooks by their EventTrace record or event class), then id, as a table or JSON lines.
func (s *summary) print(out io.Writer, asJSON bool, records, header int) error {
	type sorted struct {
		*summaryRow
		who string // the row's who, worked out once
	}
	rows := make([]sorted, 0, len(s.rows))
	for _, r := range s.rows {
		rows = append(rows, sorted{r, r.who()})
	}
	slices.SortFunc(rows, func(a, b sorted) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), strings.Compare(a.who, b.who), cmp.Compare(a.Hook, b.Hook), cmp.Compare(a.ID, b.ID))
	})
	otherText := fmt.Sprintf("the groups past the first %d", maxSummaryGroups)
	timeText := func(t time.Time, ts int64) string {
		if t.IsZero() {
			return strconv.FormatInt(ts, 10)
		}
		return t.UTC().Format(decode.TimeLayout)
	}
	if asJSON {
		enc := json.NewEncoder(out)
		for _, r := range rows {
			j := struct {
				Kind           string `json:"kind"`
				Provider       string `json:"provider,omitempty"`
				Name           string `json:"providerName,omitempty"`
				ID             *int   `json:"id,omitempty"`
				Hook           *int   `json:"hookId,omitempty"`
				HookName       string `json:"hookName,omitempty"`
				Count          uint64 `json:"count"`
				Bytes          uint64 `json:"bytes"`
				FirstTimeStamp int64  `json:"firstTimeStamp"`
				LastTimeStamp  int64  `json:"lastTimeStamp"`
				FirstTime      string `json:"firstTime,omitempty"`
				LastTime       string `json:"lastTime,omitempty"`
			}{Kind: r.Kind.String(), Name: r.Name, HookName: r.HookName, Count: r.Count, Bytes: r.Bytes,
				FirstTimeStamp: r.FirstTS, LastTimeStamp: r.LastTS}
			if r.Provider != guid.Null {
				j.Provider = r.Provider.String()
			}
			if r.ID >= 0 {
				j.ID = &r.ID
			}
			if r.Hook >= 0 {
				j.Hook = &r.Hook
			}
			if !r.First.IsZero() {
				j.FirstTime, j.LastTime = timeText(r.First, 0), timeText(r.Last, 0)
			}
			if err := enc.Encode(j); err != nil {
				return err
			}
		}
		if s.others {
			o := &s.other
			return enc.Encode(struct {
				Kind           string `json:"kind"`
				About          string `json:"about"`
				Count          uint64 `json:"count"`
				Bytes          uint64 `json:"bytes"`
				FirstTimeStamp int64  `json:"firstTimeStamp"`
				LastTimeStamp  int64  `json:"lastTimeStamp"`
			}{"other", otherText, o.Count, o.Bytes, o.FirstTS, o.LastTS})
		}
		return nil
	}
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tprovider or hook\tid\tevents\tbytes\tfirst\tlast\t")
	var events, bytes uint64
	for _, r := range rows {
		id := "-"
		if r.ID >= 0 {
			id = strconv.Itoa(r.ID)
		}
		first, last := timeText(r.First, r.FirstTS), timeText(r.Last, r.LastTS)
		if r.Kind == etl.KindUnknown {
			first, last = "-", "-" // a record of a kind the reader does not know: no timestamp read
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t\n", r.Kind, r.who, id, r.Count, r.Bytes, first, last)
		events += r.Count
		bytes += r.Bytes
	}
	if o := &s.other; s.others {
		fmt.Fprintf(tw, "other\t%s\t-\t%d\t%d\t%s\t%s\t\n", otherText, o.Count, o.Bytes, timeText(o.First, o.FirstTS), timeText(o.Last, o.LastTS))
		events += o.Count
		bytes += o.Bytes
	}
	tw.Flush()
	fmt.Fprintf(out, "\n%s in %s (%d in the header buffer), %s\n", quote.Count(records, "record"), quote.Count(len(rows), "group"), header, quote.Count(bytes, "byte"))
	if s.others {
		fmt.Fprintf(out, "(dump -summary keeps a row for %d groups; the records of the others are summed in the row \"other\")\n", maxSummaryGroups)
	}
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
		dh.OS, dh.Build, dh.TraceFormat, quote.Count(dh.Processors, "processor"), dh.BufferSize, dh.LogFileMode)
	start, end := dh.Start, dh.End
	if start == "" {
		start = fmt.Sprintf("none (StartTime %d is no time)", h.StartTime)
	}
	switch {
	case h.EndTime == 0:
		end = "none (the header was never finalized: the session had not stopped, or was killed)"
	case end == "":
		end = fmt.Sprintf("none (EndTime %d is no time)", h.EndTime)
	}
	fmt.Fprintf(out, "buffers written %d, events lost %d, buffers lost %d, clock %s (%d Hz), start %s, end %s\n\n",
		dh.BuffersWritten, dh.EventsLost, dh.BuffersLost, dh.Clock, dh.PerfFreq, start, end)
	return nil
}

// dumpBuffer is one buffer's WMI_BUFFER_HEADER as stored, as dump -buffers prints it.
type dumpBuffer struct {
	Buffer        int    `json:"buffer"`
	FileOffset    int64  `json:"fileOffset"`
	Sequence      int64  `json:"sequence"`
	Processor     int    `json:"processor"`
	BufferSize    uint32 `json:"bufferSize"`
	SavedOffset   uint32 `json:"savedOffset"`
	CurrentOffset uint32 `json:"currentOffset"`
	Offset        uint32 `json:"offset"`
	Flags         string `json:"flags"`
	Type          string `json:"type"`
	State         string `json:"state"`
	TimeStamp     int64  `json:"timeStamp"`
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
			Buffer: n, FileOffset: b.FileOffset, Sequence: x.SequenceNumber, Processor: x.ProcessorIndex(),
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
		fmt.Fprintf(out, "\n%s\n", quote.Count(n, "buffer"))
		if o.limit == 0 && damage == nil {
			noteBufferCount(out, f.BuffersRead(), h)
		}
	}
	return damage
}
