package etl

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/klauspost/compress/xpress"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/layout"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

const testBuf = 4096

var testProvider = guid.MustParse("{3b9f2c4e-8a41-4d6e-9a0f-7c1d2e3f4a5b}")

func testInfo(v winver.Version, mode, maxSize uint32) HeaderInfo {
	return HeaderInfo{
		Version: v, LoggerName: "etl test", LoggerID: 3, Processors: 2, ClockType: 1,
		PerfFreq: 10_000_000, StartTime: 133_000_000_000_000_000, StartPerf: 5000,
		BootTime: 132_999_000_000_000_000, CPUSpeedMHz: 3000, ThreadID: 0x1010, ProcessID: 0x200,
		LogFileMode: mode, MaxFileSize: maxSize,
	}
}

// sealed builds a sealed buffer holding one EVENT_HEADER record per payload, its event id
// the payload's index plus first.
func sealed(seq int64, proc uint8, first int, payloads ...[]byte) []byte {
	b := make([]byte, testBuf)
	off := abi.BufferHeaderSize
	for i, p := range payloads {
		size := abi.EventHeaderSize + len(p)
		h := abi.EventHeader{
			Size: uint16(size), HeaderType: abi.EventHeaderEvent64, Flags: abi.EventFlag64BitHeader,
			ThreadID: 7, ProcessID: 9, TimeStamp: seq*100 + int64(i), ProviderID: testProvider,
			Descriptor: abi.EventDescriptor{ID: uint16(first + i), Level: 4},
		}
		h.Encode(b[off:])
		copy(b[off+abi.EventHeaderSize:], p)
		off += abi.Align(size)
	}
	for i := off; i < len(b); i++ {
		b[i] = 0xFF
	}
	h := abi.BufferHeader{
		BufferSize: testBuf, SavedOffset: uint32(off), CurrentOffset: uint32(off), SequenceNumber: seq,
		ProcessorNumber: proc, LoggerID: 3, State: abi.BufferStateFlush, Offset: uint32(off),
		BufferFlag: abi.BufferFlagProcIndex,
	}
	h.Encode(b)
	return b
}

// text returns n bytes of a compressible, event-like payload.
func text(r *rand.Rand, n int) []byte {
	words := []string{"provider ", "session ", "buffer ", "0x48 ", "flush ", "processor ", "lost "}
	var b []byte
	for len(b) < n {
		b = append(b, words[r.IntN(len(words))]...)
	}
	return b[:n]
}

