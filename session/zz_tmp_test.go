package session

import (
	"testing"

	"github.com/etwemu/etwemu/internal/hw"
)

func BenchmarkTmpWrite(b *testing.B) {
	l := benchLogger(b, 2)
	ev := testEvent(64, 1)
	b.Run("one", func(b *testing.B) {
		for b.Loop() {
			p, ts := hw.CPUAndTSC()
			ev.TSC = ts
			l.Write(p, ev)
		}
	})
	b.Run("par", func(b *testing.B) {
		b.RunParallel(func(pb *testing.PB) {
			ev := testEvent(64, 1)
			for pb.Next() {
				p, ts := hw.CPUAndTSC()
				ev.TSC = ts
				l.Write(p, ev)
			}
		})
	})
}
