package bench

import (
	"fmt"
	"testing"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/session"
)

func BenchmarkSync(b *testing.B) {
	for _, payload := range []int{64, 512} {
		for _, sync := range []bool{false, true} {
			b.Run(fmt.Sprintf("p=%d/sync=%v", payload, sync), func(b *testing.B) {
				k, err := emu.New(emu.Config{Synchronous: sync})
				if err != nil {
					b.Fatal(err)
				}
				defer k.Close()
				prov := guid.FromName("etwemu.bench")
				r, _ := k.EventRegister(prov, nil, nil)
				h, err := k.StartTrace("t", &emu.Properties{BufferSize: 64, MinimumBuffers: 64, MaximumBuffers: 256,
					LogFileMode: uint32(logmode.RealTime), Sink: session.Discard{}})
				if err != nil {
					b.Fatal(err)
				}
				k.EnableTraceEx2(h, prov, regentry.ControlEnable, 5, 0, 0, nil)
				d := &emu.EventDescriptor{ID: 1, Level: 4, Keyword: 1}
				data := make([]byte, payload)
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					k.EventWrite(r, d, data)
				}
			})
		}
	}
}