// ids reads a file and returns the event ids of its records, in file order, with the
// buffers' sequence numbers.
func ids(t *testing.T, path string) (events []int, seqs []int64, hdr LogfileHeader) {
	t.Helper()
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	err = f.Walk(func(b *Buffer, r Record) error {
		if r.Kind != KindEventHeader {
			t.Errorf("record at %#x is %v", r.Offset, r.Kind)
		}
		if len(seqs) == 0 || seqs[len(seqs)-1] != b.Header.SequenceNumber {
			seqs = append(seqs, b.Header.SequenceNumber)
		}
		events = append(events, int(r.Event.Descriptor.ID))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return events, seqs, f.Header()
}

func TestXpressRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	inputs := map[string][]byte{
		"empty": {}, "one": {7}, "three": {1, 2, 3},
		"text":   text(r, 60000),
		"zeros":  make([]byte, 70000),             // one match past the 16-bit length
		"run300": bytes.Repeat([]byte{0xAB}, 300), // the byte-length form
		"run30":  bytes.Repeat([]byte("ab"), 15),
	}
	noise := make([]byte, 5000)
	for i := range noise {
		noise[i] = byte(r.Uint32())
	}
	inputs["noise"] = noise
	mixed := append(append(append([]byte{}, text(r, 3000)...), noise[:900]...), make([]byte, 20)...)
	inputs["mixed"] = append(mixed, text(r, 9000)...)
	var table [1 << xpHashBits]int32
	for name, in := range inputs {
		c := xpressCompress(nil, in, &table)
		out, err := xpress.AppendDecompressed(nil, c)
		if err != nil || !bytes.Equal(out, in) {
			t.Errorf("%s: %d bytes -> %d -> %d bytes, err %v", name, len(in), len(c), len(out), err)
		}
	}
	if c := xpressCompress(nil, inputs["text"], &table); len(c)*3 > len(inputs["text"]) {
		t.Errorf("text compressed only to %d of %d bytes", len(c), len(inputs["text"]))
	}
}

func FuzzXpress(f *testing.F) {
	f.Add([]byte("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"))
	f.Add([]byte{1, 2, 3, 1, 2, 3, 1, 2, 3, 4})
	var table [1 << xpHashBits]int32
	f.Fuzz(func(t *testing.T, in []byte) {
		c := xpressCompress(nil, in, &table)
		out, err := xpress.AppendDecompressed(nil, c)
		if err != nil || !bytes.Equal(out, in) {
			t.Fatalf("%x -> %x -> %x, %v", in, c, out, err)
		}
	})
}

// The header buffer carries TRACE_LOGFILE_HEADER where Windows files have it, and reads
// back field for field.
func TestHeaderBuffer(t *testing.T) {
	info := testInfo(winver.V2004, modeSequential|realTimeMode, 0)
	h := headerFor(&info, testBuf, `C:\trace\x.etl`, false)
	b, err := HeaderBuffer(&info, &h, testBuf)
	if err != nil {
		t.Fatal(err)
	}
	le := binary.LittleEndian
	if m := le.Uint32(b[0x48:]); m != SystemTraceMarker64 {
		t.Errorf("marker %#x", m)
	}
	if v := b[0x68+4 : 0x68+8]; !bytes.Equal(v, []byte{10, 0, 1, 5}) {
		t.Errorf("version bytes % x, want 0a 00 01 05 as Windows 10 writes", v)
	}
	bh, _ := abi.DecodeBufferHeader(b)
	if bh.BufferType != abi.BufferTypeHeader || bh.BufferFlag != abi.BufferFlagFlushMarker|abi.BufferFlagProcIndex {
		t.Errorf("header buffer type %d flag %#x", bh.BufferType, bh.BufferFlag)
	}
	rd, err := NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	got := rd.Header()
	want := h
	want.LogFileMode = modeSequential // REAL_TIME is dropped from the file copy
	if got != want {
		t.Errorf("read back\n%+v\nwant\n%+v", got, want)
	}
	if got.ProviderVersion != 19041 || got.PointerSize != 8 || got.ReservedFlags != 1 {
		t.Errorf("build %d pointer %d clock %d", got.ProviderVersion, got.PointerSize, got.ReservedFlags)
	}
	info.Version = winver.V5_2
	h = headerFor(&info, testBuf, "x", false)
	b, _ = HeaderBuffer(&info, &h, testBuf)
	if bh, _ := abi.DecodeBufferHeader(b); bh.BufferType != abi.BufferTypeRundown || b[0x68+4] != 5 || b[0x68+5] != 2 {
		t.Errorf("5.2 header buffer: type %d version %d.%d", bh.BufferType, b[0x68+4], b[0x68+5])
	}
}

// Buffer 0 holds what real files of the version hold (etl-parser's three Windows 10
// files): after the header event, PartitionInfoExtension from 1709, before it the
// Extension of a system logger from 1903, each stamped like the header event; the
// buffer's own clock fields are 0 from Windows 10 and the session's start before.
func TestHeaderBufferRecords(t *testing.T) {
	cases := []struct {
		v     winver.Version
		mode  uint32
		hooks []uint16
		clock bool
	}{
		{winver.V6_1, modeSequential, []uint16{hookLogfileInfo}, true},
		{winver.V6_2, modeSequential | systemLoggerMode, []uint16{hookLogfileInfo}, true},
		{winver.V10_0, modeSequential, []uint16{hookLogfileInfo}, false},
		{winver.V1709, modeSequential | systemLoggerMode, []uint16{hookLogfileInfo, HookPartitionInfo}, false},
		{winver.V2004, modeSequential, []uint16{hookLogfileInfo, HookPartitionInfo}, false},
		{winver.V2004, modeSequential | systemLoggerMode, []uint16{hookLogfileInfo, HookHeaderExtension, HookPartitionInfo}, false},
	}
	for _, c := range cases {
		info := testInfo(c.v, c.mode, 0)
		h := headerFor(&info, testBuf, "x.etl", false)
		b, err := HeaderBuffer(&info, &h, testBuf)
		if err != nil {
			t.Fatal(err)
		}
		rd, err := NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		hb := rd.HeaderBuffer()
		var hooks []uint16
		err = hb.Records(func(r Record) error {
			hooks = append(hooks, r.HookID)
			if r.Kind != KindSystem || r.ThreadID != info.ThreadID || r.ProcessID != info.ProcessID || r.TimeStamp != info.StartPerf {
				t.Errorf("%v: record %#x: kind %v tid %#x pid %#x ts %d, want the header event's", c.v, r.HookID, r.Kind, r.ThreadID, r.ProcessID, r.TimeStamp)
			}
			switch r.HookID {
			case HookHeaderExtension:
				x, err := DecodeHeaderExtension(r.Payload)
				if err != nil || x.KernelEventVersion != 70 || x.GroupMasks != [8]uint32{} || r.Size != 0x44 {
					t.Errorf("%v: Extension %+v size %#x, %v", c.v, x, r.Size, err)
				}
			case HookPartitionInfo:
				x, err := DecodePartitionInfo(r.Payload)
				if err != nil || x != (PartitionInfo{}) || r.Size != 0x50 {
					t.Errorf("%v: PartitionInfoExtension %+v size %#x, %v", c.v, x, r.Size, err)
				}
			}
			return nil
		})
		if err != nil || !slices.Equal(hooks, c.hooks) {
			t.Errorf("%v mode %#x: hooks %#x, want %#x (%v)", c.v, c.mode, hooks, c.hooks, err)
		}
		bh := hb.Header
		if bh.SavedOffset != bh.CurrentOffset || bh.Offset != bh.SavedOffset || int(bh.Offset) != hb.End() {
			t.Errorf("%v: SavedOffset %#x CurrentOffset %#x Offset %#x, records end at %#x", c.v, bh.SavedOffset, bh.CurrentOffset, bh.Offset, hb.End())
		}
		if set := bh.TimeStamp != 0 || bh.StartTime != 0 || bh.StartPerfClock != 0; set != c.clock {
			t.Errorf("%v: TimeStamp %d StartTime %d StartPerfClock %d ClockFrequency %#x, want them set: %v", c.v, bh.TimeStamp, bh.StartTime, bh.StartPerfClock, bh.ClockFrequency, c.clock)
		}
		if !c.clock && bh.ClockFrequency != 0 {
			t.Errorf("%v: ClockFrequency %#x in buffer 0", c.v, bh.ClockFrequency)
		}
	}
	// A buffer with room for the header event but not the partition record after it is
	// refused whole.
	info := testInfo(winver.V2004, modeSequential, 0)
	h := headerFor(&info, testBuf, "x.etl", false)
	room := abi.BufferHeaderSize + abi.Align(SystemHeaderSize+len(h.encode()))
	if b, err := HeaderBuffer(&info, &h, uint32(room)); err == nil || b != nil {
		t.Errorf("a %#x-byte buffer took the header records: %v", room, err)
	}
	if HookName(HookPartitionInfo) != "EventTrace/PartitionInfoExtension" || HookName(0x010a) != "" {
		t.Errorf("hook names %q %q", HookName(HookPartitionInfo), HookName(0x010a))
	}
}

// The log-file header's encoder writes every field at the catalogue's x64 offset for
// TRACE_LOGFILE_HEADER, and the header is the catalogue's size.
func TestLogfileHeaderMatchesCatalogue(t *testing.T) {
	h := LogfileHeader{
		BufferSize: 0x11111111, MajorVersion: 0x21, MinorVersion: 0x22, SubVersion: 0x23, SubMinorVersion: 0x24,
		ProviderVersion: 0x33333333, NumberOfProcessors: 0x44444444, EndTime: 0x5555555555555555,
		TimerResolution: 0x66666666, MaximumFileSize: 0x77777777, LogFileMode: 0x78787878, BuffersWritten: 0x79797979,
		StartBuffers: 0x7A7A7A7A, PointerSize: 0x7B7B7B7B, EventsLost: 0x7C7C7C7C, CPUSpeedMHz: 0x7D7D7D7D,
		TimeZoneBias: 0x7E7E7E7E, BootTime: 0x0101010101010101, PerfFreq: 0x0202020202020202,
		StartTime: 0x0303030303030303, ReservedFlags: 0x04040404, BuffersLost: 0x05050505,
	}
	b := h.encode()
	want := map[string]uint64{
		"BufferSize": 0x11111111, "MajorVersion": 0x21, "MinorVersion": 0x22, "SubVersion": 0x23, "SubMinorVersion": 0x24,
		"ProviderVersion": 0x33333333, "NumberOfProcessors": 0x44444444, "EndTime": 0x5555555555555555,
		"TimerResolution": 0x66666666, "MaximumFileSize": 0x77777777, "LogFileMode": 0x78787878, "BuffersWritten": 0x79797979,
		"StartBuffers": 0x7A7A7A7A, "PointerSize": 0x7B7B7B7B, "EventsLost": 0x7C7C7C7C, "CpuSpeedInMHz": 0x7D7D7D7D,
		"TimeZone": 0x7E7E7E7E, "BootTime": 0x0101010101010101, "PerfFreq": 0x0202020202020202,
		"StartTime": 0x0303030303030303, "ReservedFlags": 0x04040404, "BuffersLost": 0x05050505,
	}
	w := layout.LogfileHeader.At(winver.Default, layout.X64)
	if w.Size != LogfileHeaderSize {
		t.Fatalf("catalogue size %#x, LogfileHeaderSize %#x", w.Size, LogfileHeaderSize)
	}
	for name, v := range want {
		off := w.Offset(name)
		if off < 0 {
			t.Fatalf("no %s in the catalogue", name)
		}
		var got uint64
		switch {
		case v <= 0xFF:
			got = uint64(b[off])
		case v <= 0xFFFFFFFF:
			got = uint64(binary.LittleEndian.Uint32(b[off:]))
		default:
			got = binary.LittleEndian.Uint64(b[off:])
		}
		if got != v {
			t.Errorf("%s: %#x at the catalogue's offset %#x, want %#x", name, got, off, v)
		}
	}
	for name, off := range map[string]int{"EndTime": offLfhEndTime, "BuffersWritten": offLfhBuffersWritten, "EventsLost": offLfhEventsLost, "BuffersLost": offLfhBuffersLost} {
		if w.Offset(name) != off {
			t.Errorf("the finalizer patches %s at %#x, the catalogue has %#x", name, off, w.Offset(name))
		}
	}
}

func writeAll(t *testing.T, w *Writer, bufs [][]byte) (written, lost int) {
	t.Helper()
	for _, b := range bufs {
		r := w.WriteBuffer(b)
		written += r.Written
		lost += r.Lost
	}
	r := w.Flush()
	return written + r.Written, lost + r.Lost
}

func buffers(n int) [][]byte {
	r := rand.New(rand.NewPCG(3, 4))
	var out [][]byte
	for i := range n {
		out = append(out, sealed(int64(i+1), uint8(i%2), 10*i, text(r, 100+i), text(r, 700), []byte{byte(i)}))
	}
	return out
}

func TestSequentialFillsAndCounts(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "seq.etl")
	// 20 KB: the header buffer and four trace buffers of 4 KB.
	w, err := Create(Options{Path: path, BufferSize: testBuf, Info: testInfo(winver.V2004, modeSequential|modeKBytes, 20)})
	if err != nil {
		t.Fatal(err)
	}
	written, lost := writeAll(t, w, buffers(6))
	if written != 4 || lost != 2 || !w.Full() {
		t.Errorf("written %d lost %d full %v; want 4, 2, full", written, lost, w.Full())
	}
	r := w.WriteBuffer(buffers(1)[0])
	if !errors.Is(r.Err, winerr.ErrLogFileFull) {
		t.Errorf("write to a full file: %v, want ERROR_LOG_FILE_FULL", r.Err)
	}
	if err := w.Close(Counters{EventsLost: 5, BuffersLost: 3, EndTime: 42}); err != nil {
		t.Fatal(err)
	}
	events, _, h := ids(t, path)
	if len(events) != 12 || events[0] != 0 || events[11] != 32 {
		t.Errorf("events %v", events)
	}
	if h.BuffersWritten != 5 || h.EventsLost != 5 || h.BuffersLost != 3 || h.EndTime != 42 {
		t.Errorf("finalized header %+v", h)
	}
	if st, _ := os.Stat(path); st.Size() != 5*testBuf {
		t.Errorf("file size %d", st.Size())
	}
}

