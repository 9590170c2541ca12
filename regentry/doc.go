// Package regentry models ETW_REG_ENTRY, the kernel's event registration object: one per
// EventRegister (user mode) or EtwRegister (kernel mode) call, linked onto the
// ETW_GUID_ENTRY of its provider and, from 10.0, onto the entry of its provider group.
//
// Sources: Geoff Chappell's articles "ETW_REG_ENTRY" (its layout, flag values and masks)
// and "ETW_PROVIDER_TRAITS" (geoffchappell.com, Kernel-Mode Windows; layouts from
// Microsoft's public symbol files).
//
// # The masks
//
// EnableMask has one bit per enable slot of the provider's GUID entry: bit i is set when
// slot i is enabled, which is how a writer knows, without a lock, which of up to eight
// sessions to consider. GroupEnableMask (10.0+) does the same for the group's entry;
// HostEnableMask and HostGroupEnableMask (2004+) do it for the silo host's entries.
// Windows keeps these four UCHARs adjacent (x64 offsets 0x64-0x67 in 2004), so the
// emulator keeps them in one 64-bit atomic word, with a closed bit above them, and the
// write path reads all of them with a single load.
//
// Glossary:
//   - registration: what a provider holds to write events; its handle is an *Entry.
//   - slot: one of the eight TRACE_ENABLE_INFO of a GUID entry, owned by one session.
//   - traits: the provider-traits blob (name, group GUID, decode GUID), shared between
//     registrations with equal blobs.
package regentry
