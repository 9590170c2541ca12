package etl

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Compression of trace buffers: MS-XCA "Plain LZ77" (section 2.3 of [MS-XCA], the
// COMPRESSION_FORMAT_XPRESS of RtlCompressBuffer), the format independent ETL parsers
// decompress buffers flagged ETW_BUFFER_FLAG_COMPRESSED with. This file has the writer's
// compressor and the reader's bounded decompressor (xpressDecompress); the tests compare
// the latter with github.com/klauspost/compress/xpress.
//
// The stream is groups of a 32-bit flag word (most significant bit first; 0 a literal
// byte, 1 a match) and the items it describes. A match is a 16-bit word, (offset-1)<<3 |
// min(length-3, 7), with longer lengths continued in a nibble shared by two matches, then
// a byte, then a 16- or 32-bit length. Unused flag bits of the last group are set.

const (
	xpMinMatch  = 3
	xpMaxOffset = 1 << 13 // 13 bits of offset-1
	xpHashBits  = 14
)

// xpressCompress appends the compressed form of src to dst. table is scratch space for
// the match finder, reused between calls.
func xpressCompress(dst, src []byte, table *[1 << xpHashBits]int32) []byte {
	for i := range table {
		table[i] = -1
	}
	flagPos := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	var flags uint32
	nflags := 0
	nibble := -1 // position of a half-used shared length byte, or -1
	put := func(match bool) {
		flags <<= 1
		if match {
			flags |= 1
		}
		nflags++
		if nflags == 32 {
			binary.LittleEndian.PutUint32(dst[flagPos:], flags)
			flagPos = len(dst)
			dst = append(dst, 0, 0, 0, 0)
			flags, nflags = 0, 0
		}
	}
	for i := 0; i < len(src); {
		off, n := 0, 0
		if i+4 <= len(src) {
			h := (binary.LittleEndian.Uint32(src[i:]) * 2654435761) >> (32 - xpHashBits)
			if c := int(table[h]); c >= 0 && i-c <= xpMaxOffset && src[c] == src[i] && src[c+1] == src[i+1] && src[c+2] == src[i+2] {
				off = i - c
				n = 3
				for i+n < len(src) && src[c+n] == src[i+n] {
					n++
				}
			}
			table[h] = int32(i)
		}
		if n < xpMinMatch {
			dst = append(dst, src[i])
			put(false)
			i++
			continue
		}
		l := n - 3
		word := uint16(off-1) << 3
		if l < 7 {
			dst = binary.LittleEndian.AppendUint16(dst, word|uint16(l))
		} else {
			dst = binary.LittleEndian.AppendUint16(dst, word|7)
			m := min(l-7, 15)
			if nibble < 0 {
				nibble = len(dst)
				dst = append(dst, byte(m))
			} else {
				dst[nibble] |= byte(m) << 4
				nibble = -1
			}
			if l-7 >= 15 {
				if r := l - 7 - 15; r < 255 {
					dst = append(dst, byte(r))
				} else {
					dst = append(dst, 255)
					if l < 1<<16 {
						dst = binary.LittleEndian.AppendUint16(dst, uint16(l))
					} else {
						dst = binary.LittleEndian.AppendUint16(dst, 0)
						dst = binary.LittleEndian.AppendUint32(dst, uint32(l))
					}
				}
			}
		}
		put(true)
		i += n
	}
	// Pad the last group with set bits: a match flag with no input left ends the stream.
	flags = flags<<(32-nflags) | (1<<(32-nflags) - 1)
	binary.LittleEndian.PutUint32(dst[flagPos:], flags)
	return dst
}

// xpressDecompress appends the decompressed form of the Plain LZ77 stream src to dst and
// refuses to produce more than limit bytes: the reader passes what the buffer's framing
// allows, so a stream that expands further (a few bytes can ask for gigabytes) costs no
// more than limit bytes of work before it is reported. Errors name the stream offset.
// [MS-XCA] 2.4 (Plain LZ77 decompression) is the algorithm; klauspost/compress/xpress,
// which the tests compare it with, has no output bound.
func xpressDecompress(dst, src []byte, limit int) ([]byte, error) {
	base := len(dst)
	nibble := -1 // position of a half-used shared length byte, or -1
	var flags uint32
	nflags := 0
	i := 0
	for {
		if nflags == 0 {
			if i == len(src) {
				return dst, nil
			}
			if len(src)-i < 4 {
				return dst, fmt.Errorf("XPRESS stream byte %#x: flag word cut by the end of the stream", i)
			}
			flags = binary.LittleEndian.Uint32(src[i:])
			i += 4
			nflags = 32
		}
		nflags--
		if flags&(1<<nflags) == 0 {
			if i >= len(src) {
				return dst, fmt.Errorf("XPRESS stream byte %#x: literal past the end of the stream", i)
			}
			if len(dst)-base >= limit {
				return dst, fmt.Errorf("XPRESS stream byte %#x: %w (%d bytes)", i, errExpandsPast, limit)
			}
			dst = append(dst, src[i])
			i++
			continue
		}
		if i >= len(src) {
			return dst, nil // a match flag with no input left ends the stream
		}
		at := i
		if len(src)-i < 2 {
			return dst, fmt.Errorf("XPRESS stream byte %#x: match cut by the end of the stream", at)
		}
		word := binary.LittleEndian.Uint16(src[i:])
		i += 2
		off, n := int(word>>3)+1, int(word&7)
		if n == 7 {
			if nibble < 0 {
				if i >= len(src) {
					return dst, fmt.Errorf("XPRESS stream byte %#x: match length cut by the end of the stream", at)
				}
				nibble = i
				n = int(src[i] & 15)
				i++
			} else {
				n = int(src[nibble] >> 4)
				nibble = -1
			}
			if n == 15 {
				if i >= len(src) {
					return dst, fmt.Errorf("XPRESS stream byte %#x: match length cut by the end of the stream", at)
				}
				n = int(src[i])
				i++
				if n == 255 {
					if len(src)-i < 2 {
						return dst, fmt.Errorf("XPRESS stream byte %#x: match length cut by the end of the stream", at)
					}
					n = int(binary.LittleEndian.Uint16(src[i:]))
					i += 2
					if n == 0 {
						if len(src)-i < 4 {
							return dst, fmt.Errorf("XPRESS stream byte %#x: match length cut by the end of the stream", at)
						}
						n = int(binary.LittleEndian.Uint32(src[i:]))
						i += 4
					}
					if n < 15+7 {
						return dst, fmt.Errorf("XPRESS stream byte %#x: match length %d below its form's least", at, n)
					}
					n -= 15 + 7
				}
				n += 15
			}
			n += 7
		}
		n += xpMinMatch
		have := len(dst) - base
		if off > have {
			return dst, fmt.Errorf("XPRESS stream byte %#x: match offset %d before the start of the data (%d bytes)", at, off, have)
		}
		if n > limit-have {
			return dst, fmt.Errorf("XPRESS stream byte %#x: %w (%d bytes)", at, errExpandsPast, limit)
		}
		// Copy in pieces no longer than the offset, so each piece reads bytes already
		// written: a run doubles with every piece.
		for n > 0 {
			from := len(dst) - off
			k := min(n, off)
			dst = append(dst, dst[from:from+k]...)
			n -= k
			off += k
		}
	}
}

// errExpandsPast reports a compressed buffer that decompresses to more than its framing
// allows.
var errExpandsPast = errors.New("decompresses past what the buffer's framing allows")