func TestCircularWraps(t *testing.T) {
	path := filepath.Join(t.TempDir(), "circ.etl")
	w, err := Create(Options{Path: path, BufferSize: testBuf, Info: testInfo(winver.V2004, modeCircular|modeKBytes|modePreallocate, 16)})
	if err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(path); st.Size() != 16<<10 {
		t.Errorf("preallocated size %d, want %d", st.Size(), 16<<10)
	}
	written, lost := writeAll(t, w, buffers(7))
	if written != 7 || lost != 0 {
		t.Errorf("written %d lost %d", written, lost)
	}
	w.Close(Counters{})
	// Three data slots: buffers 7, 5, 6 in file order after the wrap; the oldest four gone.
	_, seqs, h := ids(t, path)
	if len(seqs) != 3 || seqs[0] != 7 || seqs[1] != 5 || seqs[2] != 6 {
		t.Errorf("sequence numbers in file order %v, want [7 5 6]", seqs)
	}
	// BuffersWritten counts every buffer written, the overwritten ones too, as Windows'
	// finalize does (the header buffer and seven): more than the file's four slots, which
	// the reader reads whole regardless.
	if h.BuffersWritten != 8 {
		t.Errorf("BuffersWritten %d, want 8 (the header buffer and seven, four since overwritten)", h.BuffersWritten)
	}
}

