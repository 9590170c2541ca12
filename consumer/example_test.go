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
