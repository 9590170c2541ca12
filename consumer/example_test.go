package consumer_test

import (
	"context"
	"encoding/json"
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

// printJSON prints what a golang-etw program reads from an event's JSON: the provider,
// the task and opcode names and the properties, which golang-etw delivers as strings.
func printJSON(b []byte) {
	var v struct {
		EventData map[string]string
		System    struct {
			Provider     struct{ Name string }
			Task, Opcode struct{ Name string }
		}
	}
	if err := json.Unmarshal(b, &v); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(v.System.Provider.Name, v.System.Task.Name, v.System.Opcode.Name, v.EventData)
}

// The calls of 0xrawsec/golang-etw's README, in its order: a real-time session on the
// default kernel with one provider enabled, a consumer whose Events channel a goroutine
// drains, printing each event as JSON, and Err once the consumer is done. A program
// would wait for the session's one-second flush; this one flushes at once.
func ExampleNewRealTimeConsumer() {
	k, _ := emu.New(emu.Config{Processors: 1})
	defer k.Close()
	etw.SetKernel(k)
	defer etw.SetKernel(nil)
	p, _ := etw.NewProvider("MyCompany.Disk", nil)
	defer p.Close()

	s := consumer.NewRealTimeSession("DiskWatch")
	defer s.Stop()
	if err := s.EnableProvider(consumer.MustParseProvider("MyCompany.Disk")); err != nil {
		fmt.Println(err)
		return
	}
	c := consumer.NewRealTimeConsumer(context.Background())
	defer c.Stop()
	c.FromSessions(s)
	printed := make(chan struct{})
	go func() {
		for e := range c.Events {
			b, err := json.Marshal(e)
			if err != nil {
				fmt.Println(err)
			}
			printJSON(b)
			printed <- struct{}{}
		}
		close(printed)
	}()
	if err := c.Start(); err != nil {
		fmt.Println(err)
		return
	}

	p.WriteEvent("Create", etw.WithEventOpts(etw.WithOpcode(etw.OpcodeStart)),
		etw.WithFields(etw.StringField("FileName", `C:\data\a.txt`), etw.Uint32Field("CreateOptions", 0x60)))
	s.Flush()
	<-printed
	c.Stop() // the goroutine's range ends
	<-printed
	fmt.Println(c.Err())
	// Output:
	// MyCompany.Disk Create Start map[CreateOptions:96 FileName:C:\data\a.txt]
	// <nil>
}

// The calls of tekert/golang-etw's examples/simple, in its order: the same session, a
// consumer from NewConsumer, and ProcessEvents on a goroutine calling a function with
// each event; LastError once the consumer is done.
func ExampleNewConsumer() {
	k, _ := emu.New(emu.Config{Processors: 1})
	defer k.Close()
	etw.SetKernel(k)
	defer etw.SetKernel(nil)
	p, _ := etw.NewProvider("MyCompany.Disk", nil)
	defer p.Close()

	s := consumer.NewRealTimeSession("DiskWatch")
	defer s.Stop()
	if err := s.EnableProvider(consumer.MustParseProvider("MyCompany.Disk")); err != nil {
		fmt.Println(err)
		return
	}
	c := consumer.NewConsumer(context.Background())
	defer c.Stop()
	c.FromSessions(s)
	printed := make(chan struct{})
	done := make(chan error)
	go func() {
		done <- c.ProcessEvents(func(e *consumer.Event) {
			b, err := json.Marshal(e)
			if err != nil {
				fmt.Println(err)
			}
			printJSON(b)
			printed <- struct{}{}
		})
	}()
	if err := c.Start(); err != nil {
		fmt.Println(err)
		return
	}

	p.WriteEvent("Close", etw.WithEventOpts(etw.WithOpcode(etw.OpcodeStop)),
		etw.WithFields(etw.StringField("FileName", `C:\data\a.txt`), etw.Uint64Field("Bytes", 4096)))
	s.Flush()
	<-printed
	c.Stop() // ProcessEvents returns
	fmt.Println(<-done, c.LastError())
	// Output:
	// MyCompany.Disk Close Stop map[Bytes:4096 FileName:C:\data\a.txt]
	// <nil> <nil>
}
