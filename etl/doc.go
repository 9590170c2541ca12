// Package etl writes and reads ETL files, the on-disk form of trace buffers.
//
// An ETL file is buffer 0, the header buffer, whose first record is the log-file header
// event (a SYSTEM_TRACE_HEADER with hook 0x0000 carrying TRACE_LOGFILE_HEADER, 0x118
// bytes on x64, then the logger and file names in UTF-16), followed by every sealed trace
// buffer exactly as it was in memory: WMI_BUFFER_HEADER, 8-aligned records, 0xFF tail.
// Buffers from different processors are interleaved in flush order.
//
// Writer applies the file modes (SEQUENTIAL, CIRCULAR, NEWFILE, APPEND, PREALLOCATE,
// sizes in MB or KB) and EVENT_TRACE_COMPRESSED_MODE's compression area; it finalizes the
// header (BuffersWritten, EndTime, EventsLost, BuffersLost) when closed. Reader walks the
// buffers and records of files etwemu writes and of Windows files for the header kinds
// it knows (EVENT_HEADER with extended items, system, compact, perfinfo, classic,
// instance, message), decompresses compressed buffers, reports unknown kinds as records
// of KindUnknown, and names the file offset of whatever it cannot read. Damage costs what
// it touches: a bad record its buffer (a record of a kind it does not know too, for what
// follows it cannot be framed), a buffer that does not decompress itself; a cut or
// damaged file gives everything before the damage and then a *DamageError (the file, the
// offset, "holds N of M buffers" where the header is finalized; ERROR_FILE_CORRUPT). Work
// is bounded by the file's size: a compressed buffer decompresses to at most the file's
// BufferSize, all of them to at most 32 times their stored bytes, and a file yields at
// most as many records as an uncompressed file of its size could hold.
//
// The same walker reads the emulator's own buffers (RecordsTo, SealedRecords, and
// CountRecords, which counts by framing alone), where a marker it does not know is an
// error: those buffers hold only the kinds the emulator writes. Clock turns a record's
// timestamp into wall time, from a buffer's ETW_REF_CLOCK or a file header's reference.
// Package decode turns the records into events for every reader.
//
// Glossary:
//   - stored size: the bytes a buffer takes in the file, its BufferSize (for a compressed
//     buffer, the header and the compressed stream).
//   - filled bytes: a buffer's Offset, the end of its data, header included.
//   - compression area: the two-buffer staging space of compressed mode (Geoff Chappell,
//     "ETW_UM_LOGGER_CONTEXT").
package etl
