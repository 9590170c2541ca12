// Package emu is the emulated kernel: the facade over the GUID table, registrations and
// logger contexts, with the Win32-shaped control surface users know (StartTrace,
// ControlTrace, EnableTraceEx2, EventRegister, EventUnregister, EventEnabled,
// EventProviderEnabled, EventWrite, EventWriteTransfer), the two ways PMC counters are
// configured (SetSystemInformation, TraceSetInformation) and WriteSystemEvent for kernel
// events.
//
// # Model
//
// A Kernel is created for one Windows version and a number of emulated processors. It
// owns the logger table (64 slots; 32 in 5.0), the GUID hash table and the provider
// traits. Control operations are serialised by the kernel's control lock; event writes
// take no lock: they read the registration's masks word, then for each set bit the GUID
// entry's slot, the logger it names, and reserve in that logger's buffer for the
// processor.
//
// # Invariants
//
//  1. A registration's EnableMask bit i MUST be set exactly when slot i of its GUID entry is
//     enabled (kept by guidtable). Otherwise events reach sessions that did not ask, or miss
//     sessions that did.
//  2. A slot MUST point at the session that enabled it (EnableInfo.Target), and be cleared
//     before that session leaves the logger table. A writer that still holds a stale slot
//     reaches the stopped session itself, which refuses the event without counting it;
//     otherwise a session reusing the logger id would receive another session's events.
//  3. Every event a writer routes to a session MUST be either in that session's buffers or
//     counted in its EventsLost, including events dropped because another session failed.
//  4. Enable callbacks MUST run in the order of the state changes that caused them, and
//     never for a registration after EventUnregister returned.
//
// # Lock order
//
//	Kernel.mu (control lock)
//	├── guidtable bucket locks
//	│   └── regentry reply locks
//	└── pmc.HAL.mu (the counters loggers hold)
//	Kernel.notify.qmu (queue of pending callbacks; a leaf)
//
// Callbacks run with no kernel lock held. A callback may call control functions: its
// own notifications are queued and delivered, in order, after it returns.
package emu