func TestNewFileRollsOver(t *testing.T) {
	dir := t.TempDir()
	pattern := filepath.Join(dir, "roll_%d.etl")
	if _, err := Create(Options{Path: filepath.Join(dir, "nopattern.etl"), BufferSize: testBuf, Info: testInfo(winver.V2004, modeNewFile, 1)}); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("NEWFILE without %%d: %v", err)
	}
	w, err := Create(Options{Path: pattern, BufferSize: testBuf, Info: testInfo(winver.V2004, modeNewFile|modeKBytes, 12)})
	if err != nil {
		t.Fatal(err)
	}
	written, lost := writeAll(t, w, buffers(5))
	w.Close(Counters{})
	// 12 KB: header + 2 buffers per file; 5 buffers make files 1, 2, 3 and two more
	// header buffers.
	if written != 5+2 || lost != 0 || w.FileNumber() != 3 {
		t.Errorf("written %d lost %d file %d", written, lost, w.FileNumber())
	}
	var all []int
	for n, want := range []uint32{3, 3, 2} {
		events, _, h := ids(t, filepath.Join(dir, "roll_"+string(rune('1'+n))+".etl"))
		if h.BuffersWritten != want {
			t.Errorf("file %d: BuffersWritten %d, want %d", n+1, h.BuffersWritten, want)
		}
		all = append(all, events...)
	}
	if len(all) != 15 {
		t.Errorf("%d events over the files, want 15", len(all))
	}
}

func TestAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "app.etl")
	info := testInfo(winver.V2004, modeSequential, 0)
	w, _ := Create(Options{Path: path, BufferSize: testBuf, Info: info})
	writeAll(t, w, buffers(2))
	w.Close(Counters{})
	info.LogFileMode |= modeAppend
	w, err := Create(Options{Path: path, BufferSize: testBuf, Info: info})
	if err != nil {
		t.Fatal(err)
	}
	writeAll(t, w, buffers(3)[2:])
	w.Close(Counters{})
	events, seqs, h := ids(t, path)
	if len(events) != 9 || h.BuffersWritten != 4 || len(seqs) != 3 {
		t.Errorf("after append: %d events, BuffersWritten %d, seqs %v", len(events), h.BuffersWritten, seqs)
	}
	if _, err := Create(Options{Path: path, BufferSize: 2 * testBuf, Info: info}); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("append with another buffer size: %v", err)
	}
}

// faultFS fails the writes its fail function picks, after writing part of the bytes
// (a disk filling up mid-buffer).
type faultFS struct {
	mu   sync.Mutex
	n    int
	fail func(n int, off int64) bool
}

type faultFile struct {
	*os.File
	fs *faultFS
}

func (fs *faultFS) OpenFile(name string, flag int, perm os.FileMode) (WriteFile, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return faultFile{f, fs}, nil
}

func (f faultFile) WriteAt(b []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	f.fs.n++
	fail := f.fs.fail(f.fs.n, off)
	f.fs.mu.Unlock()
	if fail {
		n, _ := f.File.WriteAt(b[:len(b)/3], off)
		return n, errors.New("injected: no space left on device")
	}
	return f.File.WriteAt(b, off)
}

