package session

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/internal/hw"
	"github.com/etwemu/etwemu/winver"
)

func benchLogger(b *testing.B, nproc int) *Logger {
	p := Properties{BufferSize: 64, MinimumBuffers: 64, MaximumBuffers: 256}
	a, err := Adjust(winver.V2004, nproc, &p)
	if err != nil {
		b.Fatal(err)
	}
	clk, _ := clock.New(clock.QPC)
	l := Start(Config{Version: winver.V2004, ID: 2, Instance: 1, Name: "bench", Processors: nproc, Clock: clk, Props: p, Adjusted: a})
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
	b.Run("floor/payload=64", func(b *testing.B) { floor(b, 64, false) })
	b.Run("floor/payload=64/parallel", func(b *testing.B) { floor(b, 64, true) })
	b.Run("mutex/payload=64", func(b *testing.B) { mutexBaseline(b, 64, false) })
	b.Run("mutex/payload=64/parallel", func(b *testing.B) { mutexBaseline(b, 64, true) })
}

func reportLost(b *testing.B, l *Logger) {
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(l.Stats().EventsLost)/float64(b.N), "lost/op")
}

type slab struct {
	off  atomic.Uint64
	data []byte
	_    [64]byte
}

// floor: the same clock read, one atomic add on a per-processor offset, and the copy of
// an EVENT_HEADER plus payload. Nothing the model adds.
func floor(b *testing.B, size int, parallel bool) {
	clk, _ := clock.New(clock.QPC)
	slabs := make([]slab, 64)
	for i := range slabs {
		slabs[i].data = make([]byte, 1<<20)
	}
	var hdr [abi.EventHeaderSize]byte
	payload := make([]byte, size)
	rec := uint64(abi.Align(abi.EventHeaderSize + size))
	one := func() {
		s := &slabs[hw.CPU()&63]
		off := (s.off.Add(rec) - rec) & (1<<20 - 1024)
		ts := clk.Now()
		copy(s.data[off:], hdr[:])
		s.data[off+16] = byte(ts)
		copy(s.data[off+abi.EventHeaderSize:], payload)
	}
	run(b, size, parallel, one)
}

// mutexBaseline: one shared buffer under a sync.Mutex.
func mutexBaseline(b *testing.B, size int, parallel bool) {
	clk, _ := clock.New(clock.QPC)
	var mu sync.Mutex
	data := make([]byte, 1<<20)
	off := 0
	var hdr [abi.EventHeaderSize]byte
	payload := make([]byte, size)
	rec := abi.Align(abi.EventHeaderSize + size)
	one := func() {
		mu.Lock()
		if off+rec > len(data) {
			off = 0
		}
		ts := clk.Now()
		copy(data[off:], hdr[:])
		data[off+16] = byte(ts)
		copy(data[off+abi.EventHeaderSize:], payload)
		off += rec
		mu.Unlock()
	}
	run(b, size, parallel, one)
}

func run(b *testing.B, size int, parallel bool, one func()) {
	b.SetBytes(int64(size))
	b.ReportAllocs()
	if parallel {
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				one()
			}
		})
	} else {
		for b.Loop() {
			one()
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
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
