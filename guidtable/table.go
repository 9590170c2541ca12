package guidtable

import (
	"cmp"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// Type is ETW_GUID_TYPE: which list of a bucket an entry lives on.
type Type uint8

// ETW_GUID_TYPE values (Chappell, etw_guid_type).
const (
	TraceGuid        Type = 0 // EtwTraceGuidType: ordinary providers
	NotificationGuid Type = 1 // EtwNotificationGuidType: user-mode notification providers
	GroupGuid        Type = 2 // EtwGroupGuidType: provider groups, 10.0 and higher

	numTypes = 3
)

func (t Type) String() string {
	switch t {
	case TraceGuid:
		return "Trace"
	case NotificationGuid:
		return "Notification"
	case GroupGuid:
		return "Group"
	}
	return fmt.Sprintf("GuidType(%d)", uint8(t))
}

// typeSince is the rule table for which GUID types a version knows.
var typeSince = [numTypes]winver.Version{TraceGuid: winver.V6_0, NotificationGuid: winver.V6_0, GroupGuid: winver.V10_0}

// Known reports whether version v has GUID type t.
func (t Type) Known(v winver.Version) bool { return t < numTypes && v >= typeSince[t] }

// Buckets is the number of hash buckets (the size of EtwpGuidHashTable).
const Buckets = 64

// Hash returns the bucket of g: the XOR of its four little-endian 32-bit words, & 63.
func Hash(g guid.GUID) int {
	w := g.Words()
	return int((w[0] ^ w[1] ^ w[2] ^ w[3]) & (Buckets - 1))
}

// Registration is what a GUID entry needs of an ETW_REG_ENTRY on its list: a way to set the
// registration's 8-bit mask for the entry's type (EnableMask for trace and notification
// entries, GroupEnableMask for group entries).
type Registration interface {
	SetEnableMask(t Type, mask uint8)
}

// Table is the kernel's GUID hash table (EtwpGuidHashTable) for one emulated kernel.
type Table struct {
	version winver.Version // immutable
	buckets [Buckets]bucket
	count   atomic.Int64 // entries in the table; written under a bucket lock
	// used has bit i set while bucket i holds an entry, so that a walk of the table
	// (Check) skips the empty buckets.
	// [emulator choice] Not a field of EtwpGuidHashTable: a shortcut of the emulator's.
	// Bit i is written (atomic Or and And) only under bucket i's lock.
	used atomic.Uint64
	made atomic.Uint64 // entries ever made: each entry's seq; added to under a bucket lock
	// held maps each logger id to the entries in which it holds a slot, so that
	// DisableLogger visits those alone: walking every entry on each session stop made N
	// stops among N entries cost time in proportion to N squared. [emulator choice] Not
	// in EtwpGuidHashTable. Protected by heldMu, taken after a bucket lock, never before.
	heldMu sync.Mutex
	held   map[uint16]map[*Entry]struct{}
}

// bucket models ETW_HASH_BUCKET: a list head per GUID type and the bucket lock.
type bucket struct {
	mu    sync.Mutex
	lists [numTypes][]*Entry // protected by mu
}

// New returns an empty table for Windows version v.
func New(v winver.Version) *Table { return &Table{version: v} }

// Version returns the Windows version the table follows.
func (t *Table) Version() winver.Version { return t.version }

// Len returns the number of entries in the table.
func (t *Table) Len() int { return int(t.count.Load()) }

func (t *Table) checkType(typ Type) error {
	if typ >= numTypes {
		return winerr.New(winerr.ErrInvalidParameter, "GUID type %d is not an ETW_GUID_TYPE (Trace 0, Notification 1, Group 2)", uint8(typ))
	}
	if !typ.Known(t.version) {
		return winerr.New(winerr.ErrInvalidParameter, "GUID type %v is not known to Windows %s (%v)", typ, t.version, winver.Since(typeSince[typ]))
	}
	return nil
}

// findLocked returns the entry for (g, typ) in b, or nil.
// Preconditions: b.mu is held.
func (b *bucket) findLocked(g guid.GUID, typ Type) *Entry {
	for _, e := range b.lists[typ] {
		if e.guid == g {
			return e
		}
	}
	return nil
}

// getLocked returns the entry for (g, typ), creating it when absent.
// Preconditions: b.mu is held.
func (t *Table) getLocked(b *bucket, g guid.GUID, typ Type) *Entry {
	if e := b.findLocked(g, typ); e != nil {
		return e
	}
	e := &Entry{guid: g, raw: g.Bytes(), typ: typ, table: t, seq: t.made.Add(1)}
	e.provider.Store(&EnableInfo{})
	b.lists[typ] = append(b.lists[typ], e)
	t.count.Add(1)
	t.used.Or(1 << Hash(g))
	return e
}

// releaseLocked drops one reference and unlinks the entry when none remain.
// Preconditions: b.mu is held.
func (t *Table) releaseLocked(b *bucket, e *Entry) {
	if e.refs.Add(-1) > 0 {
		return
	}
	list := b.lists[e.typ]
	for i, x := range list {
		if x == e {
			b.lists[e.typ] = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	e.removed = true
	t.count.Add(-1)
	if b.emptyLocked() {
		t.used.And(^(1 << Hash(e.guid)))
	}
}

// emptyLocked reports whether b holds no entry of any type.
// Preconditions: b.mu is held.
func (b *bucket) emptyLocked() bool {
	for typ := range b.lists {
		if len(b.lists[typ]) != 0 {
			return false
		}
	}
	return true
}

// Lookup returns the entry for (g, typ), or nil when the table has none.
func (t *Table) Lookup(g guid.GUID, typ Type) *Entry {
	b := &t.buckets[Hash(g)]
	b.mu.Lock()
	defer b.mu.Unlock()
	if typ >= numTypes {
		return nil
	}
	return b.findLocked(g, typ)
}

// Register links r onto the entry for (g, typ), creating the entry if nobody registered or
// enabled g yet, and sets r's mask to the slots already enabled. It returns the entry, whose
// Provider aggregate tells the caller whether to notify r at once. A nil r is
// ERROR_INVALID_PARAMETER.
func (t *Table) Register(g guid.GUID, typ Type, r Registration) (*Entry, error) {
	if err := t.checkType(typ); err != nil {
		return nil, err
	}
	if r == nil {
		return nil, winerr.New(winerr.ErrInvalidParameter, "a nil registration cannot join the entry of %s", g)
	}
	b := &t.buckets[Hash(g)]
	b.mu.Lock()
	defer b.mu.Unlock()
	e := t.getLocked(b, g, typ)
	e.refs.Add(1)
	e.regs = append(e.regs, r)
	r.SetEnableMask(typ, e.maskLocked())
	return e, nil
}

// Unregister unlinks r from e, clears r's mask for e's type and drops r's reference. It
// reports false, changing nothing, when r was not on e's list, or e is nil.
func (t *Table) Unregister(e *Entry, r Registration) bool {
	if e == nil {
		return false
	}
	b := &t.buckets[Hash(e.guid)]
	b.mu.Lock()
	defer b.mu.Unlock()
	for i, x := range e.regs {
		if x == r {
			e.regs = append(e.regs[:i:i], e.regs[i+1:]...)
			r.SetEnableMask(e.typ, 0)
			t.releaseLocked(b, e)
			return true
		}
	}
	return false
}

// Change describes one enable, disable or update of a slot, for the caller to notify
// registrations: the entry, the slot, the registrations listed at the time of the change
// and the aggregate after it.
type Change struct {
	Entry     *Entry
	Slot      int
	Regs      []Registration
	Aggregate *EnableInfo
	Created   bool // the entry was created by this enable (pre-enable)
	Updated   bool // the session already had a slot; its values were replaced
}

// Enable gives logger info.LoggerID a slot in the entry for (g, typ), creating a
// pre-enabled entry if needed. A logger that already has a slot has its values replaced.
// With all eight slots taken by other loggers it fails with ERROR_NO_SYSTEM_RESOURCES.
func (t *Table) Enable(g guid.GUID, typ Type, info EnableInfo) (Change, error) {
	if err := t.checkType(typ); err != nil {
		return Change{}, err
	}
	b := &t.buckets[Hash(g)]
	b.mu.Lock()
	defer b.mu.Unlock()
	created := b.findLocked(g, typ) == nil
	e := t.getLocked(b, g, typ)
	slot, updated := e.slotOfLocked(info.LoggerID), true
	if slot < 0 {
		updated = false
		if slot = e.freeSlotLocked(); slot < 0 {
			// A new entry has eight free slots, so only an existing entry gets here.
			return Change{}, winerr.New(winerr.ErrNoSystemResources,
				"provider %s is already enabled by %d sessions, the most one ETW_GUID_ENTRY holds", g, Slots)
		}
		e.refs.Add(1)
	}
	info.IsEnabled = 1
	info.normalize()
	e.slots[slot].Store(&info)
	e.refreshLocked()
	t.hold(info.LoggerID, e, true)
	return Change{Entry: e, Slot: slot, Regs: e.regsCopyLocked(), Aggregate: e.provider.Load(), Created: created, Updated: updated}, nil
}

// Disable clears the slot of loggerID in the entry for (g, typ). It reports false when that
// logger has no slot there.
func (t *Table) Disable(g guid.GUID, typ Type, loggerID uint16) (Change, bool) {
	if typ >= numTypes {
		return Change{}, false
	}
	b := &t.buckets[Hash(g)]
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.findLocked(g, typ)
	if e == nil {
		return Change{}, false
	}
	return t.disableLocked(b, e, loggerID)
}

// disableLocked clears loggerID's slot in e.
// Preconditions: b.mu is held and e is in b.
func (t *Table) disableLocked(b *bucket, e *Entry, loggerID uint16) (Change, bool) {
	slot := e.slotOfLocked(loggerID)
	if slot < 0 {
		return Change{}, false
	}
	e.slots[slot].Store(nil)
	e.refreshLocked()
	t.hold(loggerID, e, false)
	c := Change{Entry: e, Slot: slot, Regs: e.regsCopyLocked(), Aggregate: e.provider.Load()}
	t.releaseLocked(b, e)
	return c, true
}

// hold records (with on) or forgets that loggerID holds a slot in e.
// Preconditions: e's bucket lock is held.
func (t *Table) hold(loggerID uint16, e *Entry, on bool) {
	t.heldMu.Lock()
	defer t.heldMu.Unlock()
	if on {
		if t.held == nil {
			t.held = map[uint16]map[*Entry]struct{}{}
		}
		if t.held[loggerID] == nil {
			t.held[loggerID] = map[*Entry]struct{}{}
		}
		t.held[loggerID][e] = struct{}{}
		return
	}
	delete(t.held[loggerID], e)
	if len(t.held[loggerID]) == 0 {
		delete(t.held, loggerID)
	}
}

// DisableLogger clears every slot that loggerID holds in any entry, as stopping a session
// does, and returns one Change per cleared slot in the order a walk of the buckets would
// find them (bucket, then type, then list order, which is the order the entries were
// made in). It visits only the entries in which loggerID held a slot when it began: an
// enable of loggerID's that runs beside it is as one that came after it.
func (t *Table) DisableLogger(loggerID uint16) []Change {
	t.heldMu.Lock()
	entries := make([]*Entry, 0, len(t.held[loggerID]))
	for e := range t.held[loggerID] {
		entries = append(entries, e)
	}
	t.heldMu.Unlock()
	slices.SortFunc(entries, func(a, b *Entry) int {
		return cmp.Or(cmp.Compare(Hash(a.guid), Hash(b.guid)), cmp.Compare(a.typ, b.typ), cmp.Compare(a.seq, b.seq))
	})
	var out []Change
	for _, e := range entries {
		b := &t.buckets[Hash(e.guid)]
		b.mu.Lock()
		if c, ok := t.disableLocked(b, e, loggerID); ok {
			out = append(out, c)
		}
		b.mu.Unlock()
	}
	return out
}

// Entries returns every entry in bucket order, then type, then insertion order.
func (t *Table) Entries() []*Entry {
	var out []*Entry
	for i := range t.buckets {
		b := &t.buckets[i]
		b.mu.Lock()
		for typ := range b.lists {
			out = append(out, b.lists[typ]...)
		}
		b.mu.Unlock()
	}
	return out
}
