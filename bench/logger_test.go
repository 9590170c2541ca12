package bench

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/bench/benchbase"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/session"
)

// BenchmarkLogger measures the logger's capacity: how many buffers one session's logger
// goroutine seals, hands on and recycles a second, with the discard sink, the counting
// sink and a file, at buffer sizes of 4 KB, 64 KB and 1 MB. Writers on every processor
// write events of a quarter of a buffer (at most ETW's 64 KB), so that filling a buffer
// costs them little beside what the logger does with it; the session is in
// EVENT_TRACE_BLOCKING_MODE, so a writer that finds no free buffer waits for the logger
// instead of losing its event, and the rate is what the logger lets through. Besides
// events/s it reports buffers/s and logger-busy, the share of the run the logger
// goroutine worked rather than waited: near 1, buffers/s is the logger's capacity; well
// below it, the writers (or the machine) held the rate down and buffers/s is a lower
// bound. BLOCKING is a private logger's mode, and a private logger cannot be real-time:
// with the discard and counting sinks its log file is one that keeps nothing
// (discardFS), so that the sink is all the output costs beside the file's bookkeeping.
func BenchmarkLogger(b *testing.B) {
	sinks := []struct {
		name string
		set  func(b *testing.B, p *emu.Properties)
	}{
		{"discard", func(b *testing.B, p *emu.Properties) { p.Sink, p.LogFileName = session.Discard{}, discardFile }},
		{"counter", func(b *testing.B, p *emu.Properties) { p.Sink, p.LogFileName = &session.Counter{}, discardFile }},
		// A circular file of 64 MB: real writes to the file system, bounded on disk.
		{"file", func(b *testing.B, p *emu.Properties) {
			p.LogFileName = filepath.Join(b.TempDir(), "logger.etl")
			p.LogFileMode |= logmode.Circular
			p.MaximumFileSize = 64
		}},
	}
	for _, kb := range []uint32{4, 64, 1024} {
		for _, sink := range sinks {
			b.Run(fmt.Sprintf("buffer=%dKB/sink=%s", kb, sink.name), func(b *testing.B) {
				loggerCapacity(b, kb, sink.set)
			})
		}
	}
}

// loggerCapacity is one case of BenchmarkLogger.
func loggerCapacity(b *testing.B, kb uint32, sink func(*testing.B, *emu.Properties)) {
	k, err := emu.New(emu.Config{FileSystem: discardFS{}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(k.Close)
	prov := guid.FromName("etwemu.bench.logger")
	r, err := k.EventRegister(prov, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	p := &emu.Properties{BufferSize: kb, MinimumBuffers: 8, MaximumBuffers: 8,
		LogFileMode: logmode.PrivateLogger | logmode.PrivateInProc | logmode.Blocking}
	sink(b, p)
	h, err := k.StartTrace("logger-capacity", p)
	if err != nil {
		b.Fatal(err)
	}
	if err := k.EnableTraceEx2(h, prov, emu.EnableProvider, 5, 0, 0, nil); err != nil {
		b.Fatal(err)
	}
	size := int(kb)*1024/4 - abi.EventHeaderSize - 0x48
	size = min(size, abi.MaxEventSize-abi.EventHeaderSize-8) &^ 7
	payload := make([]byte, size)
	desc := &emu.EventDescriptor{ID: 1, Level: 4}
	l := k.Session(h)
	before := l.Stats()
	benchbase.Run(b, size, true, func() { k.EventWrite(r, desc, payload) })
	after := l.Stats()
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(after.BuffersWritten-before.BuffersWritten)/s, "buffers/s")
		b.ReportMetric(min(1, (after.LoggerBusy-before.LoggerBusy).Seconds()/s), "logger-busy")
	}
	b.ReportMetric(float64(after.EventsLost-before.EventsLost)/float64(b.N), "lost/op")
}

// discardFile is the log file name the discard and counting sinks' sessions write to:
// discardFS keeps nothing of it. Any other name is a file of the operating system.
const discardFile = "discard.etl"

// discardFS is a file system whose discardFile keeps nothing but its size, and whose
// other files are the operating system's.
type discardFS struct{}

func (discardFS) OpenFile(name string, flag int, perm os.FileMode) (etl.WriteFile, error) {
	if name != discardFile {
		return etl.OS{}.OpenFile(name, flag, perm)
	}
	return &nothing{}, nil
}

// nothing is an open discardFile: writes are dropped, reads are zeros up to its size.
type nothing struct{ size int64 }

func (f *nothing) WriteAt(p []byte, off int64) (int, error) {
	f.size = max(f.size, off+int64(len(p)))
	return len(p), nil
}

func (f *nothing) ReadAt(p []byte, off int64) (int, error) {
	if off >= f.size {
		return 0, io.EOF
	}
	n := copy(p, make([]byte, min(int64(len(p)), f.size-off)))
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *nothing) Truncate(size int64) error  { f.size = size; return nil }
func (f *nothing) Stat() (os.FileInfo, error) { return nothingInfo{f.size}, nil }
func (f *nothing) Close() error               { return nil }

// nothingInfo is a discardFile's FileInfo.
type nothingInfo struct{ size int64 }

func (i nothingInfo) Name() string       { return discardFile }
func (i nothingInfo) Size() int64        { return i.size }
func (i nothingInfo) Mode() os.FileMode  { return 0o644 }
func (i nothingInfo) ModTime() time.Time { return time.Time{} }
func (i nothingInfo) IsDir() bool        { return false }
func (i nothingInfo) Sys() any           { return nil }
