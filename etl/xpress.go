package etl

import "encoding/binary"

// Compression of trace buffers: MS-XCA "Plain LZ77" (section 2.3 of [MS-XCA], the
// COMPRESSION_FORMAT_XPRESS of RtlCompressBuffer), the format independent ETL parsers
// decompress buffers flagged ETW_BUFFER_FLAG_COMPRESSED with. The reader decompresses with
// github.com/klauspost/compress/xpress, which has no compressor; this is one.
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
