package etw_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etw"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winerr"
)

// benchKernel returns a kernel with a provider and, unless level is 0, a session that
// enables it at level, whose buffers go nowhere.
func benchKernel(b *testing.B, level uint8) (*emu.Kernel, *etw.Provider) {
	k, err := emu.New(emu.Config{Processors: 1})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(k.Close)
	p, err := etw.NewProviderWithOptions("Etwemu.Bench", etw.WithKernel(k))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	if level != 0 {
		h, err := k.StartTrace("bench", &emu.Properties{LogFileMode: emu.RealTimeMode, BufferSize: 64, MinimumBuffers: 8, MaximumBuffers: 64, Sink: session.Discard{}})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { k.StopTrace(h, "", nil) })
		if err := k.EnableTraceEx2(h, p.ID, emu.EnableProvider, level, 0, 0, nil); err != nil {
			b.Fatal(err)
		}
	}
	return k, p
}

// BenchmarkWriteEvent measures WriteEvent with three fields (a string, a uint32, a
// bool) and prebuilt option slices, reporting the events the session lost (lost/op)
// when its logger falls behind: with no session (disabled), with a session that
// filters the event by level (filtered), and written (enabled); and, as the baseline in
// the same run, the same event encoded by hand the way go-winio encodes it (a
// bytes.Buffer and binary.Write per event, fresh per call) and written through
// EventWriteDescriptors (by-hand).
func BenchmarkWriteEvent(b *testing.B) {
	opts := etw.WithEventOpts(etw.WithLevel(etw.LevelInfo), etw.WithKeyword(1))
	verbose := etw.WithEventOpts(etw.WithLevel(etw.LevelVerbose))
	fields := etw.WithFields(etw.StringField("Name", "worker-17"), etw.Uint32Field("Count", 42), etw.BoolField("Warm", true))
	run := func(b *testing.B, p *etw.Provider, eo []etw.EventOpt) {
		b.ReportAllocs()
		var lost lossCount
		for b.Loop() {
			if err := p.WriteEvent("Started", eo, fields); err != nil {
				lost.add(b, err)
			}
		}
		lost.report(b)
	}
	b.Run("disabled", func(b *testing.B) {
		_, p := benchKernel(b, 0)
		run(b, p, opts)
	})
	b.Run("filtered", func(b *testing.B) {
		_, p := benchKernel(b, 4)
		run(b, p, verbose)
	})
	b.Run("enabled", func(b *testing.B) {
		_, p := benchKernel(b, 4)
		run(b, p, opts)
	})
	b.Run("by-hand", func(b *testing.B) {
		k, p := benchKernel(b, 4)
		traits := providerTraits("Etwemu.Bench")
		b.ReportAllocs()
		var lost lossCount
		for b.Loop() {
			if !p.IsEnabledForLevelAndKeywords(etw.LevelInfo, 1) {
				b.Fatal("not enabled")
			}
			em, ed := &bytes.Buffer{}, &bytes.Buffer{}
			binary.Write(em, binary.LittleEndian, uint16(0))
			em.WriteByte(0) // tags
			em.WriteString("Started\x00")
			em.WriteString("Name\x00")
			em.Write([]byte{0x82, 0x23}) // AnsiString, Utf8
			ed.WriteString("worker-17\x00")
			em.WriteString("Count\x00")
			em.WriteByte(8) // UInt32
			binary.Write(ed, binary.LittleEndian, uint32(42))
			em.WriteString("Warm\x00")
			em.Write([]byte{0x84, 3}) // UInt8, Boolean
			ed.WriteByte(1)
			binary.LittleEndian.PutUint16(em.Bytes(), uint16(em.Len()))
			d := emu.EventDescriptor{Level: 4, Channel: 11, Keyword: 1}
			if err := k.EventWriteDescriptors(p.Registration(), &d, nil,
				emu.DataDescriptor{Data: traits, Type: emu.DescriptorProviderMetadata},
				emu.DataDescriptor{Data: em.Bytes(), Type: emu.DescriptorEventMetadata},
				emu.DataDescriptor{Data: ed.Bytes(), Type: emu.DescriptorUserData}); err != nil {
				lost.add(b, err)
			}
		}
		lost.report(b)
	})
}

// providerTraits is the provider metadata go-winio builds for a provider without a group.
func providerTraits(name string) []byte {
	b := append(append([]byte{0, 0}, name...), 0)
	binary.LittleEndian.PutUint16(b, uint16(len(b)))
	return b
}

// lossCount counts the events a session lost for want of a free buffer (the logger fell
// behind the writer), which a benchmark reports as lost/op rather than failing on.
type lossCount struct{ n int }

func (l *lossCount) add(b *testing.B, err error) {
	if !errors.Is(err, winerr.ErrNotEnoughMemory) {
		b.Fatal(err)
	}
	l.n++
}

// report gives lost/op; b.N is the number of iterations once b.Loop has finished.
func (l *lossCount) report(b *testing.B) {
	b.ReportMetric(float64(l.n)/float64(b.N), "lost/op")
}
