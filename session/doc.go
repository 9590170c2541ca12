// Package session models the kernel's logger context, WMI_LOGGER_CONTEXT: one tracing
// session with its trace buffers, the per-processor current buffers, the free and flush
// lists, the logger goroutine that seals full buffers and hands them to a sink, and the
// session's counters.
//
// Sources: the Windows Research Kernel's buffer manager (tracelog.c, 5.2) for the
// algorithms, and phnt/Chappell for the structures, as digested in the project's
// etw-internals reference (sections 1-3).
//
// # Model
//
//	writer goroutines                         logger goroutine
//	─────────────────                         ────────────────
//	streams[p].cur ──► Buffer (InUse)         flushQ ─► wait refs=0 ─► close ─► seal
//	     │  one atomic add reserves                                           │
//	     │  space and takes a reference                                       ▼
//	     └─ full: CAS a free buffer in      streams[p].spare, ◄─ reset ◄─ sink.WriteBuffer
//	        (streams[p].spare, else the      else free
//	        free list), queue the old one
//
// A Buffer's CurrentOffset (+0x08) and ReferenceCount (+0x0C) are adjacent in
// WMI_BUFFER_HEADER; the emulator keeps them in one 64-bit word, so a single LOCK XADD
// both reserves space and takes the writer's reference (Windows uses two interlocked
// operations). The writer whose add carries CurrentOffset past BufferSize records
// SavedOffset, the true end of data. The logger closes a buffer by a compare-and-swap
// that needs ReferenceCount 0 and sets bit 31 of CurrentOffset; from then on every
// reservation in it fails, so a writer holding a stale pointer can never write into a
// buffer that was sealed and recycled.
//
// # Invariants
//
//  1. A buffer MUST be in exactly one place: free (closed; on the free list or in one
//     stream's spare slot), current for one stream, queued for flush, or being sealed by
//     the logger goroutine. Otherwise its bytes are reused
//     while a writer still copies into it, or it is flushed twice.
//  2. Every reservation that succeeded MUST end inside a sealed buffer: the logger waits for
//     ReferenceCount 0 before closing. Otherwise an accepted event vanishes.
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
