package runmain

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

// golangEtwEvent is the JSON of golang-etw's Event (0xrawsec's field names), as the
// examples print it; unknown fields are refused by the decoder.
type golangEtwEvent struct {
	EventData    map[string]any
	UserData     map[string]any
	ExtendedData []string
	System       struct {
		Channel     string
		Computer    string
		EventID     uint16
		Version     uint8
		EventType   string
		EventGuid   string
		Correlation struct{ ActivityID, RelatedActivityID string }
		Execution   struct{ ProcessID, ThreadID uint32 }
		Keywords    struct {
			Value uint64
			Name  string
		}
		Level struct {
			Value uint8
			Name  string
		}
		Opcode struct {
			Value uint8
			Name  string
		}
		Task struct {
			Value uint16
			Name  string
		}
		Provider    struct{ Guid, Name string }
		TimeCreated struct{ SystemTime string }
	}
}

// CheckKernelFileEvents checks that out holds at least one line of JSON in golang-etw's
// Event shape from Microsoft-Windows-Kernel-File, as the examples' provider writes it,
// and that every line is such an event.
func CheckKernelFileEvents(t *testing.T, out []byte) {
	t.Helper()
	n := 0
	for line := range bytes.Lines(out) {
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		var e golangEtwEvent
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("a line that is not golang-etw's event JSON (%v): %s", err, line)
		}
		s := e.System
		if s.Provider.Name != "Microsoft-Windows-Kernel-File" || s.Task.Name != "Create" || s.Opcode.Name != "Start" ||
			s.Level.Name != "Information" || s.Channel != "TraceLogging" || s.Computer == "" || s.TimeCreated.SystemTime == "" {
			t.Fatalf("an event not from the example's provider: %s", line)
		}
		if e.EventData["FileName"] != `C:\Windows\Temp\etwemu.tmp` || e.EventData["CreateOptions"] != "16777312" {
			t.Fatalf("EventData not formatted as golang-etw's strings: %s", line)
		}
		if !slices.Contains(e.ExtendedData, "EVENT_SCHEMA_TL") {
			t.Fatalf("ExtendedData %v", e.ExtendedData)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no event printed in the example's five-second window")
	}
	t.Logf("%d events printed", n)
}
