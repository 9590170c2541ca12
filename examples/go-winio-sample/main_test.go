package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/consumer"
	"github.com/etwemu/etwemu/examples/internal/runmain"
	"github.com/etwemu/etwemu/guid"
)

// TestMain runs main in a process of its own for TestSample. There a session on the
// default kernel enables both of the sample's providers before main runs, and once main
// has returned, every event read from it is printed as JSON after a marker line.
func TestMain(m *testing.M) {
	runmain.Main(m, func() {
		s := consumer.NewRealTimeSession("GoWinioSample")
		for _, p := range []string{"TestProvider", "TestProviderWithGroup"} {
			if err := s.EnableProvider(consumer.MustParseProvider(p)); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(2)
			}
		}
		c := consumer.NewConsumer(context.Background()).FromSessions(s)
		if err := c.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		main()
		s.Stop() // the consumer sees the session's last buffers, then ends
		fmt.Println("--- events")
		for e := range c.Events {
			b, _ := json.Marshal(e)
			fmt.Println(string(b))
		}
	})
}

// The sample, built with its import paths changed and run with enter pressed, prints
// what it prints on Windows (with the enable callbacks of the session the test started),
// and its two events reach the session with their fields, struct and array.
func TestSample(t *testing.T) {
	out := string(runmain.Run(t, "\n"))
	head, events, ok := strings.Cut(out, "--- events\n")
	if !ok {
		t.Fatalf("no event marker in:\n%s", out)
	}
	for _, want := range []string{
		"Running on ",
		"Callback: isEnabled=1, level=255, matchAnyKeyword=",
		"Provider ID: " + guid.FromName("TestProvider").String() + "\n", // the name's EventSource GUID, as go-winio derives it
		"Provider w/ Group ID: " + guid.FromName("TestProviderWithGroup").String() + "\n",
		"Press enter to log events\n",
	} {
		if !strings.Contains(head, want) {
			t.Errorf("output lacks %q:\n%s", want, head)
		}
	}
	lines := strings.Split(strings.TrimSpace(events), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d events, want 2:\n%s", len(lines), events)
	}
	for i, name := range []string{"TestEvent", "TestEventWithGroup"} {
		var e consumer.Event
		if err := json.Unmarshal([]byte(lines[i]), &e); err != nil {
			t.Fatal(err)
		}
		data := fmt.Sprint(e.EventData)
		if e.System.Task.Name != name || e.System.Keywords.Value != 0x140 || e.System.Level.Value != 4 ||
			data != "map[Structures:[map[Field1:Value1 Field2:Value2]] TestArray:[Item1 Item2 Item3 Item4 Item5] TestField:Foo TestField2:Bar]" {
			t.Errorf("event %d: %s", i, lines[i])
		}
	}
}
