package guidtable

import (
	"fmt"
	"math/bits"
	"slices"

	"github.com/etwemu/etwemu/internal/quote"
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
// It walks the buckets in use, as DisableLogger does. An entry in a bucket the mask
// does not mark would be missed by both; the walk then finds fewer entries than the
// table counts, and Check looks at every other bucket under its lock for one such, and
// checks what it holds.
//
// visit, if not nil, is called for every entry with its registrations, under the bucket
// lock, so a caller can check the registrations' side.
func (t *Table) Check(report func(rule, detail string), visit func(e *Entry, regs []Registration)) {
	seen := 0
	walked := t.used.Load()
	for used := walked; used != 0; used &= used - 1 {
		i := bits.TrailingZeros64(used)
		b := &t.buckets[i]
		b.mu.Lock()
		if t.used.Load()&(1<<i) != 0 && b.emptyLocked() { // read again: the bit may have gone since
			report("bucket-used", fmt.Sprintf("bucket %d is marked in use and holds no entry", i))
		}
		seen += t.checkBucketLocked(i, report, visit)
		b.mu.Unlock()
	}
	if seen == t.Len() {
		return
	}
	// Fewer entries than counted (or entries came and went during the walk).
	for i := range t.buckets {
		if walked&(1<<i) != 0 {
			continue
		}
		b := &t.buckets[i]
		b.mu.Lock()
		if t.used.Load()&(1<<i) == 0 && !b.emptyLocked() {
			report("bucket-used", fmt.Sprintf("bucket %d holds entries and is not marked in use", i))
			t.checkBucketLocked(i, report, visit)
		}
		b.mu.Unlock()
	}
}

// checkBucketLocked checks the entries of bucket i (the entry-bucket rule and each
// entry's own, checkLocked), calls visit for each, and returns how many it holds.
// Preconditions: bucket i's lock is held.
func (t *Table) checkBucketLocked(i int, report func(rule, detail string), visit func(e *Entry, regs []Registration)) int {
	n := 0
	for typ, list := range t.buckets[i].lists {
		n += len(list)
		for j, e := range list {
			twice := slices.Contains(list[:j], e) // the lists are short: no map
			if Hash(e.guid) != i || int(e.typ) != typ || e.removed || twice {
				report("entry-bucket", fmt.Sprintf("%v entry %s: found in bucket %d list %v (hash %d, removed %v, listed twice %v)",
					e.typ, e.guid, i, Type(typ), Hash(e.guid), e.removed, twice))
			}
			e.checkLocked(report)
			t.checkHeldLocked(e, report)
			if visit != nil {
				visit(e, e.regsCopyLocked())
			}
		}
	}
	return n
}

// checkHeldLocked checks that the table's index of held slots has each logger that
// holds a slot in e, so that the logger's stop (DisableLogger) clears it. (The index may
// name entries whose slot has gone behind the kernel's back: a stop then finds nothing.)
// Preconditions: e's bucket lock is held.
func (t *Table) checkHeldLocked(e *Entry, report func(rule, detail string)) {
	t.heldMu.Lock()
	defer t.heldMu.Unlock()
	for i := range e.slots {
		if s := e.slots[i].Load(); s != nil {
			if _, ok := t.held[s.LoggerID][e]; !ok {
				report("held-index", fmt.Sprintf("%v entry %s: logger %d holds EnableInfo[%d], and a stop of the logger would not find it", e.typ, e.guid, s.LoggerID, i))
			}
		}
	}
}

// checkLocked checks one entry's slots, mask, aggregate and reference count.
// Preconditions: the entry's bucket lock is held.
func (e *Entry) checkLocked(report func(rule, detail string)) {
	bad := func(rule, format string, args ...any) {
		report(rule, fmt.Sprintf("%v entry %s: ", e.typ, e.guid)+fmt.Sprintf(format, args...))
	}
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
	want, got := aggregate(snap[:]), e.provider.Load()
	if got == nil || got.IsEnabled != want.IsEnabled || got.Level != want.Level ||
		got.MatchAnyKeyword != want.MatchAnyKeyword || got.MatchAllKeyword != want.MatchAllKeyword {
		bad("entry-aggregate", "ProviderEnableInfo %+v, slots aggregate to %+v", got, want)
	}
	if refs := e.refs.Load(); refs != int64(len(e.regs)+used) || refs <= 0 {
		bad("entry-refs", "RefCount %d, with %s and %s", refs, quote.Count(len(e.regs), "registration"), quote.Count(used, "used slot"))
	}
}
