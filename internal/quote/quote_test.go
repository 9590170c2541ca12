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
