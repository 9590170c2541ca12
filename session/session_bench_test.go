package session

import (
	"testing"

	"github.com/etwemu/etwemu/bench/benchbase"
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/internal/hw"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/winver"
)

func benchLogger(b *testing.B, nproc int) *Logger {
	p := Properties{LogFileMode: logmode.RealTime, BufferSize: 64, MinimumBuffers: 64, MaximumBuffers: 256, Sink: Discard{}}
	a, err := Adjust(winver.V2004, nproc, "test", &p)
	if err != nil {
		b.Fatal(err)
	}
	clk, _ := clock.New(clock.QPC)
	l := mustStart(b, Config{Version: winver.V2004, ID: 2, Instance: 1, Name: "bench", Processors: nproc, Clock: clk, Props: p, Adjusted: a})
	b.Cleanup(func() { l.Stop() })
	return l
}

// BenchmarkReserve measures Logger.Write alone (reserve, encode, copy, release) against
// the floor and a mutex-protected buffer, with the same payloads and clock, in one run.
func BenchmarkReserve(b *testing.B) {
	for _, size := range []int{16, 64, 512} {
		ev := testEvent(size, 1)
		name := "payload=" + itoa(size)
		b.Run(name, func(b *testing.B) {
			l := benchLogger(b, 2)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			for b.Loop() {
				l.Write(hw.CPU()&1, ev)
			}
			reportLost(b, l)
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			l := benchLogger(b, 2)
			b.SetBytes(int64(size))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					l.Write(hw.CPU()&1, ev)
				}
			})
			reportLost(b, l)
		})
	}
	b.Run("floor/payload=64", func(b *testing.B) { benchbase.Floor(b, 64, false) })
	b.Run("floor/payload=64/parallel", func(b *testing.B) { benchbase.Floor(b, 64, true) })
	b.Run("mutex/payload=64", func(b *testing.B) { benchbase.Mutex(b, 64, false) })
	b.Run("mutex/payload=64/parallel", func(b *testing.B) { benchbase.Mutex(b, 64, true) })
}

func reportLost(b *testing.B, l *Logger) {
	benchbase.EventsPerSecond(b)
	b.ReportMetric(float64(l.Stats().EventsLost)/float64(b.N), "lost/op")
}

func itoa(n int) string {
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		if n /= 10; n == 0 {
			return s
		}
	}
}
