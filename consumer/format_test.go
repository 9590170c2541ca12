package consumer

import (
	"fmt"
	"testing"

	tl "github.com/etwemu/etwemu/tracelogging"
)

// TestSetEventData: scalars become strings, arrays []string, and structs (top-level, or
// the elements of an array of structs) go to "Structures" in order, as golang-etw's
// EventData has them.
func TestSetEventData(t *testing.T) {
	data := map[string]any{}
	member := func(name, v string) tl.Field { return tl.Field{Name: name, In: tl.InAnsiString, Value: v} }
	setEventData(data, []tl.Field{
		{Name: "N", In: tl.InUInt32, Value: uint32(7)},
		{Name: "List", In: tl.InUInt16, Array: true, Value: []any{uint16(1), uint16(2)}},
		{Name: "S", In: tl.InStruct, Value: []tl.Field{member("a", "x"), {Name: "In", In: tl.InStruct, Value: []tl.Field{member("b", "y")}}}},
		{Name: "Many", In: tl.InStruct, Array: true, Value: []any{[]tl.Field{member("c", "z")}}},
	})
	if got := fmt.Sprint(data); got != "map[List:[1 2] N:7 Structures:[map[In:{b=\"y\"} a:x] map[c:z]]]" {
		t.Fatalf("EventData %s", got)
	}
	if _, ok := data["S"]; ok {
		t.Fatal("a struct under its own name, not golang-etw's Structures")
	}
}
