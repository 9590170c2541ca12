package consumer_test

import (
	"context"
	"fmt"

	"github.com/etwemu/etwemu/consumer"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/etw"
)

// A consumer in golang-etw's shape reads the same events live from a real-time session
// and from an ETL file, decoded: header fields in System, TraceLogging fields by name.
func Example() {
	k, _ := emu.New(emu.Config{Processors: 1, FileSystem: &etl.MemFS{}})
	defer k.Close()
	p, _ := etw.NewProviderWithOptions("MyCompany.Orders", etw.WithKernel(k))
	defer p.Close()

	// A live session, read through the Events channel.
	live := consumer.NewRealTimeSessionOn(k, "Orders")
	live.EnableProvider(consumer.MustParseProvider("MyCompany.Orders:5"))
	c := consumer.NewConsumerOn(context.Background(), k).FromSessions(live)
	c.Start()

	// A file session beside it.
	h, _ := k.StartTrace("OrdersFile", &emu.Properties{LogFileName: "orders.etl", LogFileMode: emu.FileModeSequential})
	k.EnableTraceEx2(h, p.ID, emu.EnableProvider, 5, 0, 0, nil)

	p.WriteEvent("OrderPlaced", nil, etw.WithFields(etw.Uint64Field("ID", 1001), etw.Float64Field("Total", 25.5)))
	live.Stop()
	k.StopTrace(h, "", nil)
	for e := range c.Events {
		fmt.Println("live:", e.System.Provider.Name, e.Name, e.EventData["ID"], e.EventData["Total"])
	}

	// The file, through a callback.
	f := consumer.NewConsumerOn(context.Background(), k).FromFiles("orders.etl")
	f.EventCallback = func(e *consumer.Event) error {
		fmt.Println("file:", e.System.Provider.Name, e.Name, e.EventData["ID"], e.EventData["Total"])
		return nil
	}
	f.Start()
	f.Wait()
	fmt.Println("lost:", c.LostEvents.Load())
	// Output:
	// live: MyCompany.Orders OrderPlaced 1001 25.5
	// file: MyCompany.Orders OrderPlaced 1001 25.5
	// lost: 0
}

// golang-etw's calls take no kernel: they use the process's default kernel, which the
// etw package's providers write to. RealTimeSession.Flush delivers at once what the
// one-second flush would deliver a second later.
func ExampleNewRealTimeSession() {
	k, _ := emu.New(emu.Config{Processors: 1})
	defer k.Close()
	etw.SetKernel(k) // the default kernel; without it etw.Kernel makes one
	defer etw.SetKernel(nil)
	p, _ := etw.NewProvider("MyCompany.Files", nil)
	defer p.Close()

	s := consumer.NewRealTimeSession("Files")
	defer s.Stop()
	if err := s.EnableProvider(consumer.MustParseProvider("MyCompany.Files")); err != nil {
		fmt.Println(err)
		return
	}
	c := consumer.NewRealTimeConsumer(context.Background()).FromSessions(s)
	if err := c.Start(); err != nil {
		fmt.Println(err)
		return
	}
	p.WriteEvent("Opened", nil, etw.WithFields(etw.StringField("Path", "/tmp/a"), etw.Uint32Field("Mode", 0o644)))
	s.Flush()
	e := <-c.Events
	fmt.Println(e.System.Provider.Name, e.System.Task.Name, e.System.Channel, e.EventData["Path"], e.EventData["Mode"])
	c.Stop()
	// Output:
	// MyCompany.Files Opened TraceLogging /tmp/a 420
}

// tekert's ProcessEvents reads Events on a goroutine of its own and calls the function
// for each event until the consumer ends.
func ExampleConsumer_ProcessEvents() {
	k, _ := emu.New(emu.Config{Processors: 1})
	defer k.Close()
	p, _ := etw.NewProviderWithOptions("MyCompany.Jobs", etw.WithKernel(k))
	defer p.Close()
	s := consumer.NewRealTimeSessionOn(k, "Jobs")
	s.EnableProvider(consumer.MustParseProvider("MyCompany.Jobs"))
	c := consumer.NewConsumerOn(context.Background(), k).FromSessions(s)
	done := make(chan error)
	go func() {
		done <- c.ProcessEvents(func(e *consumer.Event) {
			fmt.Println(e.System.Task.Name, e.EventData["ID"])
		})
	}()
	c.Start()
	for id := 1; id <= 2; id++ {
		p.WriteEvent("Job", nil, etw.WithFields(etw.IntField("ID", id)))
	}
	s.Stop() // the consumer receives the last buffers, then ends
	fmt.Println(<-done, c.LastError())
	// Output:
	// Job 1
	// Job 2
	// <nil> <nil>
}
