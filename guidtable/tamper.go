package guidtable

// ClearSlotBehindKernel zeroes EnableInfo[i] as a write to kernel memory would: the
// slot reads as free (and the entry's used-slot bits, the emulator's cache of which
// slots are in use, lose bit i), while the entry's aggregate (ProviderEnableInfo), its
// reference count and its registrations' EnableMask keep what they were, because no
// control call ran to update them. It reports whether the slot held an enablement.
//
// [emulator choice] It exists to show tampering (a driver or a debugger writing
// ETW_GUID_ENTRY.EnableInfo): Windows has no such call. After it the entry breaks the
// invariants Check verifies, as the tampered kernel's structures would.
func (e *Entry) ClearSlotBehindKernel(i int) bool {
	if i < 0 || i >= Slots {
		return false
	}
	b := &e.table.buckets[Hash(e.guid)]
	b.mu.Lock()
	defer b.mu.Unlock()
	if e.slots[i].Swap(nil) == nil {
		return false
	}
	e.mask.Store(e.mask.Load() &^ (1 << i))
	return true
}
