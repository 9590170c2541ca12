package etw

import (
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/etwemu/etwemu/clock"
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

// Time writes the FILETIME go-winio writes, which converts through UnixNano: the time
// itself within 1678 to 2262 (here against the clock package's own conversion), and
// outside that range, and for the zero time.Time, go-winio's wrapped value (its bytes,
// from go-winio's encoder); before 1970 a part of a tick is cut toward 1970.
func TestTimeEncodesAsGoWinio(t *testing.T) {
	for _, c := range []struct {
		name string
		t    time.Time
		want string // the 8 bytes, little-endian, in hex
	}{
		{"2024", time.Date(2024, 1, 2, 3, 4, 5, 123456789, time.UTC), le64hex(uint64(clock.FileTime(time.Date(2024, 1, 2, 3, 4, 5, 123456789, time.UTC))))},
		{"a zone", time.Date(2024, 1, 2, 4, 4, 5, 0, time.FixedZone("CET", 3600)), le64hex(uint64(clock.FileTime(time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC))))},
		{"zero", time.Time{}, "15aed0be6346ac00"},
		{"50 ns before 1970", time.Unix(0, -50), le64hex(clock.FileTimeUnixEpoch)},
	} {
		var em eventMetadata
		var ed eventData
		Time("t", c.t)(&em, &ed)
		if got := hex.EncodeToString(ed.b); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func le64hex(v uint64) string { return hex.EncodeToString(binary.LittleEndian.AppendUint64(nil, v)) }

// Level and Opcode print as go-winio's stringer-made methods print them.
func TestLevelAndOpcodeNames(t *testing.T) {
	got := fmt.Sprint(LevelAlways, LevelInfo, LevelVerbose, Level(6), OpcodeInfo, OpcodeDCStop, Opcode(5))
	if want := "Always Info Verbose Level(6) Info DCStop Opcode(5)"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

// selfStringer prints itself by its String method, which fmt calls rather than follow
// the map.
type selfStringer map[string]any

func (s selfStringer) String() string { return fmt.Sprintf("a map of %d", len(s)) }

// SmartField's fallback prints a value with %v, which follows maps and slices for ever
// when one holds itself (a stack overflow, which no recover catches): such a value, and
// one too large to print, is named instead; others print as %v does.
func TestSmartFieldUnprintable(t *testing.T) {
	self := map[string]any{"a": 1}
	self["self"] = self
	loop := []any{nil}
	loop[0] = loop
	type holder struct{ M map[string]any }
	huge := make(map[int]bool, 2*printBudget)
	for i := range 2 * printBudget {
		huge[i] = true
	}
	shared := []int{1, 2}
	for _, c := range []struct {
		name string
		v    any
		want string
	}{
		{"a map that holds itself", self, "(Unsupported: map[string]interface {}) (a value that holds itself)"},
		{"a slice that holds itself", loop, "(Unsupported: []interface {}) (a value that holds itself)"},
		{"through a struct and a pointer", &holder{self}, "(Unsupported: *etw.holder) (a value that holds itself)"},
		{"too large", huge, fmt.Sprintf("(Unsupported: map[int]bool) (more than %d values to print)", printBudget)},
		{"one slice twice, not a cycle", [][]int{shared, shared}, "(Unsupported: [][]int) [[1 2] [1 2]]"},
		{"a cycle whose type says itself", selfStringer(self), "(Unsupported: etw.selfStringer) a map of 2"},
		{"a cycle behind a Stringer", map[string]any{"s": selfStringer(self)}, "(Unsupported: map[string]interface {}) map[s:a map of 2]"},
		{"a plain map", map[string]int{"b": 2, "a": 1}, "(Unsupported: map[string]int) map[a:1 b:2]"},
	} {
		var em eventMetadata
		var ed eventData
		SmartField("f", c.v)(&em, &ed)
		got := string(ed.b)
		if i := strings.IndexByte(got, 0); i >= 0 {
			got = got[:i]
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}
