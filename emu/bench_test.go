package emu

import (
	"sync"
	"sync/atomic"
	"testing"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/internal/hw"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
)

// benchKernel starts n sessions (BufferSize 64 KB, discard sink) enabled for one provider
// at level 5 and returns the registration.
func benchKernel(b *testing.B, n int, mode uint32) (*Kernel, *Registration) {
	k, err := New(Config{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(k.Close)
	prov := guid.FromName("bench")
	r, err := k.EventRegister(prov, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i++ {
		h, err := k.StartTrace("bench-"+string(rune('a'+i)), &Properties{BufferSize: benchBufKB, MinimumBuffers: 64, MaximumBuffers: 256, LogFileMode: mode})
		if err != nil {
			b.Fatal(err)
		}
		if err := k.EnableTraceEx2(h, prov, regentry.ControlEnable, 5, 0, 0, nil); err != nil {
			b.Fatal(err)
		}
	}
	return k, r
}

func report(b *testing.B, k *Kernel, payload int) {
	var lost uint64
	for _, l := range k.Sessions() {
		lost += l.Stats().EventsLost
	}
	if s := b.Elapsed().Seconds(); s > 0 {
		b.ReportMetric(float64(b.N)/s, "events/s")
	}
	b.ReportMetric(float64(lost)/float64(b.N), "lost/op")
}

// BenchmarkWrite measures EventWrite through the public API, against the floor (the same
// bytes copied into a per-processor slab with one atomic add and the same clock read) and
// a mutex-protected single buffer, in the same run.
func BenchmarkWrite(b *testing.B) {
	desc := &EventDescriptor{ID: 1, Level: 4, Keyword: 1}
	b.Run("disabled", func(b *testing.B) {
		k, r := benchKernel(b, 0, 0)
		payload := make([]byte, 64)
		b.ReportAllocs()
		for b.Loop() {
			k.EventWrite(r, desc, payload)
		}
	})
	for _, sessions := range []int{1, 2} {
		for _, size := range []int{16, 64, 512} {
			name := "sessions=" + itoa(sessions) + "/payload=" + itoa(size)
			b.Run(name, func(b *testing.B) {
				k, r := benchKernel(b, sessions, 0)
				payload := make([]byte, size)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					k.EventWrite(r, desc, payload)
				}
				report(b, k, size)
			})
			b.Run(name+"/parallel", func(b *testing.B) {
				k, r := benchKernel(b, sessions, 0)
				payload := make([]byte, size)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						k.EventWrite(r, desc, payload)
					}
				})
				report(b, k, size)
			})
		}
	}
	b.Run("floor/payload=64", func(b *testing.B) { benchFloor(b, 64, false) })
	b.Run("floor/payload=64/parallel", func(b *testing.B) { benchFloor(b, 64, true) })
	b.Run("mutex/payload=64", func(b *testing.B) { benchMutex(b, 64, false) })
	b.Run("mutex/payload=64/parallel", func(b *testing.B) { benchMutex(b, 64, true) })
}

// slab is one processor's preallocated region for the floor benchmark.
type slab struct {
	off  atomic.Uint64
	data []byte
	_    [64]byte
}

// benchFloor is the physical floor of the write path: the same clock read, one atomic add
// on a per-processor offset and the copy of an EVENT_HEADER plus payload.
func benchFloor(b *testing.B, size int, parallel bool) {
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

// benchMutex is the naive design: one shared buffer under a sync.Mutex.
func benchMutex(b *testing.B, size int, parallel bool) {
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
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

var _ = session.MaxLoggers
var benchBufKB uint32 = 64
