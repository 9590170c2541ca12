// Package session models the kernel's logger context, WMI_LOGGER_CONTEXT: one tracing
// session with its trace buffers, the per-processor current buffers, the free and flush
// lists, the logger goroutine that seals full buffers and hands them to a sink, and the
// session's counters.
//
// Sources: the Windows Research Kernel's buffer manager (WRK v1.2, tracelog.c, Windows
// Server 2003 SP1) for the algorithms; for the structures, phnt's ntwmi.h
// (WMI_BUFFER_HEADER) and Geoff Chappell's articles "WMI_LOGGER_CONTEXT",
// "WMI_BUFFER_HEADER" and "ETW_UM_LOGGER_CONTEXT" (geoffchappell.com).
//
// # Model
//
//	writer goroutines                         logger goroutine
//	─────────────────                         ────────────────
//	streams[p].cur ──► Buffer (InUse)         flushQ ─► close ─► wait flags ─► seal
//	     │  one atomic add reserves                                           │
//	     │  space and numbers the record;                                     │
//	     │  a plain store flags it done                                       ▼
//	     └─ full: CAS a free buffer in      streams[p].spare, ◄─ reset ◄─ sink.WriteBuffer
//	        (streams[p].spare, else the      else free
//	        free list), queue the old one
//
// A Buffer keeps CurrentOffset and a count of reservations in one 64-bit word, so a
// single LOCK XADD both reserves space and gives the writer its record's ordinal. After
// the copy the writer sets that ordinal's completion flag with a plain store
// (hw.StoreRelease). Windows instead takes a reference with the reservation and drops it
// after the copy (ReferenceCount at +0x0C of WMI_BUFFER_HEADER): two more interlocked
// operations, which the emulator's views derive from the flags (Buffer.View). The writer
// whose add carries CurrentOffset past BufferSize records SavedOffset, the true end of
// data, with the number of records before it, and clears their flags itself when they
// are all set. The logger closes a buffer by setting bit 31 of CurrentOffset, after which
// every reservation in it fails, so a writer holding a stale pointer can never write into
// a buffer that was sealed and recycled, and seals it once the flags of every record
// reserved before the close are set.
//
// # Invariants
//
//  1. A buffer MUST be in exactly one place: free (closed; on the free list or in one
//     stream's spare slot), current for one stream, queued for flush, or being sealed by
//     the logger goroutine. Otherwise its bytes are reused
//     while a writer still copies into it, or it is flushed twice.
//  2. Every reservation that succeeded MUST end inside a sealed buffer: the logger waits for
//     the completion flag of every record reserved before the close. Otherwise an
//     accepted event vanishes, or is sealed half written.
//  3. Every event a writer was told is lost MUST be counted in EventsLost. Otherwise the
//     conservation rule (sealed + lost == attempted) fails.
//  4. NumberOfBuffers MUST stay within [MinimumBuffers, MaximumBuffers], and buffers are
//     allocated only by the logger goroutine (and at start), never by writers.
//
// # Locks
//
// freeMu protects the free list, the flush queue and the list of all buffers, and
// serialises the filling of spare slots; it is a leaf lock and is never held while
// calling out. The hot path takes no lock; a writer that switches buffers takes its
// stream's spare without it and queues the full buffer under it.
package session
