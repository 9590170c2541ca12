package etw_test

import (
	"context"
	"fmt"

	"github.com/etwemu/etwemu/consumer"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etw"
	"github.com/etwemu/etwemu/tracelogging"
)

// Code written for go-winio's etw package, unchanged but for the import path: a provider
// named by its TraceLogging name, an event with options and fields. A consumer on an
// emulated real-time session shows what a session receives.
func Example() {
	k, _ := emu.New(emu.Config{Processors: 1})
	defer k.Close()
	etw.SetKernel(k) // go-winio has one kernel; etwemu's providers use the package's

	provider, err := etw.NewProvider("MyCompany.MyComponent", func(_ etw.GUID, state etw.ProviderState, level etw.Level, _, _ uint64, _ uintptr) {
		fmt.Println("callback:", state, level)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer provider.Close()
	fmt.Println("provider", provider, "enabled:", provider.IsEnabled())

	s := consumer.NewRealTimeSessionOn(k, "MySession")
	s.EnableProvider(consumer.MustParseProvider("MyCompany.MyComponent:4"))
	c := consumer.NewConsumerOn(context.Background(), k).FromSessions(s)
	c.Start()

	provider.WriteEvent("Started", etw.WithEventOpts(etw.WithLevel(etw.LevelInfo), etw.WithOpcode(etw.OpcodeStart)),
		etw.WithFields(etw.StringField("Name", "worker"), etw.Uint32Field("Count", 3), etw.BoolField("Warm", true)))
	provider.WriteEvent("Detail", nil, etw.WithFields(etw.StringField("Ignored", "level 5 > 4")))

	s.Stop() // disables the provider: the callback runs with state 0
	for e := range c.Events {
		fmt.Printf("%s %s level %d opcode %d: %s\n", e.System.Provider.Name, e.Name, e.System.Level.Value, e.System.Opcode.Value, tracelogging.Text(e.Fields))
	}
	// Output:
	// provider ce5fa4ea-ab00-5402-8b76-9f76ac858fb5 enabled: false
	// callback: 1 LevelInfo
	// callback: 0 LevelAlways
	// MyCompany.MyComponent Started level 4 opcode 1: Name="worker" Count=3 Warm=true
}
