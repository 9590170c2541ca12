package etw_test

import (
	"context"
	"fmt"

	"github.com/etwemu/etwemu/consumer"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etw"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/tracelogging"
)

// Code written for go-winio's etw package, unchanged but for the import path: a provider
// named by its TraceLogging name, an event with options and fields. A consumer on an
// emulated real-time session shows what a session receives.
func Example() {
	k, _ := emu.New(emu.Config{Processors: 1})
	defer k.Close()
	etw.SetKernel(k) // go-winio has one kernel; etwemu's providers use the package's
	defer etw.SetKernel(nil)

	provider, err := etw.NewProvider("MyCompany.MyComponent", func(_ etw.GUID, state etw.ProviderState, level etw.Level, _, _ uint64, _ uintptr) {
		fmt.Println("callback:", state, level)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer provider.Close()
	fmt.Println("provider", provider, "enabled:", provider.IsEnabled())

	// golang-etw's session and consumer, on the same (default) kernel.
	s := consumer.NewRealTimeSession("MySession")
	s.EnableProvider(consumer.MustParseProvider("MyCompany.MyComponent:4"))
	c := consumer.NewConsumer(context.Background()).FromSessions(s)
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
	// callback: 1 Info
	// callback: 0 Always
	// MyCompany.MyComponent Started level 4 opcode 1: Name="worker" Count=3 Warm=true
}

// A provider with a GUID of its own and a provider group, as go-winio's sample makes
// one; guid.FromString is go-winio's parser.
func ExampleNewProviderWithOptions() {
	k, _ := emu.New(emu.Config{Processors: 1})
	defer k.Close()
	group, err := guid.FromString("12341234-abcd-abcd-abcd-123412341234")
	if err != nil {
		fmt.Println(err)
		return
	}
	id := guid.MustParse("{5b5a4bfe-4b8f-4cd4-a2b7-3d62c1d1f1a0}")
	p, err := etw.NewProviderWithOptions("MyCompany.Grouped", etw.WithID(id), etw.WithGroup(group), etw.WithKernel(k))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	fmt.Println(p, p.IsEnabled())
	// Output:
	// 5b5a4bfe-4b8f-4cd4-a2b7-3d62c1d1f1a0 false
}

// WriteEvent returns at once, having built nothing, while no session wants the event.
func ExampleProvider_WriteEvent() {
	k, _ := emu.New(emu.Config{Processors: 1})
	defer k.Close()
	p, _ := etw.NewProviderWithOptions("MyCompany.Quiet", etw.WithKernel(k))
	defer p.Close()
	err := p.WriteEvent("Ignored", etw.WithEventOpts(etw.WithLevel(etw.LevelError), etw.WithKeyword(0x10)),
		etw.WithFields(etw.StringField("Reason", "no session")))
	fmt.Println(err, p.IsEnabledForLevelAndKeywords(etw.LevelError, 0x10))
	// Output:
	// <nil> false
}

// go-winio's sample in brief: a provider in a provider group with an enable callback,
// and an event with a keyword, a struct and an array, read by a session that enabled
// the provider first. golang-etw's EventData holds the struct under "Structures" and
// every value as a string.
func ExampleStruct() {
	k, _ := emu.New(emu.Config{Processors: 1})
	defer k.Close()
	etw.SetKernel(k)
	defer etw.SetKernel(nil)
	s := consumer.NewRealTimeSession("Inventory")
	s.EnableProvider(consumer.MustParseProvider("MyCompany.Inventory"))
	c := consumer.NewConsumer(context.Background()).FromSessions(s)
	c.Start()

	group, _ := guid.FromString("0f0e0d0c-0b0a-0908-0706-050403020100")
	p, err := etw.NewProviderWithOptions("MyCompany.Inventory", etw.WithGroup(group),
		etw.WithCallback(func(_ guid.GUID, state etw.ProviderState, level etw.Level, matchAny, _ uint64, _ uintptr) {
			fmt.Printf("callback: state %d, level %d, any keyword %#x\n", state, level, matchAny)
		}))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer p.Close()
	p.WriteEvent("Counted", etw.WithEventOpts(etw.WithLevel(etw.LevelInfo), etw.WithKeyword(0x140)),
		etw.WithFields(etw.StringField("Shelf", "B4"),
			etw.Struct("Item", etw.StringField("Name", "bolt"), etw.Uint16Field("Size", 8)),
			etw.StringArray("Bins", []string{"1", "2", "3"})))
	s.Stop()
	for e := range c.Events {
		fmt.Println(e.System.Task.Name, e.System.Level.Value, fmt.Sprintf("%#x", e.System.Keywords.Value), e.EventData)
	}
	// Output:
	// callback: state 1, level 255, any keyword 0xffffffffffffffff
	// callback: state 0, level 0, any keyword 0x0
	// Counted 4 0x140 map[Bins:[1 2 3] Shelf:B4 Structures:[map[Name:bolt Size:8]]]
}