func TestWriteFaultCostsOnlyTheBuffer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fault.etl")
	fs := &faultFS{fail: func(n int, _ int64) bool { return n == 3 || n == 5 }} // write 1 is the header
	w, err := Create(Options{Path: path, BufferSize: testBuf, Info: testInfo(winver.V2004, modeSequential, 0), FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	bufs := buffers(6)
	var lostSeq []int64
	for i, b := range bufs {
		r := w.WriteBuffer(b)
		if r.Lost == 1 {
			lostSeq = append(lostSeq, int64(i+1))
			if !errors.Is(r.Err, winerr.ErrDiskFull) {
				t.Errorf("fault error %v, want ERROR_DISK_FULL", r.Err)
			}
		}
	}
	w.Close(Counters{BuffersLost: 2})
	_, seqs, h := ids(t, path)
	if len(lostSeq) != 2 || lostSeq[0] != 2 || lostSeq[1] != 4 {
		t.Errorf("lost buffers %v, want [2 4]", lostSeq)
	}
	if want := []int64{1, 3, 5, 6}; !slices.Equal(seqs, want) || h.BuffersWritten != 5 || h.BuffersLost != 2 {
		t.Errorf("read back seqs %v header %d/%d, want %v, 5 written, 2 lost", seqs, h.BuffersWritten, h.BuffersLost, want)
	}
}

// Every compressed buffer round-trips through klauspost/compress/xpress, and both
// versions' counting rules hold.
func TestCompressedRoundTrip(t *testing.T) {
	for _, v := range []winver.Version{winver.V6_2, winver.V6_3, winver.V2004} {
		path := filepath.Join(t.TempDir(), "comp.etl")
		w, err := Create(Options{Path: path, BufferSize: testBuf, Info: testInfo(v, modeSequential, 0), Compress: true})
		if err != nil {
			t.Fatal(err)
		}
		bufs := buffers(40)
		written, lost := writeAll(t, w, bufs)
		in, out := w.Ratio()
		w.Close(Counters{})
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for {
			b, err := f.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.FileOffset == 0 {
				continue
			}
			orig := bufs[n]
			if !b.Compressed || !bytes.Equal(b.Data[abi.BufferHeaderSize:], orig[abi.BufferHeaderSize:b.End()]) {
				t.Fatalf("%v: buffer %d compressed %v, data differs from the sealed buffer", v, n, b.Compressed)
			}
			n++
		}
		f.Close()
		_, _, h := ids(t, path)
		wantWritten := 40 // the logger's count, 6.3 on: trace buffers
		if v == winver.V6_2 && (written >= 40 || written < 1) {
			t.Errorf("6.2 counted %d flushes for 40 buffers", written) // 6.2: flushes of the area
		} else if v == winver.V6_2 {
			wantWritten = written
		}
		// The header counts the buffers in the file, as real Windows 8 files do.
		if n != 40 || written != wantWritten || lost != 0 || h.BuffersWritten != 41 {
			t.Errorf("%v: read %d buffers, written %d lost %d, header %d (want 41)", v, n, written, lost, h.BuffersWritten)
		}
		if h.SubVersion != 2 || out*2 > in {
			t.Errorf("%v: format %d.%d, ratio %d/%d", v, h.SubVersion, h.SubMinorVersion, out, in)
		}
	}
}

// A failed flush of the compression area: 6.2 keeps the area and retries; 6.3 loses the
// whole buffers in it but keeps a partial buffer's overflow, so the file still reads.
func TestCompressedFlushFailure(t *testing.T) {
	for _, v := range []winver.Version{winver.V6_2, winver.V6_3} {
		path := filepath.Join(t.TempDir(), "compfail.etl")
		fs := &faultFS{fail: func(n int, _ int64) bool { return n == 4 }}
		w, err := Create(Options{Path: path, BufferSize: testBuf, Info: testInfo(v, modeSequential, 0), Compress: true, FS: fs})
		if err != nil {
			t.Fatal(err)
		}
		bufs := buffers(60)
		_, lost := writeAll(t, w, bufs)
		w.Close(Counters{})
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var seqs []int64
		err = f.Walk(func(b *Buffer, r Record) error {
			if len(seqs) == 0 || seqs[len(seqs)-1] != b.Header.SequenceNumber {
				seqs = append(seqs, b.Header.SequenceNumber)
			}
			return nil
		})
		f.Close()
		if err != nil {
			t.Fatalf("%v: %v", v, err)
		}
		switch v {
		case winver.V6_2:
			if lost != 1 || len(seqs) != 60 {
				t.Errorf("6.2: lost %d, read %d buffers; want 1 counted, all 60 read after the retry", lost, len(seqs))
			}
		default:
			if lost < 1 || len(seqs) != 60-lost {
				t.Errorf("6.3: lost %d, read %d buffers; want the lost ones missing, the rest read", lost, len(seqs))
			}
		}
		for i := 1; i < len(seqs); i++ {
			if seqs[i] <= seqs[i-1] {
				t.Errorf("%v: sequence out of order: %v", v, seqs)
				break
			}
		}
	}
}

// A disk that fills under a compressed file: every buffer is in the file or counted
// lost, the one a failed flush keeps for the next (6.3 on) included, which Finish counts
// when no flush follows. Before, stop dropped it uncounted. (The in-memory disk refuses a
// write whole, as a full disk refuses the write it cannot hold.)
func TestCompressedDiskFills(t *testing.T) {
	for _, v := range []winver.Version{winver.V6_2, winver.V6_3, winver.V2004} {
		for capKB := int64(8); capKB <= 40; capKB += 2 {
			fs := &MemFS{}
			fs.SetCapacity(capKB << 10)
			w, err := Create(Options{Path: "full.etl", BufferSize: testBuf, Info: testInfo(v, modeSequential, 0), Compress: true, FS: fs})
			if err != nil {
				t.Fatal(err)
			}
			bufs := buffers(60)
			lost, events, eventsLost := 0, uint64(0), uint64(0)
			for _, b := range bufs {
				events += EventsIn(b)
				r := w.WriteBuffer(b)
				lost += r.Lost
				eventsLost += r.EventsLost
			}
			r := w.Finish()
			lost += r.Lost
			eventsLost += r.EventsLost
			w.Close(Counters{})
			data, ok := fs.ReadFile("full.etl")
			if !ok {
				t.Fatal("no full.etl")
			}
			rd, err := NewReader(bytes.NewReader(data), int64(len(data)))
			if err != nil {
				t.Fatal(err)
			}
			read, eventsRead := 0, uint64(0)
			for {
				b, err := rd.Next()
				if err != nil {
					break
				}
				if b.FileOffset != 0 {
					read++
					eventsRead += b.EventRecords()
				}
			}
			// Every event is in the file or in EventsLost, in every version; 6.2 counts
			// a failed flush as one lost buffer, whatever it held.
			if eventsRead+eventsLost != events {
				t.Errorf("%v, a %d KB disk: %d events in the file, %d counted lost, of %d (Finish: %v)", v, capKB, eventsRead, eventsLost, events, r.Err)
			}
			if v != winver.V6_2 && read+lost != len(bufs) {
				t.Errorf("%v, a %d KB disk: %d buffers in the file, %d counted lost, of %d (Finish: %v)", v, capKB, read, lost, len(bufs), r.Err)
			}
		}
	}
}

// Truncated and corrupted files give errors naming an offset, never a panic.
func TestReaderCorruptInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ok.etl")
	w, _ := Create(Options{Path: path, BufferSize: testBuf, Info: testInfo(winver.V2004, modeSequential, 0)})
	writeAll(t, w, buffers(2))
	w.Close(Counters{})
	good, _ := os.ReadFile(path)
	cases := map[string][]byte{
		"truncated header": good[:0x30],
		"truncated buffer": good[:testBuf+100],
		"bad size":         patch(good, testBuf+abi.OffBufferSize, 0x10),
		"bad offset":       patch(good, testBuf+abi.OffOffset, testBuf+8),
		"bad record size":  patch(good, testBuf+abi.BufferHeaderSize, 0xC013FFF0),
	}
	for name, b := range cases {
		rd, err := NewReader(bytes.NewReader(b), int64(len(b)))
		if err == nil {
			err = rd.Walk(func(*Buffer, Record) error { return nil })
		}
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte("offset 0x")) {
			t.Errorf("%s: %v, want an error naming the offset", name, err)
		}
	}
	// An unknown marker is delivered as a record, and the rest of its buffer, which the
	// walk cannot frame, is damage: the buffer is counted and its offset named.
	b := patch(good, testBuf+abi.BufferHeaderSize, 0x77AB0000)
	rd, _ := NewReader(bytes.NewReader(b), int64(len(b)))
	var kinds []Kind
	err := rd.Walk(func(_ *Buffer, r Record) error { kinds = append(kinds, r.Kind); return nil })
	var d *DamageError
	if len(kinds) == 0 || kinds[0] != KindUnknown || !errors.As(err, &d) || d.Lost != 1 || d.Stopped ||
		!strings.Contains(err.Error(), fmt.Sprintf("buffer at file offset %#x: offset 0x48: unknown record marker 0x77ab0000", testBuf)) {
		t.Errorf("unknown marker: kinds %v err %v", kinds, err)
	}
}

