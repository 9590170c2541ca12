// Package quote writes a string a caller gave into a message, quoted and cut short: an
// error that repeated a megabyte of input whole would be a megabyte.
package quote

import (
	"strconv"
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
	cut := Most
	for i := Most; i > Most-utf8.UTFMax; i-- {
		if utf8.RuneStart(s[i]) {
			cut = i
			break
		}
	}
	return strconv.Quote(s[:cut]) + "… (" + strconv.Itoa(len(s)) + " bytes)"
}
