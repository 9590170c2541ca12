package guidtable

import (
	"fmt"
	"slices"
)

// Check walks the table and reports every broken rule through report. It takes each
// bucket's lock in turn, so it may run while enables and registrations go on; each
// entry is seen consistent with itself.
//
// The rules:
//   - entry-bucket: an entry lives in the bucket its GUID hashes to, on the list of its
//     type, once, and is not marked removed.
//   - entry-slots: at most one slot per logger id, and every used slot says IsEnabled.
//   - entry-mask: the cached mask has bit i set exactly when slot i is used.
//   - entry-aggregate: ProviderEnableInfo is the aggregate of the used slots.
//   - entry-refs: RefCount is the registrations on the list plus the used slots, and
//     above zero (an entry whose last reference went is unlinked).
//   - bucket-used: the table's mask of buckets in use has a bucket's bit set exactly
//     when the bucket holds an entry.
//
// visit, if not nil, is called for every entry with its registrations, under the bucket
// lock, so a caller can check the registrations' side.
func (t *Table) Check(report func(rule, detail string), visit func(e *Entry, regs []Registration)) {
	for i := range t.buckets {
		b := &t.buckets[i]
		b.mu.Lock()
		if inUse := t.used.Load()&(1<<i) != 0; inUse == b.emptyLocked() {
			report("bucket-used", fmt.Sprintf("bucket %d: marked in use %v, holds entries %v", i, inUse, !b.emptyLocked()))
		}
		for typ, list := range b.lists {
			for j, e := range list {
				bad := func(rule, format string, args ...any) {
					report(rule, fmt.Sprintf("%v entry %s: ", e.typ, e.guid)+fmt.Sprintf(format, args...))
				}
				twice := slices.Contains(list[:j], e) // the lists are short: no map
				if Hash(e.guid) != i || int(e.typ) != typ || e.removed || twice {
					bad("entry-bucket", "found in bucket %d list %v (hash %d, removed %v, listed twice %v)",
						i, Type(typ), Hash(e.guid), e.removed, twice)
				}
				e.checkLocked(bad)
				if visit != nil {
					visit(e, e.regsCopyLocked())
				}
			}
		}
		b.mu.Unlock()
	}
}

// checkLocked checks one entry's slots, mask, aggregate and reference count.
// Preconditions: the entry's bucket lock is held.
func (e *Entry) checkLocked(bad func(rule, format string, args ...any)) {
	var snap [Slots]*EnableInfo
	var mask uint8
	used := 0
	for i := range e.slots {
		s := e.slots[i].Load()
		if s == nil {
			continue
		}
		snap[i], mask, used = s, mask|1<<i, used+1
		for j := range i {
			if snap[j] != nil && snap[j].LoggerID == s.LoggerID {
				bad("entry-slots", "slots %d and %d both belong to logger %d", j, i, s.LoggerID)
			}
		}
		if s.IsEnabled != 1 {
			bad("entry-slots", "used slot %d has IsEnabled %d", i, s.IsEnabled)
		}
	}
	if got := e.maskLocked(); got != mask {
		bad("entry-mask", "mask %08b, used slots %08b", got, mask)
	}
	want, got := aggregate(&snap), e.provider.Load()
	if got == nil || got.IsEnabled != want.IsEnabled || got.Level != want.Level ||
		got.MatchAnyKeyword != want.MatchAnyKeyword || got.MatchAllKeyword != want.MatchAllKeyword {
		bad("entry-aggregate", "ProviderEnableInfo %+v, slots aggregate to %+v", got, want)
	}
	if refs := e.refs.Load(); refs != int64(len(e.regs)+used) || refs <= 0 {
		bad("entry-refs", "RefCount %d, with %d registrations and %d used slots", refs, len(e.regs), used)
	}
}