func patch(b []byte, off int, v uint32) []byte {
	c := append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(c[off:], v)
	return c
}

func FuzzReader(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.etl")
	w, _ := Create(Options{Path: path, BufferSize: testBuf, Info: testInfo(winver.V2004, modeSequential, 0), Compress: true})
	writeAll(&testing.T{}, w, buffers(3))
	w.Close(Counters{})
	seed, _ := os.ReadFile(path)
	f.Add(seed)
	f.Add(seed[:testBuf+0x60])
	for _, b := range seedFiles(f) { // every file mode and record kind, whole, cut, damaged
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		rd, err := NewReader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		_ = rd.Walk(func(b *Buffer, r Record) error {
			if r.Offset+r.Size > len(b.Data) {
				t.Fatalf("record [%#x, +%#x) outside data of %#x", r.Offset, r.Size, len(b.Data))
			}
			return nil
		})
	})
}

// BenchmarkCompress measures the compression area on event-like buffers: MB/s of trace
// buffer data in, and the ratio of data bytes to bytes stored.
func BenchmarkCompress(b *testing.B) {
	for _, kind := range []string{"text", "random"} {
		b.Run(kind, func(b *testing.B) {
			r := rand.New(rand.NewPCG(5, 6))
			bufs := make([][]byte, 16)
			for i := range bufs {
				var ps [][]byte
				for range 15 {
					p := text(r, 150)
					if kind == "random" {
						for j := range p {
							p[j] = byte(r.Uint32())
						}
					}
					ps = append(ps, p)
				}
				bufs[i] = sealed(int64(i+1), uint8(i%2), i*15, ps...)
			}
			c := newCompressor(testBuf, compressionRules.At(winver.V2004))
			data := 0
			for _, buf := range bufs {
				h, _ := abi.DecodeBufferHeader(buf)
				data += int(h.Offset) - abi.BufferHeaderSize
			}
			b.SetBytes(int64(data / len(bufs)))
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				c.pack(bufs[i%len(bufs)])
			}
			b.ReportMetric(float64(c.bytesIn)/float64(c.bytesOut), "ratio")
		})
	}
}

