// Package quote writes a string a caller gave into a message, quoted and cut short: an
// error that repeated a megabyte of input whole would be a megabyte. Printable writes
// one unquoted, for text a user asked to have printed.
package quote

import (
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Most is how many bytes of the string Short keeps.
const Most = 64

// Short returns s quoted as strconv.Quote does; past Most bytes it keeps the first Most
// (cut at a character boundary) and says how long s was.
func Short(s string) string {
	if len(s) <= Most {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:cut(s)]) + more(s)
}

// Shown returns s as a message shows what a user typed: unquoted, what a terminal would
// act on escaped (Printable), and past Most bytes cut as Short cuts it.
func Shown(s string) string {
	if len(s) <= Most {
		return Printable(s)
	}
	return Printable(s[:cut(s)]) + more(s)
}

// cut returns where Short and Shown cut s, longer than Most bytes: at Most, or before
// the character that straddles it.
func cut(s string) int {
	for i := Most; i > Most-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			return i
		}
	}
	return Most
}

// more says how long a cut string was.
func more(s string) string { return "… (" + strconv.Itoa(len(s)) + " bytes)" }

// Printable returns s with what a terminal would act on rather than show written as Go
// escapes: control characters but the tab (an escape sequence, a bell, a carriage
// return), the bidirectional controls that reorder what follows them on the line
// (U+202E), and bytes that are not UTF-8, each \xNN, or \uNNNN past ASCII. Text without
// them comes back as it is.
func Printable(s string) string {
	acts := func(r rune) bool {
		return r == utf8.RuneError || unicode.IsControl(r) && r != '\t' || unicode.Is(unicode.Bidi_Control, r)
	}
	if !strings.ContainsFunc(s, acts) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case !acts(r) || r == utf8.RuneError && n > 1: // U+FFFD written as such is shown
			b.WriteString(s[i : i+n])
		case n == 1: // an ASCII control or a byte that is not UTF-8
			b.WriteString(`\x` + hex2(s[i]))
		default:
			q := strconv.QuoteRuneToASCII(r) // '\u0085'
			b.WriteString(q[1 : len(q)-1])
		}
		i += n
	}
	return b.String()
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// Count returns n and noun, the noun with an s unless n is 1: "1 event", "2 events".
func Count[N ~int | ~int32 | ~int64 | ~uint | ~uint16 | ~uint32 | ~uint64](n N, noun string) string {
	if n < 0 {
		return strconv.FormatInt(int64(n), 10) + " " + noun + "s"
	}
	return strconv.FormatUint(uint64(n), 10) + " " + noun + S(n)
}

// S returns "s" unless n is 1, for a noun whose count a format writes apart from it.
func S[N ~int | ~int32 | ~int64 | ~uint | ~uint16 | ~uint32 | ~uint64](n N) string {
	if n == 1 {
		return ""
	}
	return "s"
}
