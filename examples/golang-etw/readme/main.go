// Command readme is the consumer example of 0xrawsec/golang-etw's README, written with the
// same calls in the same order, its import line changed to etwemu's consumer package: it
// starts a real-time session, enables Microsoft-Windows-Kernel-File on it, and prints each
// event it reads as JSON for five seconds. On Linux no kernel writes file events, so
// provider.go writes them from the same process under that provider's name.
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
	c := etw.NewRealTimeConsumer(context.Background())
	defer c.Stop()
	c.FromSessions(s)

	// Events arrive on the Events channel (the default EventCallback sends them there).
	go func() {
		var b []byte
		var err error
		for e := range c.Events {
			if b, err = json.Marshal(e); err != nil {
				panic(err)
			}
			fmt.Println(string(b))
		}
	}()

	if err := c.Start(); err != nil {
		panic(err)
	}

	time.Sleep(5 * time.Second)

	if c.Err() != nil {
		panic(c.Err())
	}
}