// BenchmarkFileWrite measures the writer on sealed buffers, uncompressed and compressed,
// into memory (the file system is not what is measured).
func BenchmarkFileWrite(b *testing.B) {
	for _, compress := range []bool{false, true} {
		b.Run(map[bool]string{false: "plain", true: "compressed"}[compress], func(b *testing.B) {
			w, err := Create(Options{Path: "bench.etl", BufferSize: testBuf, Info: testInfo(winver.V2004, modeSequential, 0), Compress: compress, FS: nullFS{}})
			if err != nil {
				b.Fatal(err)
			}
			bufs := buffers(16)
			b.SetBytes(testBuf)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				if r := w.WriteBuffer(bufs[i%len(bufs)]); r.Err != nil {
					b.Fatal(r.Err)
				}
			}
		})
	}
}

// nullFS's files keep nothing: what is measured is the writer, not a file system.
type nullFS struct{}

type nullFile struct{ memInfo }

func (nullFS) OpenFile(name string, _ int, _ os.FileMode) (WriteFile, error) {
	return nullFile{memInfo{name: name}}, nil
}
func (nullFile) ReadAt([]byte, int64) (int, error)      { return 0, io.EOF }
func (nullFile) WriteAt(b []byte, _ int64) (int, error) { return len(b), nil }
func (nullFile) Truncate(int64) error                   { return nil }
func (f nullFile) Stat() (os.FileInfo, error)           { return f.memInfo, nil }
func (nullFile) Close() error                           { return nil }

func TestBufferTime(t *testing.T) {
	const epoch = 116444736000000000
	start := int64(epoch + 10_000_000) // 1970-01-01T00:00:01Z
	b := &Buffer{Header: abi.BufferHeader{StartTime: start, StartPerfClock: 1000, ClockFrequency: abi.ClockFrequency(1, 1000)}}
	if got, ok := b.Time(1500); !ok || !got.Equal(time.Unix(1, 500_000_000)) {
		t.Errorf("QPC at 1000 Hz, 500 ticks after start: %v, %v", got, ok)
	}
	b.Header.ClockFrequency = abi.ClockFrequency(2, 10_000_000)
	if got, ok := b.Time(start + 5); !ok || !got.Equal(time.Unix(1, 500)) {
		t.Errorf("system time: %v, %v", got, ok)
	}
	b.Header.ClockFrequency = 0
	if _, ok := b.Time(1500); ok {
		t.Error("a buffer without a frequency converted a timestamp")
	}
}

// The header buffer of Windows 11 circular files (builds 22631 and 26100) carries two
// PERFINFO records past SavedOffset: EventTrace/BuildLab and EventTrace/DbgIdRsds. They
// walk as perfinfo records, are named, and decode.
func TestBuildLabAndDbgIDRecords(t *testing.T) {
	le := binary.LittleEndian
	perfinfo := func(hook uint16, payload []byte) []byte {
		r := make([]byte, perfInfoHeaderSize, abi.Align(perfInfoHeaderSize+len(payload)))
		le.PutUint32(r, flagsHeader<<24|typePerfInfo64<<16|2)
		le.PutUint16(r[4:], uint16(perfInfoHeaderSize+len(payload)))
		le.PutUint16(r[6:], hook)
		le.PutUint64(r[8:], 0x29e156d07a8)
		r = append(r, payload...)
		return append(r, bytes.Repeat([]byte{0xFF}, cap(r)-len(r))...)
	}
	sig := guid.MustParse("{30869371-f7d6-ab23-8610-af80c72ae579}")
	sb := sig.Bytes()
	rsds := append(append(sb[:], 1, 0, 0, 0), "Example.pdb\x00"...)
	data := make([]byte, abi.BufferHeaderSize)
	data = append(data, perfinfo(HookBuildLab, []byte("22621.1.amd64fre.ni_release.220506-1250\x00"))...)
	data = append(data, perfinfo(HookDbgIDRSDS, rsds)...)
	var got []string
	err := (&Buffer{Data: data}).Records(func(r Record) error {
		if r.Kind != KindPerfInfo || r.TimeStamp != 0x29e156d07a8 {
			t.Errorf("record %+v", r)
		}
		switch r.HookID {
		case HookBuildLab:
			got = append(got, HookName(r.HookID)+" "+DecodeBuildLab(r.Payload))
		case HookDbgIDRSDS:
			x, err := DecodeDbgIDRSDS(r.Payload)
			if err != nil || x.Signature != sig || x.Age != 1 {
				t.Errorf("%+v, %v", x, err)
			}
			got = append(got, HookName(r.HookID)+" "+x.PdbName)
		}
		return nil
	})
	want := []string{"EventTrace/BuildLab 22621.1.amd64fre.ni_release.220506-1250", "EventTrace/DbgIdRsds Example.pdb"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("got %q (%v), want %q", got, err, want)
	}
	if _, err := DecodeDbgIDRSDS(rsds[:20]); err == nil {
		t.Error("a DbgIdRsds payload without a name decodes")
	}
	if s := DecodeBuildLab([]byte("no terminator")); s != "no terminator" {
		t.Errorf("DecodeBuildLab without a NUL: %q", s)
	}
}

