package consumer_test

import (
	"context"
	"testing"
	"time"

	"github.com/etwemu/etwemu/consumer"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/etw"
)

var benchFields = etw.WithFields(etw.StringField("Name", "worker-17"), etw.Uint32Field("Count", 42), etw.BoolField("Warm", true))

// BenchmarkConsume measures the consumer's throughput in events/s with TraceLogging
// events of three fields, each decoded (header, extended items, fields) and handed on:
//
//   - file: b.N events read back from an ETL file (written before the timer starts),
//     through an EventCallback: the decoding rate, with nothing lost.
//   - live-callback, live-channel: b.N events written by one goroutine to a real-time
//     session while the consumer reads, through an EventCallback or the Events channel,
//     timed from the first write to the last event delivered. A consumer slower than the
//     writer makes the session drop buffers, as on Windows: events/s counts the events
//     delivered, lost/op the events announced lost.
func BenchmarkConsume(b *testing.B) {
	b.Run("file", func(b *testing.B) {
		k, p := consumeKernel(b, true) // synchronous: buffers are written as they fill, none lost
		h, err := k.StartTrace("file", &emu.Properties{LogFileName: "bench.etl", LogFileMode: emu.FileModeSequential, BufferSize: 64})
		if err != nil {
			b.Fatal(err)
		}
		if err := k.EnableTraceEx2(h, p.ID, emu.EnableProvider, 5, 0, 0, nil); err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			if err := p.WriteEvent("Started", nil, benchFields); err != nil {
				b.Fatal(err)
			}
		}
		var props emu.Properties
		if err := k.StopTrace(h, "", &props); err != nil || props.EventsLost != 0 {
			b.Fatalf("writing the file: %v, %d events lost", err, props.EventsLost)
		}
		c := consumer.NewConsumerOn(context.Background(), k).FromFiles("bench.etl")
		n := 0
		c.EventCallback = func(*consumer.Event) error { n++; return nil }
		b.ReportAllocs()
		b.ResetTimer()
		start := time.Now()
		if err := c.Start(); err != nil {
			b.Fatal(err)
		}
		if err := c.Wait(); err != nil {
			b.Fatal(err)
		}
		elapsed := time.Since(start)
		if n != b.N {
			b.Fatalf("%d events read, %d written", n, b.N)
		}
		b.ReportMetric(float64(n)/elapsed.Seconds(), "events/s")
	})
	for _, mode := range []string{"live-callback", "live-channel"} {
		b.Run(mode, func(b *testing.B) {
			k, p := consumeKernel(b, false)
			s := consumer.NewRealTimeSessionOn(k, "consume")
			s.Properties.BufferSize, s.Properties.MinimumBuffers, s.Properties.MaximumBuffers = 64, 16, 256
			if err := s.EnableProvider(consumer.MustParseProvider("Etwemu.Bench.Consume:5")); err != nil {
				b.Fatal(err)
			}
			c := consumer.NewConsumerOn(context.Background(), k).FromSessions(s)
			n := 0
			count := func(e *consumer.Event) {
				if e.System.Opcode.Value < consumer.OpcodeRTLostEvent { // loss notices are not throughput
					n++
				}
			}
			done := make(chan struct{})
			if mode == "live-callback" {
				c.EventCallback = func(e *consumer.Event) error { count(e); return nil }
				close(done)
			} else {
				go func() {
					for e := range c.Events {
						count(e)
					}
					close(done)
				}()
			}
			if err := c.Start(); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				p.WriteEvent("Started", nil, benchFields) // a lost event is counted by the session and reported below
			}
			s.Stop()
			if err := c.Wait(); err != nil {
				b.Fatal(err)
			}
			<-done
			elapsed := time.Since(start)
			b.ReportMetric(float64(n)/elapsed.Seconds(), "events/s")
			b.ReportMetric(float64(c.LostEvents.Load())/float64(b.N), "lost/op")
			b.ReportMetric(float64(c.LostBuffers.Load()), "lost-buffers")
		})
	}
}

func consumeKernel(b *testing.B, synchronous bool) (*emu.Kernel, *etw.Provider) {
	k, err := emu.New(emu.Config{Processors: 1, FileSystem: &etl.MemFS{}, Synchronous: synchronous})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(k.Close)
	p, err := etw.NewProviderWithOptions("Etwemu.Bench.Consume", etw.WithKernel(k))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	return k, p
}
