package abi

import (
	"encoding/binary"
	"fmt"
)

// Record is one record found in a sealed buffer.
type Record struct {
	Offset int    // byte offset of the record in the buffer
	Size   int    // stored (unpadded) size
	Type   uint16 // the marker word: EventHeaderEvent64 for EVENT_HEADER records
	Bytes  []byte // the record's Size bytes
}

// Records walks the records of a sealed buffer: from the end of the header to the
// header's Offset (filled bytes), stepping by each record's size rounded up to 8. It
// understands EVENT_HEADER records, the only kind the emulator writes so far, and stops
// with an error naming the offset at anything else or at a size that runs past the
// filled bytes.
func Records(buf []byte, fn func(Record) error) error {
	h, ok := DecodeBufferHeader(buf)
	if !ok {
		return fmt.Errorf("abi: buffer of %d bytes is shorter than its header", len(buf))
	}
	return RecordsTo(buf, int(h.Offset), fn)
}

// RecordsTo walks the records of buf from the end of the header to end, as Records does
// for a sealed buffer; it serves buffers still being filled, whose header is not written.
func RecordsTo(buf []byte, end int, fn func(Record) error) error {
	if end < BufferHeaderSize || end > len(buf) {
		return fmt.Errorf("abi: buffer Offset %#x outside [%#x, %#x]", end, BufferHeaderSize, len(buf))
	}
	for off := BufferHeaderSize; off < end; {
		if end-off < 4 {
			return fmt.Errorf("abi: %d stray bytes at offset %#x", end-off, off)
		}
		size := int(binary.LittleEndian.Uint16(buf[off:]))
		typ := binary.LittleEndian.Uint16(buf[off+2:])
		if typ != EventHeaderEvent64 && typ != EventHeaderEvent32 {
			return fmt.Errorf("abi: unknown record marker %#04x at offset %#x", typ, off)
		}
		if size < EventHeaderSize || off+size > end {
			return fmt.Errorf("abi: record at offset %#x has size %#x, past filled bytes %#x", off, size, end)
		}
		if err := fn(Record{Offset: off, Size: size, Type: typ, Bytes: buf[off : off+size]}); err != nil {
			return err
		}
		off += Align(size)
	}
	return nil
}