// ParseBuffer reads every record of a compressed buffer, however small it is stored: a
// buffer alone is allowed a whole BufferSize of records, as the reader allows a file one.
// (Its budget was its stored size over 8, 11 records of a 93-byte buffer.)
func TestParseBufferCompressed(t *testing.T) {
	payloads := make([][]byte, (testBuf-abi.BufferHeaderSize)/abi.EventHeaderSize)
	buf := sealed(1, 0, 0, payloads...)
	for off := abi.BufferHeaderSize; off+abi.EventHeaderSize <= testBuf; off += abi.EventHeaderSize {
		h := abi.EventHeader{Size: abi.EventHeaderSize, HeaderType: abi.EventHeaderEvent64, Flags: abi.EventFlag64BitHeader, ProviderID: testProvider}
		h.Encode(buf[off:]) // every record the same: the buffer compresses to little
	}
	stored := newCompressor(testBuf, compressionRules.At(winver.V2004)).pack(buf)
	if len(stored) >= len(buf)/4 {
		t.Fatalf("stored in %d bytes: the test needs a buffer that compresses well", len(stored))
	}
	b, err := ParseBuffer(stored)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := b.Records(func(Record) error { n++; return nil }); err != nil || n != len(payloads) {
		t.Fatalf("%d of %d records from a %d-byte compressed buffer: %v", n, len(payloads), len(stored), err)
	}
}

// Options and buffers a caller got wrong are refused with ERROR_INVALID_PARAMETER, never a
// panic or a 4 GB header buffer: a version the emulator does not know, a BufferSize
// outside [0x48, 16 MB], and, compressed or not, a buffer of another size or whose
// Offset lies outside it (each lost, counted in the Result).
func TestWriterRefusesWhatIsNotABuffer(t *testing.T) {
	for _, o := range []Options{
		{Path: "v0.etl", BufferSize: testBuf, Info: testInfo(0, modeSequential, 0)},
		{Path: "v255.etl", BufferSize: testBuf, Info: testInfo(255, modeSequential, 0)},
		{Path: "big.etl", BufferSize: 0xFFFFFFFF, Info: testInfo(winver.V2004, modeSequential, 0)},
		{Path: "small.etl", BufferSize: 0x47, Info: testInfo(winver.V2004, modeSequential, 0)},
	} {
		o.FS = &MemFS{}
		if _, err := Create(o); !errors.Is(err, winerr.ErrInvalidParameter) {
			t.Errorf("%s: %v, want ERROR_INVALID_PARAMETER", o.Path, err)
		}
	}
	if _, err := HeaderBuffer(&HeaderInfo{}, &LogfileHeader{}, testBuf); !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("HeaderBuffer of Version 0: %v", err)
	}
	zeroOffset := make([]byte, testBuf)
	pastEnd := sealed(1, 0, 0, []byte("x"))
	binary.LittleEndian.PutUint32(pastEnd[0x30:], 0xFFFFFFFF) // Offset
	for _, compress := range []bool{false, true} {
		fs := &MemFS{}
		w, err := Create(Options{Path: "w.etl", BufferSize: testBuf, Info: testInfo(winver.V2004, modeSequential, 0), Compress: compress, FS: fs})
		if err != nil {
			t.Fatal(err)
		}
		for name, buf := range map[string][]byte{"empty": nil, "short": make([]byte, 71), "long": make([]byte, 2*testBuf), "offset 0": zeroOffset, "offset past the end": pastEnd} {
			if r := w.WriteBuffer(buf); r.Lost != 1 || r.Written != 0 || !errors.Is(r.Err, winerr.ErrInvalidParameter) {
				t.Errorf("compress %v, %s buffer: %+v, want it lost with ERROR_INVALID_PARAMETER", compress, name, r)
			}
		}
		// Close without Finish writes what the compression area holds.
		if r := w.WriteBuffer(sealed(2, 0, 0, []byte("kept"))); r.Lost != 0 || r.Err != nil {
			t.Fatalf("compress %v: a sound buffer: %+v", compress, r)
		}
		if err := w.Close(Counters{}); err != nil {
			t.Fatal(err)
		}
		data, _ := fs.ReadFile("w.etl")
		rd, err := NewReader(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		if err := rd.Walk(func(*Buffer, Record) error { n++; return nil }); err != nil || n != 1 {
			t.Errorf("compress %v: %d records after Close, %v; want the one written", compress, n, err)
		}
	}
}

// ReadBuffer of an offset outside the file is the caller's mistake: ERROR_INVALID_PARAMETER,
// no damage counted, and the reader reads on.
func TestReadBufferOutsideTheFile(t *testing.T) {
	fs := &MemFS{}
	w, err := Create(Options{Path: "r.etl", BufferSize: testBuf, Info: testInfo(winver.V2004, modeSequential, 0), FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	w.WriteBuffer(sealed(1, 0, 0, []byte("a")))
	w.Close(Counters{})
	data, _ := fs.ReadFile("r.etl")
	rd, err := NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	for _, off := range []int64{-1, int64(len(data)), 1 << 32} {
		if _, err := rd.ReadBuffer(off); !errors.Is(err, winerr.ErrInvalidParameter) {
			t.Errorf("ReadBuffer(%d): %v, want ERROR_INVALID_PARAMETER", off, err)
		}
	}
	if rd.Stopped() {
		t.Fatal("the reader stopped at a caller's bad offset")
	}
	if b, err := rd.ReadBuffer(testBuf); err != nil || b.Header.SequenceNumber != 1 {
		t.Fatalf("the buffer at %d after: %v", testBuf, err)
	}
}
