package etw

import (
	"encoding/binary"
	"testing"
)

// A field's 16-bit count or length holds at most 65535: an array or byte string longer
// than that writes its first 65535 values and says 65535, whichever encoder writes it.
func TestCountsStopAt65535(t *testing.T) {
	const n, max = 70000, 65535
	for _, c := range []struct {
		name  string
		field FieldOpt
		size  int // bytes a value takes
	}{
		{"Uint8Array", Uint8Array("a", make([]uint8, n)), 1},
		{"Uint16Array", Uint16Array("a", make([]uint16, n)), 2},
		{"BinaryField", BinaryField("a", make([]byte, n)), 1},
	} {
		var em eventMetadata
		var ed eventData
		c.field(&em, &ed)
		if got := binary.LittleEndian.Uint16(ed.b); got != max || len(ed.b) != 2+max*c.size {
			t.Errorf("%s of %d values: count %d and %d bytes, want %d and %d", c.name, n, got, len(ed.b), max, 2+max*c.size)
		}
	}
}
