// Package guidtable models the kernel's table of ETW_GUID_ENTRY structures: one entry per
// provider GUID and GUID type, hashed into 64 buckets, each entry holding the provider's
// registrations and the eight TRACE_ENABLE_INFO slots through which up to eight sessions
// enable it.
//
// Sources: Geoff Chappell's articles "ETW_GUID_ENTRY", "ETW_HASH_BUCKET" and
// "ETW_GUID_TYPE" (geoffchappell.com, Kernel-Mode Windows; layouts from Microsoft's public
// symbol files), and Microsoft Learn's "TRACE_ENABLE_INFO structure" and "EnableTraceEx2
// function" with the SDK header evntrace.h.
//
// # Model
//
// A Table has 64 buckets; a GUID's bucket is the XOR of its four little-endian 32-bit
// words, masked to 6 bits. Each bucket keeps one list per GUID type (trace, notification,
// and from 10.0 group) under the bucket's lock, which stands for the kernel's
// EX_PUSH_LOCK BucketLock. (Vista and 7 kept two global lists instead; the emulator uses
// the hash for every version because the difference is not observable through the API.)
//
// An Entry is reference counted: every registration on its list and every enabled slot
// holds one reference. Enabling a GUID that nobody registered creates the entry
// ("pre-enabled"); a later registration joins it and sees the enablement at once. When
// the last reference goes, the entry leaves its bucket.
//
// # Invariants
//
//  1. Bit i of every listed registration's mask for the entry's type MUST be set exactly
//     when slot i is enabled. Otherwise writers route events to sessions that did not ask
//     for them, or miss sessions that did.
//  2. At most one enabled slot per logger id. Otherwise one session receives every event
//     twice.
//  3. RefCount MUST equal registrations plus enabled slots. Otherwise entries leak, or
//     vanish while still enabled.
//
// # Concurrency
//
// Slots and the aggregate are published through atomic pointers to immutable EnableInfo
// values, so the event-write path reads them without locks. Everything else is written
// under the bucket lock.
package guidtable
