package quote

import (
	"strconv"
	"strings"
	"testing"
)

// Short quotes a short string whole and cuts a long one at a character boundary,
// saying its length.
func TestShort(t *testing.T) {
	if got := Short("a\x00b"); got != `"a\x00b"` {
		t.Errorf("short: %s", got)
	}
	long := strings.Repeat("a", Most-1) + "é" + strings.Repeat("b", 1<<20)
	got := Short(long)
	if want := `"` + strings.Repeat("a", Most-1) + `"… (` + strconv.Itoa(len(long)) + ` bytes)`; got != want {
		t.Errorf("long: %.100s, want %s", got, want)
	}
}

// Shown writes a short string as Printable does and cuts a long one as Short does.
func TestShown(t *testing.T) {
	if got := Shown("a\x1b[2Jb"); got != `a\x1b[2Jb` {
		t.Errorf("short: %s", got)
	}
	long := strings.Repeat("a", Most-1) + "é" + strings.Repeat("\x00", 1<<20)
	got := Shown(long)
	if want := strings.Repeat("a", Most-1) + `… (` + strconv.Itoa(len(long)) + ` bytes)`; got != want {
		t.Errorf("long: %.100s, want %s", got, want)
	}
}

// Printable escapes what a terminal acts on (escape sequences, bells, carriage returns,
// C1 controls, the bidirectional overrides that reorder a line, bytes that are not UTF-8)
// and keeps the rest, tabs and non-ASCII letters too.
func TestPrintable(t *testing.T) {
	for in, want := range map[string]string{
		"plain text, ünïcode\tand a tab":  "plain text, ünïcode\tand a tab",
		"\x1b[31mred\x07":                 `\x1b[31mred\x07`,
		"cr\rlf\n":                        `cr\x0dlf\x0a`,
		"bad \xff\xfe bytes":              `bad \xff\xfe bytes`,
		"c1 \u0085 control":               `c1 \u0085 control`,
		"a written \ufffd stays":          "a written \ufffd stays",
		"exe.\u202etxt and \u2066isolate": `exe.\u202etxt and \u2066isolate`,
	} {
		if got := Printable(in); got != want {
			t.Errorf("Printable(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCount(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{Count(0, "event"), "0 events"},
		{Count(1, "event"), "1 event"},
		{Count(uint64(2), "buffer"), "2 buffers"},
		{Count(int32(-1), "byte"), "-1 bytes"},
		{Count(uint64(1<<63), "tick"), "9223372036854775808 ticks"},
		{"processor" + S(uint16(1)), "processor"},
		{"processor" + S(uint(3)), "processors"},
	} {
		if c.got != c.want {
			t.Errorf("%q, want %q", c.got, c.want)
		}
	}
}
