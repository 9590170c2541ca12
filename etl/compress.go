package etl

import (
	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// compressRule is how a version's logger counts and recovers in compressed mode (Geoff
// Chappell, "ETW_UM_LOGGER_CONTEXT", on the user-mode logger's compression buffer).
type compressRule struct {
	// perBuffer: a flush from the compression area counts the trace buffers it completes
	// in the logger's BuffersWritten (6.3 on, which tracks their number); else it counts
	// one buffer written or lost whatever it held (6.2).
	//
	// The file's header counts the trace buffers the file holds in every version: the real
	// Windows 8 files at hand (build 9200, compressed on relogging, in PerfView's test data:
	// net.4.5.2.x86.etl and net.4.5.2.x64.etl) say BuffersWritten 276 and 360 and hold 276
	// and 360 buffers, the header buffer included, where counting flushes would give about
	// 70. [UNCERTAIN] how 6.2 comes to write that count while its logger counts flushes
	// (Geoff Chappell, "ETW_UM_LOGGER_CONTEXT"); etwemu keeps both, so on 6.2 the session's
	// BuffersWritten and the file header's differ.
	perBuffer bool
	// resetOnFailure: a failed flush loses every whole trace buffer in the area, keeping
	// only the overflow of a buffer whose head is already in the file (6.3 on); 6.2 keeps
	// the area as it was.
	resetOnFailure bool
}

var compressionRules = winver.Steps[compressRule]{
	{Since: winver.V5_0, Value: compressRule{}}, // compression needs 6.2; the mode table refuses it before
	{Since: winver.V6_3, Value: compressRule{perBuffer: true, resetOnFailure: true}},
}

// span is one compressed trace buffer's bytes in the area; start < 0 marks the overflow
// of a buffer whose head is already in the file.
type span struct {
	start, end int
	events     uint64 // its EVENT_HEADER records, what losing it costs (Result.EventsLost)
}

// compressor is the compression area of Geoff Chappell's "ETW_UM_LOGGER_CONTEXT": a
// buffer the size of two trace buffers into which successive trace buffers are
// compressed ever deeper. Whenever a trace
// buffer's worth has accumulated, that much is flushed (counted, and given its place in
// the file), and the overflow moves down to become a partial trace buffer at the start of
// the area. Windows writes each flush as it is; etwemu's writes end at whole buffers
// (see flush and the Writer's doc). On disk
// each compressed trace buffer is its WMI_BUFFER_HEADER, with ETW_BUFFER_FLAG_COMPRESSED
// and BufferSize set to the bytes it takes in the file, then the XPRESS stream of its
// data; Offset keeps the uncompressed filled bytes. A buffer compression does not shrink
// is stored whole, as sealed.
//
// The framing is that of real compressed files: PerfView's test data holds three, written
// on relogging by builds 9200 (net.4.5.2.x86.etl, net.4.5.2.x64.etl) and 22000
// (Regression/SelfDescribingSingleEvent.etl), whose every data buffer has BufferSize the
// bytes it takes in the file (buffers follow each other at unaligned offsets),
// ETW_BUFFER_FLAG_COMPRESSED with PROC_INDEX, SavedOffset and Offset the uncompressed
// fill, and trace format 2.0; etl.Reader and dissect.etl read them whole. Their header
// buffer is not stored whole: it takes 512 bytes (9200) or 1024 (22000) in the file,
// with CurrentOffset 0 and only the flush marker, where etwemu stores all BufferSize
// bytes of it. [UNCERTAIN] whether a session, rather than the relogger, writes it so;
// the kernel logger's compression (1607 on) is modelled the same way.
type compressor struct {
	rule    compressRule
	size    int    // the trace buffer size: one flush
	area    []byte // the bytes waiting, capacity two trace buffers
	spans   []span // the trace buffers in the area, oldest first
	table   [1 << xpHashBits]int32
	scratch []byte
	// held is the head of the buffer the area's overflow ends (the span with start < 0):
	// flushed as far as the model counts, at the file offset w.pos-len(held), but not yet
	// written, so that every write ends where a compressed buffer ends. Empty when the
	// area holds no overflow.
	held []byte
	out  []byte // one write: held, then whole buffers; capacity two trace buffers

	bytesIn, bytesOut int64 // data bytes compressed and bytes stored, for the ratio
}

func newCompressor(bufSize uint32, rule compressRule) *compressor {
	n := int(bufSize)
	return &compressor{rule: rule, size: n, area: make([]byte, 0, 2*n), scratch: make([]byte, 0, n+n/8+64),
		held: make([]byte, 0, n), out: make([]byte, 0, 2*n)}
}

// pack returns the on-disk form of one sealed buffer.
func (c *compressor) pack(buf []byte) []byte {
	h, _ := abi.DecodeBufferHeader(buf)
	end := int(h.Offset)
	out := append(c.scratch[:0], buf[:abi.BufferHeaderSize]...)
	out = xpressCompress(out, buf[abi.BufferHeaderSize:end], &c.table)
	c.scratch = out[:0]
	c.bytesIn += int64(end - abi.BufferHeaderSize)
	if len(out) >= end {
		c.bytesOut += int64(len(buf))
		return buf
	}
	h.BufferSize = uint32(len(out))
	h.BufferFlag |= abi.BufferFlagCompressed
	h.Encode(out)
	c.bytesOut += int64(len(out))
	return out
}

// add compresses buf into the area and flushes every whole trace buffer's worth.
func (c *compressor) add(w *Writer, buf []byte) Result {
	rec := c.pack(buf)
	events := EventsIn(buf)
	var r Result
	if w.limit > 0 && w.pos+int64(len(c.area)+len(rec)) > w.limit {
		if w.mode&modeNewFile == 0 {
			w.full = true
			return Result{Lost: 1, EventsLost: events, Err: winerr.New(winerr.ErrLogFileFull, "log file %q reached MaximumFileSize (%d bytes)", w.name, w.limit)}
		}
		r = w.NextFile()
		if w.f == nil {
			r.Lost++
			r.EventsLost += events
			return r
		}
	}
	if len(c.area)+len(rec) > cap(c.area) {
		// Only after a 6.2 flush failed and kept the area: try again first.
		r.add(c.flush(w, false))
		if len(c.area)+len(rec) > cap(c.area) {
			r.Lost++
			r.EventsLost += events
			return r
		}
	}
	start := len(c.area)
	c.area = append(c.area, rec...)
	c.spans = append(c.spans, span{start, len(c.area), events})
	r.add(c.flush(w, false))
	return r
}

func (r *Result) add(o Result) {
	r.Written += o.Written
	r.Lost += o.Lost
	r.EventsLost += o.EventsLost
	if r.Err == nil {
		r.Err = o.Err
	}
}

// drain flushes what the area holds, a partial chunk included.
func (c *compressor) drain(w *Writer) Result { return c.flush(w, true) }

// discard empties the area for good (the session stops) and returns what that loses by
// the version's count: each trace buffer still there (6.3 on; a failed flush keeps the
// overflow of a buffer whose head it wrote, for the next flush, and none follows), or
// one flush's worth (6.2, which counts flushes), and the events they held, every one
// of them whatever the count.
func (c *compressor) discard() (lost int, events uint64) {
	lost = len(c.spans)
	if !c.rule.perBuffer {
		lost = min(lost, 1)
	}
	for _, s := range c.spans {
		events += s.events
	}
	c.area, c.spans, c.held = c.area[:0], c.spans[:0], c.held[:0]
	return lost, events
}

// flush takes the area a trace buffer's worth at a time while it holds that much (and,
// with all, the rest too), as the logger flushes it, and writes each such flush to the
// file in one write call that ends where a compressed buffer ends: the whole buffers the
// flush completes, after the held head of the first of them if an earlier flush cut it.
// The head of a buffer the flush cuts is held until the flush that completes it. So the
// file on disk ends at a whole buffer whenever the process stops, even by SIGKILL, while
// the counting (BuffersWritten, the file offsets, what a failed flush costs) is the
// flush-by-flush rule's; see the Writer's doc.
func (c *compressor) flush(w *Writer, all bool) Result {
	var r Result
	for len(c.area) >= c.size || (all && len(c.area) > 0) {
		n := min(c.size, len(c.area))
		done, whole := 0, 0
		for _, s := range c.spans {
			if s.end <= n {
				done++
				whole = s.end
			}
		}
		if whole > 0 {
			off := w.pos - int64(len(c.held))
			c.out = append(append(c.out[:0], c.held...), c.area[:whole]...)
			if err := w.writeAt(c.out, off); err != nil {
				r.Err = err
				if !c.rule.resetOnFailure {
					r.Lost++
					return r
				}
				keep, kept := 0, uint64(0)
				for _, s := range c.spans {
					if s.start < 0 {
						keep, kept = s.end, s.events
					} else {
						r.Lost++
						r.EventsLost += s.events
					}
				}
				c.area = c.area[:keep]
				c.spans = c.spans[:0]
				if keep > 0 {
					c.spans = append(c.spans, span{-1, keep, kept})
				}
				return r
			}
			w.hwm = max(w.hwm, off+int64(len(c.out)))
			c.held = c.held[:0]
		}
		c.held = append(c.held, c.area[whole:n]...)
		w.pos += int64(n)
		w.written += done
		if c.rule.perBuffer {
			r.Written += done
		} else {
			r.Written++
		}
		c.area = c.area[:copy(c.area, c.area[n:])]
		kept := c.spans[:0]
		for _, s := range c.spans[done:] {
			kept = append(kept, span{s.start - n, s.end - n, s.events})
		}
		c.spans = kept
	}
	return r
}

// Ratio returns the data bytes compressed and the bytes stored for them.
func (w *Writer) Ratio() (in, out int64) {
	if w.comp == nil {
		return 0, 0
	}
	return w.comp.bytesIn, w.comp.bytesOut
}
