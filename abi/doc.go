// Package abi holds the byte layouts that trace buffers share with ETL files: the
// 0x48-byte WMI_BUFFER_HEADER, the 0x50-byte x64 EVENT_HEADER record and its extended
// data items, with their flag and type constants.
//
// Offsets follow phnt's ntwmi.h (which asserts sizeof(WMI_BUFFER_HEADER) == 0x48) and
// Microsoft's evntcons.h. Everything is little-endian, as on x86 and x64 Windows.
//
// Glossary:
//   - buffer: a trace buffer, BufferSize bytes, header first, then 8-byte aligned records.
//   - record: one event in a buffer; its stored Size excludes the alignment padding.
//   - filled bytes: the header's Offset, the end of valid data including the header; the
//     rest of the buffer is 0xFF.
package abi
