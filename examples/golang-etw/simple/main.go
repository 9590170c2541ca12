// Command simple is tekert/golang-etw's examples/simple, written with the same calls in
// the same order, its import line changed to etwemu's consumer package: it starts a
// real-time session, enables Microsoft-Windows-Kernel-File on it, and prints each event
// ProcessEvents hands it as JSON for five seconds. On Linux no kernel writes file events,
// so provider.go writes them from the same process under that provider's name.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	etw "github.com/etwemu/etwemu/consumer"
)

func main() {
	// The producer side: a real-time session, stopped on the way out so that its name
	// is free for the next run.
	s := etw.NewRealTimeSession("TestingGoEtw")
	defer s.Stop()

	// One provider enabled on the session.
	if err := s.EnableProvider(etw.MustParseProvider("Microsoft-Windows-Kernel-File")); err != nil {
		panic(err)
	}

	// The consumer side, reading the session.
	c := etw.NewConsumer(context.Background())
	defer c.Stop()
	c.FromSessions(s)

	// ProcessEvents reads the Events channel and calls the function for each event.
	go func() {
		var b []byte
		var err error
		c.ProcessEvents(func(e *etw.Event) {
			if b, err = json.Marshal(e); err != nil {
				panic(err)
			}
			fmt.Println(string(b))
		})
	}()

	if err := c.Start(); err != nil {
		panic(err)
	}

	time.Sleep(5 * time.Second)

	if c.LastError() != nil {
		panic(c.LastError())
	}
}
