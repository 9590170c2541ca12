package scenario

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// MaxLine is the longest line the language reads, in bytes without its line end. A
// longer line is reported by its number as soon as it passes MaxLine, without being held
// in memory, and skipped to its end by the next read: reading goes on with the line after
// it, and a caller that stops at the error (run) reads no further, whatever follows.
const MaxLine = 64 << 10

// ErrLineTooLong is the error of a line longer than MaxLine.
var ErrLineTooLong = fmt.Errorf("longer than %d bytes, the longest line a scenario may have", MaxLine)

// LineReader reads a scenario one numbered line at a time in bounded memory: it holds at
// most MaxLine bytes of a line, whatever the input. Lines end with "\n" or "\r\n"; the
// last may end with the input. A UTF-8 byte order mark before the first line is dropped.
type LineReader struct {
	r    *bufio.Reader
	n    int  // lines read so far
	skip bool // the last line was too long and its end is still to be read
}

// NewLineReader returns a LineReader that reads r.
func NewLineReader(r io.Reader) *LineReader {
	return &LineReader{r: bufio.NewReaderSize(r, 4096)}
}

// Next returns the next line without its end, and its number (the first line is 1). At
// the end of the input it returns io.EOF. A line longer than MaxLine returns
// ErrLineTooLong with its number once MaxLine+2 of its bytes are read; the next call
// skips the rest of it and reads the line after it. A read error is returned as it is,
// with the number of the line it interrupted.
func (l *LineReader) Next() (string, int, error) {
	for l.skip {
		_, err := l.r.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
		case err == io.EOF:
			l.skip = false
			return "", l.n, io.EOF
		case err != nil:
			return "", l.n, err
		default:
			l.skip = false
		}
	}
	var buf []byte
	read := 0
	for {
		chunk, err := l.r.ReadSlice('\n')
		read += len(chunk)
		if len(buf)+len(chunk) > MaxLine+2 { // room for "\r\n"
			l.n++
			l.skip = errors.Is(err, bufio.ErrBufferFull)
			return "", l.n, ErrLineTooLong
		}
		buf = append(buf, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && err != io.EOF {
			return "", l.n + 1, err
		}
		if err == io.EOF && read == 0 {
			return "", l.n, io.EOF
		}
		l.n++
		line := strings.TrimSuffix(strings.TrimSuffix(string(buf), "\n"), "\r")
		if l.n == 1 {
			line = strings.TrimPrefix(line, "\uFEFF") // a UTF-8 byte order mark, as Windows editors save one
		}
		if len(line) > MaxLine {
			return "", l.n, ErrLineTooLong
		}
		return line, l.n, nil
	}
}

// Line is one line that Lines read: its text and number, or the error reading it
// (ErrLineTooLong for a line that was skipped; the channel goes on after it).
type Line struct {
	Text string
	N    int
	Err  error
}

// Lines reads r in a goroutine and sends its lines, one at a time as they are taken,
// so that a caller waiting for input (a terminal, a pipe) can wait for ctx as well. The
// channel closes after the last line, after a read error other than ErrLineTooLong
// (sent first), or once ctx is done; a read blocked when ctx ends is left to finish
// and its line dropped.
func Lines(ctx context.Context, r io.Reader) <-chan Line {
	out := make(chan Line)
	go func() {
		defer close(out)
		lr := NewLineReader(r)
		for {
			text, n, err := lr.Next()
			if err == io.EOF {
				return
			}
			select {
			case out <- Line{text, n, err}:
			case <-ctx.Done():
				return
			}
			if err != nil && !errors.Is(err, ErrLineTooLong) {
				return
			}
		}
	}()
	return out
}
