package main

import (
	"time"

	"github.com/etwemu/etwemu/etw"
)

// The events the example reads. On Windows the kernel writes them; here a provider of
// the same name in the same process writes one every 100 ms while a session has it
// enabled, on the default kernel that the consumer package's sessions use too.
func init() {
	p, err := etw.NewProvider("Microsoft-Windows-Kernel-File", nil)
	if err != nil {
		panic(err)
	}
	go func() {
		for i := uint64(1); ; i++ {
			if p.IsEnabled() {
				_ = p.WriteEvent("Create", etw.WithEventOpts(etw.WithLevel(etw.LevelInfo), etw.WithOpcode(etw.OpcodeStart)),
					etw.WithFields(etw.Uint64Field("Irp", i), etw.StringField("FileName", `C:\Windows\Temp\etwemu.tmp`),
						etw.Uint32Field("CreateOptions", 0x1000060)))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
}
