package fuzz

import (
	"slices"
	"strings"

	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// The reference model: the same operations as the emulator, done the plain way, one at
// a time, with maps and slices. It knows the rules from the documents, not from the
// emulator's code, and predicts every outcome the harness compares: error codes, which
// sessions each event reaches or is lost in, every record a session's sink receives, every
// slot and mask bit, every callback, and the counters a query returns. Its LogFileMode
// decisions come from package oracle, not from package logmode. Nothing in it is
// concurrent and nothing is clever.

// Rules the model applies, from Geoff Chappell's "ETW_REG_ENTRY" and "LogFileMode" and
// the structures' sizes.
const (
	headerSize   = 0x48   // WMI_BUFFER_HEADER
	eventHeader  = 0x50   // EVENT_HEADER
	systemHeader = 0x20   // SYSTEM_TRACE_HEADER
	maxEvent     = 0xFFFF // EVENT_HEADER.Size is a USHORT
	modeIndep    = 0x08000000
	modeNoPerCPU = 0x10000000
)

// facts are the version-dependent facts the model predicts by, besides the LogFileMode
// rules (package oracle): each row holds from its version until the next row's,
// transcribed from the public sources named, independently of the emulator's tables.
type facts struct {
	// eventRegister: EventRegister and ETW_GUID_ENTRY enablement (EnableTraceEx2)
	// arrived in 6.0; before, both fail.
	eventRegister bool
	// groups: provider groups (EVENT_ENABLE_PROPERTY_PROVIDER_GROUP, the group trait),
	// Windows 10.
	groups bool
	// filters: EnableTraceEx2's PID and EVENT_ID filters (EVENT_FILTER_DESCRIPTOR,
	// Microsoft Learn: Windows 8.1). [emulator choice] Before, an enable that passes one
	// is refused with ERROR_NOT_SUPPORTED.
	filters bool
	// pmcCounters: how many counters a session's PMC list may name; 0 before 6.2, where
	// TraceSetInformation's and NtSetSystemInformation's PMC classes are unknown. Four to
	// 1607, then the platform's (pmcCounters).
	pmcCounters int
	// Private loggers (Microsoft Learn, "Logging Mode Constants"): how many run at once
	// in a process, and with PRIVATE_IN_PROC; before 1703 a private logger's GUID_NULL
	// finds no provider unless it runs in process (privateNeedsInProc).
	private, privateInProc int
	privateNeedsInProc     bool
	// properties: the EVENT_ENABLE_PROPERTY_* bits EnableTraceEx2 takes (Microsoft Learn,
	// ENABLE_TRACE_PARAMETERS: IGNORE_KEYWORD_0, PROVIDER_GROUP, PROCESS_START_KEY and
	// EVENT_KEY from Windows 10 1507); an enable that passes another is refused with
	// ERROR_INVALID_PARAMETER, as one for a provider group always was.
	properties uint32
}

// Every EVENT_ENABLE_PROPERTY_* bit (0xFFF), and those Windows 10 1507 brought.
const (
	allProperties  = 0xFFF
	propertiesOf10 = 0x010 | 0x020 | 0x080 | 0x100 // IGNORE_KEYWORD_0, PROVIDER_GROUP, PROCESS_START_KEY, EVENT_KEY
)

var factTable = winver.Steps[facts]{
	{Since: winver.V5_0, Value: facts{private: 1, privateInProc: 3, privateNeedsInProc: true}},
	{Since: winver.V6_0, Value: facts{eventRegister: true, private: 1, privateInProc: 3, privateNeedsInProc: true, properties: allProperties &^ propertiesOf10}},
	{Since: winver.V6_2, Value: facts{eventRegister: true, pmcCounters: 4, private: 1, privateInProc: 3, privateNeedsInProc: true, properties: allProperties &^ propertiesOf10}},
	{Since: winver.V6_3, Value: facts{eventRegister: true, filters: true, pmcCounters: 4, private: 1, privateInProc: 3, privateNeedsInProc: true, properties: allProperties &^ propertiesOf10}},
	{Since: winver.V10_0, Value: facts{eventRegister: true, groups: true, filters: true, pmcCounters: 4, private: 1, privateInProc: 3, privateNeedsInProc: true, properties: allProperties}},
	{Since: winver.V1703, Value: facts{eventRegister: true, groups: true, filters: true, pmcCounters: pmcCounters, private: 8, privateInProc: 8, properties: allProperties}},
}

type mCall struct {
	code            uint32 // 0 disable, 1 enable, 2 capture state
	level           uint8
	matchAny, match uint64
}

// lastState returns the last of calls that was an enable or a disable, or nil: a
// capture-state request changes nothing a provider keeps.
func lastState(calls []mCall) *mCall {
	for i := len(calls) - 1; i >= 0; i-- {
		if calls[i].code != 2 { // capture state
			return &calls[i]
		}
	}
	return nil
}

type mSlot struct {
	logger   uint16
	level    uint8
	any, all uint64
	filter   *filterChoice // the enable's filters; nil for none
	props    uint32        // the enable's itemProps bits: extended items each event gets
}

// itemsSize is the size, in a record, of the extended items an enablement's props add
// (the model's own reading, tlItem, of the items' layout).
func itemsSize(props uint32) int {
	n := 0
	for _, it := range itemProps {
		if props&it.prop != 0 {
			n += tlItem(it.size)
		}
	}
	return n
}

// admits is the slot's filters' test of an event of id written by process pid: each
// filter the enable passed must keep it. The run's providers are all in processID, which
// runs executable: an EXECUTABLE_NAME filter keeps its events when one of its names is
// the run's own, in whatever case.
func (sl *mSlot) admits(pid uint32, id uint16) bool {
	f := sl.filter
	if f == nil {
		return true
	}
	if f.keep != nil && !slices.Contains(f.keep, id) || f.drop != nil && slices.Contains(f.drop, id) {
		return false
	}
	if f.exe != nil && !slices.ContainsFunc(f.exe, exeChoice.self) {
		return false
	}
	if f.pid != nil {
		in := false
		for _, p := range f.pid {
			in = in || p.id(false) == pid
		}
		return in
	}
	return true
}

type mEntry struct {
	g     guid.GUID
	group bool
	order int // creation order, which is the order on the bucket's list
	slots [8]*mSlot
	regs  []*mReg
}

func (e *mEntry) refs() int {
	n := len(e.regs)
	for _, s := range e.slots {
		if s != nil {
			n++
		}
	}
	return n
}

func (e *mEntry) mask() uint8 {
	var m uint8
	for i, s := range e.slots {
		if s != nil {
			m |= 1 << i
		}
	}
	return m
}

func (e *mEntry) slotOf(id uint16) int {
	for i, s := range e.slots {
		if s != nil && s.logger == id {
			return i
		}
	}
	return -1
}

// aggregate is what callbacks receive: the highest level (0 counting as 255), the OR of
// the any-keywords (0 counting as all ones) and the AND of the all-keywords.
func (e *mEntry) aggregate() mCall { return aggregate(e) }

// aggregate is the aggregate over the slots of every entry given (nil ones left out): a
// registration in a provider group hears its own entry's sessions and its group's
// together (heard).
func aggregate(es ...*mEntry) mCall {
	var c mCall
	first := true
	for _, e := range es {
		if e == nil {
			continue
		}
		for _, s := range e.slots {
			if s == nil {
				continue
			}
			c.code = 1
			lv, any := s.level, s.any
			if lv == 0 {
				lv = 255
			}
			if any == 0 {
				any = ^uint64(0)
			}
			c.level = max(c.level, lv)
			c.matchAny |= any
			if first {
				c.match, first = s.all, false
			} else {
				c.match &= s.all
			}
		}
	}
	return c
}

// heard is what registration r's callbacks carry: the aggregate over the sessions that
// enable it, through its own entry or its group's.
func (r *mReg) heard() mCall { return aggregate(r.provider, r.group) }

type mReg struct {
	index    int // position in the run's registrations
	provider *mEntry
	group    *mEntry
	closed   bool
	calls    []mCall
}

type mStream struct {
	present bool
	closed  bool // a writer's reservation ran past its end: every later one fails too
	off     uint32
	n       int // records in the buffer
}

type mSession struct {
	id          uint16
	handle      uint64
	name        string
	mode        uint32
	bufSize     uint32 // bytes
	independent bool
	secure      bool // SECURE_MODE: no provider is granted, so every event is denied
	min, max    uint32
	total, free int  // buffers allocated, and on the free list
	stopping    bool // collection is off: the logger no longer grows the session
	lost        uint64
	denied      uint64
	written     uint64
	delivered   uint64
	streams     []mStream
	// Log file: buffers per file (-1: no limit), buffers in the current file (header
	// included), and what happens at the limit.
	file              bool
	fileCap, filePos  int
	circular, newFile bool
	// BUFFERING: full buffers stay in the ring (their record counts, oldest first) until
	// a writer short of buffers recycles them all.
	buffering   bool
	ring        []ringBuf
	overwritten uint64
	// PMC: the sources nominated (0: none) and the hook ids set.
	pmcSources int
	pmcHooks   []uint32
	// The logger held back (OpHold): buffers that leave their streams wait in queue
	// (whether each holds records) until it runs; shortage is the flag a writer that
	// found no free buffer sets, which makes the logger's next top-up add a buffer per
	// stream.
	held     bool
	queue    []bool
	shortage bool
	// armed is an interleave (OpHold holdInterleave) waiting for a write that switches
	// one of the session's buffers; onSwitch is what the model does then, set by the
	// harness for the duration of each write.
	armed    bool
	onSwitch func()
	retired  int // writers whose install failed after an interleaved write, so far
	// want is the records the session accepted, per stream, in order: what its sink
	// must receive (a BUFFERING session's, less those the ring overwrote).
	want [][]rec
}

// pmcExtra is what the session's PMC configuration adds to an event with id (or hook
// id) id: the PMC_COUNTERS item for an EVENT_HEADER event, the counters after a system
// header (at most seven).
func (s *mSession) pmcExtra(id uint32, system bool) int {
	if !slices.Contains(s.pmcHooks, id) {
		return 0
	}
	if system {
		return 8 * min(s.pmcSources, 7)
	}
	return 8 + 8*s.pmcSources
}

type entryKey struct {
	g     guid.GUID
	group bool
}

type model struct {
	version   winver.Version
	facts     facts // factTable at version
	nproc     int
	sessions  []*mSession // the running sessions, in the order they started
	byID      map[uint16]*mSession
	entries   map[entryKey]*mEntry
	regs      []*mReg
	instances uint64
	created   int
	pmcInUse  int // PMC counters the sessions hold, of pmcCounters
}

// pmcCounters is the emulated HAL's counters per processor in fuzz runs.
const pmcCounters = 8

func newModel(v winver.Version, nproc int) *model {
	return &model{version: v, facts: factTable.At(v), nproc: nproc, byID: map[uint16]*mSession{},
		entries: map[entryKey]*mEntry{}}
}

// session returns the running session named name (names are case-insensitive), or nil.
func (m *model) session(name string) *mSession {
	for _, s := range m.sessions {
		if strings.EqualFold(s.name, name) {
			return s
		}
	}
	return nil
}

func (m *model) entry(g guid.GUID, group bool, create bool) *mEntry {
	k := entryKey{g, group}
	e := m.entries[k]
	if e == nil && create {
		m.created++
		e = &mEntry{g: g, group: group, order: m.created}
		m.entries[k] = e
	}
	return e
}

// release deletes an entry whose last reference went.
func (m *model) release(e *mEntry) {
	if e.refs() == 0 {
		delete(m.entries, entryKey{e.g, e.group})
	}
}

// notify predicts the callbacks a change of entry e causes: each of its registrations
// hears what it is now enabled for (heard), as code, except that a disable which leaves
// the registration enabled through its other entry is heard as an enable.
func notify(e *mEntry, code uint32) {
	for _, r := range e.regs {
		c := r.heard()
		if code != 0 || c.code == 0 {
			c.code = code
		}
		r.calls = append(r.calls, c)
	}
}

// start predicts StartTrace: the mode rules first, then the name, then a logger id.
func (m *model) start(name string, o Op) (*mSession, error) {
	bufKB, minB, maxB := o.BufferKB, o.MinBufs, o.MaxBufs
	d := o.decide(m.version, name)
	if !d.Accepted {
		return nil, winerr.ErrInvalidParameter
	}
	mode := d.Effective
	if m.session(name) != nil {
		return nil, winerr.ErrAlreadyExists
	}
	id := uint16(2)
	if d.Private {
		// Wnode.Guid is GUID_NULL, which no provider can register: before 1703 only
		// PRIVATE_IN_PROC lets the start through. How many run at once (Microsoft Learn,
		// "Logging Mode Constants"): before 1703 one a process, or three in-process
		// ones with PRIVATE_IN_PROC; from 1703 eight.
		f := m.facts
		if f.privateNeedsInProc && mode&logmode.PrivateInProc == 0 {
			return nil, winerr.ErrWMIGuidNotFound
		}
		limit := f.private
		if mode&logmode.PrivateInProc != 0 {
			limit = f.privateInProc
		}
		running := 0 // every private logger of the process counts, whatever its mode
		for i, s := range m.byID {
			if i >= 64 && s != nil {
				running++
			}
		}
		if running >= limit {
			return nil, winerr.ErrNoSystemResources
		}
		id = 64
		for m.byID[id] != nil {
			id++
		}
	}
	for m.byID[id] != nil {
		id++
	}
	if bufKB == 0 {
		bufKB = 64
	}
	streams := m.nproc
	if mode&modeNoPerCPU != 0 {
		streams = 1
	}
	minB = max(minB, uint32(2*streams))
	if maxB == 0 {
		maxB = minB + 22
	}
	maxB = max(maxB, minB)
	buffering := mode&logmode.Buffering != 0
	if buffering {
		maxB = minB // the ring is MinimumBuffers
	}
	file, fileCap, ok := o.logFile(mode, bufKB)
	if !ok {
		return nil, winerr.ErrInvalidParameter // a circular file with no room for a trace buffer
	}
	m.instances++
	s := &mSession{id: id, handle: m.instances<<16 | uint64(id), name: name, mode: mode, bufSize: bufKB * 1024,
		independent: mode&modeIndep != 0, secure: mode&logmode.Secure != 0, min: minB, max: maxB, streams: make([]mStream, streams)}
	for i := range s.streams {
		s.streams[i] = mStream{present: true, off: headerSize}
	}
	s.total, s.free = int(minB), int(minB)-streams
	s.buffering = buffering
	if file {
		s.file, s.fileCap, s.filePos = true, fileCap, 1
		s.circular, s.newFile = mode&logmode.Circular != 0, mode&logmode.NewFile != 0
		s.written = 1 // the header buffer
	}
	m.sessions = append(m.sessions, s)
	m.byID[id] = s
	return s, nil
}

// grow is the logger's top-up, done before each buffer it writes and after each batch:
// keep MinimumBuffers free, within MaximumBuffers, while collecting.
func (s *mSession) grow() {
	n := int(s.min) - s.free
	if s.shortage {
		n, s.shortage = max(n, 0)+len(s.streams), false
	}
	if s.stopping {
		return
	}
	if n = min(n, int(s.max)-s.total); n > 0 {
		s.total += n
		s.free += n
	}
}

// service is the logger's work when it runs: write the queued buffers, then top up.
func (s *mSession) service() {
	for _, hasData := range s.queue {
		s.writeBuffer(hasData, false)
	}
	s.queue = s.queue[:0]
	s.grow()
}

// queueBuffer sends a buffer that left its stream to the logger, which writes it at
// once unless it is held back.
func (s *mSession) queueBuffer(hasData bool) {
	s.queue = append(s.queue, hasData)
	if !s.held {
		s.service()
	}
}

// short is a writer finding no free buffer: the first since the logger last topped up
// wakes it.
func (s *mSession) short() {
	if !s.shortage {
		s.shortage = true
		if !s.held {
			s.service()
		}
	}
}

// writeBuffer is the logger writing one buffer and putting it back on the free list.
// A buffer is written when it holds records, or when it carries the flush marker.
func (s *mSession) writeBuffer(hasData, marker bool) {
	s.grow()
	if hasData || marker {
		s.writeOut()
	}
	s.free++
}

// writeOut counts one sealed buffer: written, unless a full SEQUENTIAL file refuses it; a
// NEWFILE file at its limit moves on to a new file, whose header buffer counts too.
func (s *mSession) writeOut() {
	if !s.file || s.fileCap < 0 || s.circular || s.filePos+1 <= s.fileCap {
		s.written++
		s.filePos++
		return
	}
	if s.newFile {
		s.written += 2
		s.filePos = 2
	}
}

// flush predicts a flush of every stream: the current buffers leave their streams in
// processor order and are written, the last one even when empty (it carries the marker).
func (s *mSession) flush() {
	if s.buffering {
		return // an in-memory session flushes only to a snapshot
	}
	batch := s.queue
	for i := range s.streams {
		if s.streams[i].present {
			batch = append(batch, s.streams[i].off > headerSize)
		}
		s.streams[i] = mStream{}
	}
	for i, hasData := range batch {
		s.writeBuffer(hasData, i == len(batch)-1)
	}
	s.queue = batch[:0]
	s.grow()
}

// stop predicts ControlTrace stop: every slot of the session is disabled, with
// callbacks in the order of the GUID table's buckets, then everything is flushed.
func (m *model) stop(s *mSession) {
	var changed []*mEntry
	for _, e := range m.entries {
		if e.slotOf(s.id) >= 0 {
			changed = append(changed, e)
		}
	}
	sortEntries(changed)
	// The kernel takes the session out of every entry, then calls back: a registration in
	// a provider group hears the state after the stop through both of its entries.
	for _, e := range changed {
		e.slots[e.slotOf(s.id)] = nil
	}
	for _, e := range changed {
		code := uint32(1)
		if e.mask() == 0 {
			code = 0
		}
		notify(e, code)
	}
	for _, e := range changed {
		m.release(e)
	}
	s.stopping = true
	m.pmcInUse -= s.pmcSources
	if s.buffering {
		s.ring = nil // the ring goes to the observer, nowhere else
		for i := range s.streams {
			s.streams[i] = mStream{}
		}
		s.free = s.total
	} else {
		s.flush()
	}
	m.sessions = slices.DeleteFunc(m.sessions, func(x *mSession) bool { return x == s })
	delete(m.byID, s.id)
}

// bucket is the GUID table's hash: the XOR of the GUID's four little-endian words, & 63.
func bucket(g guid.GUID) int {
	b := g.Bytes()
	var x uint32
	for i := 0; i < 16; i += 4 {
		x ^= uint32(b[i]) | uint32(b[i+1])<<8 | uint32(b[i+2])<<16 | uint32(b[i+3])<<24
	}
	return int(x & 63)
}

// sortEntries orders entries as the table lists them: by bucket, then trace before
// group, then creation.
func sortEntries(es []*mEntry) {
	less := func(a, b *mEntry) bool {
		if bucket(a.g) != bucket(b.g) {
			return bucket(a.g) < bucket(b.g)
		}
		if a.group != b.group {
			return !a.group
		}
		return a.order < b.order
	}
	for i := 1; i < len(es); i++ { // insertion sort: a handful of entries
		for j := i; j > 0 && less(es[j], es[j-1]); j-- {
			es[j], es[j-1] = es[j-1], es[j]
		}
	}
}

func (m *model) disable(e *mEntry, id uint16) {
	i := e.slotOf(id)
	if i < 0 {
		return
	}
	e.slots[i] = nil
	code := uint32(1)
	if e.mask() == 0 {
		code = 0
	}
	notify(e, code)
	m.release(e)
}

// enable predicts EnableTraceEx2 for the three control codes.
func (m *model) enable(s *mSession, g guid.GUID, group bool, code uint32, level uint8, any, all uint64, filter *filterChoice, props uint32) error {
	switch code {
	case 1:
		e := m.entry(g, group, true)
		i := e.slotOf(s.id)
		if i < 0 {
			for j, sl := range e.slots {
				if sl == nil {
					i = j
					break
				}
			}
			if i < 0 {
				return winerr.ErrNoSystemResources // a ninth session
			}
		}
		e.slots[i] = &mSlot{logger: s.id, level: level, any: any, all: all, filter: filter, props: props}
		notify(e, 1)
	case 0:
		if e := m.entry(g, group, false); e != nil {
			m.disable(e, s.id)
		}
	case 2:
		e := m.entry(g, group, false)
		if e == nil || e.slotOf(s.id) < 0 {
			return winerr.ErrInvalidParameter
		}
		notify(e, 2)
	}
	return nil
}

func (m *model) register(g guid.GUID) *mReg {
	e := m.entry(g, false, true)
	r := &mReg{index: len(m.regs), provider: e}
	m.regs = append(m.regs, r)
	e.regs = append(e.regs, r)
	if c := e.aggregate(); c.code != 0 {
		r.calls = append(r.calls, c)
	}
	return r
}

func (m *model) leave(e *mEntry, r *mReg) {
	for i, x := range e.regs {
		if x == r {
			e.regs = append(e.regs[:i:i], e.regs[i+1:]...)
			break
		}
	}
	m.release(e)
}

func (m *model) unregister(r *mReg) {
	r.closed = true
	m.leave(r.provider, r)
	if r.group != nil {
		m.leave(r.group, r)
		r.group = nil
	}
}

// traits predicts EventSetInformation(EventProviderSetTraits): leave a group the traits
// no longer name, join the one they name, and hear at once if it is enabled.
func (m *model) traits(r *mReg, g guid.GUID, hasGroup bool) {
	if r.group != nil && (!hasGroup || r.group.g != g) {
		m.leave(r.group, r)
		r.group = nil
	}
	if hasGroup && r.group == nil {
		e := m.entry(g, true, true)
		e.regs = append(e.regs, r)
		r.group = e
		if e.aggregate().code != 0 {
			r.calls = append(r.calls, r.heard())
		}
	}
}

// passes is the level and keyword test of one slot.
func (sl *mSlot) passes(level uint8, kw uint64) bool {
	lv, any := sl.level, sl.any
	if lv == 0 {
		lv = 255
	}
	if any == 0 {
		any = ^uint64(0)
	}
	if level > lv {
		return false
	}
	return kw == 0 || (kw&any != 0 && kw&sl.all == sl.all)
}

// outcome is what one write did in one session.
type outcome struct {
	delivered, lost, denied uint64
}

// outcomes is what one write did in each session it reached, in the order it reached
// them: a few entries (the provider's slots, then its group's), found by a scan.
type outcomes []sessionOutcome

// sessionOutcome is one session's entry in outcomes.
type sessionOutcome struct {
	id uint16 // the session's logger id
	outcome
}

// of returns the outcome in the session of logger id id: zero where the write did not
// reach it.
func (os outcomes) of(id uint16) outcome {
	if i := os.index(id); i >= 0 {
		return os[i].outcome
	}
	return outcome{}
}

// reached reports whether the write reached the session of logger id id.
func (os outcomes) reached(id uint16) bool { return os.index(id) >= 0 }

// index returns the position of logger id id's entry, or -1.
func (os outcomes) index(id uint16) int {
	for i, o := range os {
		if o.id == id {
			return i
		}
	}
	return -1
}

// write predicts EventWriteEx: the sessions of the provider's slots in slot order, then
// those of its group's slots not yet written, each slot passing the event by level,
// keyword and its enable's filters (a session whose provider slot's filters drop the
// event may get it through the group's slot); without INDEPENDENT_SESSION_MODE a
// session after a failure loses the event.
//
// ev is the record the write makes, less its size; extra is the bytes of the extended
// items it carries besides the PMC counters.
func (m *model) write(r *mReg, level uint8, kw uint64, payload, extra, proc int, ev rec) (outcomes, error) {
	var out outcomes
	if r == nil || r.closed {
		return out, winerr.ErrInvalidHandle
	}
	if r.provider.mask() == 0 && (r.group == nil || r.group.mask() == 0) {
		return out, nil // the disabled case: nothing happens
	}
	size := eventHeader + extra + payload
	tooBig := size > maxEvent
	ev.hasTail = payload >= 8
	need := uint32(size+7) &^ 7
	var failed error
	anyDenied := false
	// deliver writes the event to session s, with the extended items that the enablement
	// through which it reaches s asks for (props).
	deliver := func(s *mSession, props uint32) {
		var o outcome
		// The record in s: its items and its PMC counters; tooBig is the event without
		// either, as the kernel tests it before it looks at any session.
		extra := itemsSize(props) + s.pmcExtra(uint32(ev.hook), false)
		size, need := size+extra, need+uint32(extra)
		switch {
		case s.secure:
			o.denied++
			s.denied++
			anyDenied = true
		case tooBig || (failed != nil && !s.independent):
			o.lost++
			s.lost++
		case need > s.bufSize-headerSize || size > maxEvent:
			o.lost++
			s.lost++
			if failed == nil {
				failed = winerr.ErrMoreData
			}
		default:
			if s.reserve(proc, need) {
				o.delivered++
				ev := ev
				ev.size, ev.items = uint16(size), props
				s.accept(proc, ev)
			} else {
				o.lost++
				if failed == nil {
					failed = winerr.ErrNotEnoughMemory
				}
			}
		}
		out = append(out, sessionOutcome{s.id, o})
	}
	for _, e := range []*mEntry{r.provider, r.group} {
		if e == nil {
			continue
		}
		for _, sl := range e.slots {
			if sl != nil && sl.passes(level, kw) && sl.admits(ev.pid, ev.hook) && !out.reached(sl.logger) {
				deliver(m.byID[sl.logger], sl.props)
			}
		}
	}
	if tooBig {
		return out, winerr.ErrArithmeticOverflow
	}
	if failed == nil && anyDenied {
		return out, winerr.ErrAccessDenied
	}
	return out, failed
}

// reserve puts a record of need bytes in processor proc's buffer, and reports whether
// it fit. A stream without a buffer (after a flush, or a shortage) takes one from the
// free list; a record that does not fit sends the buffer to the logger and takes the
// next. With no free buffer the event is lost (ERROR_NOT_ENOUGH_MEMORY) and the full
// buffer still goes to the logger.
func (s *mSession) reserve(proc int, need uint32) bool {
	if s.buffering {
		return s.reserveRing(proc, need)
	}
	st := &s.streams[proc%len(s.streams)]
	for {
		full := st.present && (st.closed || st.off+need > s.bufSize)
		if full || !st.present {
			if s.free == 0 {
				if full {
					*st = mStream{}
					s.queueBuffer(true)
				}
				s.lost++
				s.short()
				return false
			}
			s.free--
			if fn := s.onSwitch; fn != nil {
				// The switch hook: a second writer runs between this one taking a free
				// buffer and installing it. If it changes the stream (it switched first,
				// or took the buffer out), this writer's compare-and-swap fails: it
				// retires the buffer it took, back to the free list, and tries again.
				s.onSwitch = nil
				st.closed = st.present // this writer's reservation ran past the end
				before := *st
				fn()
				if *st != before {
					s.free++
					s.retired++
					continue
				}
			}
			*st = mStream{present: true, off: headerSize}
			if full {
				s.queueBuffer(true)
			}
		}
		st.off += need
		s.delivered++
		return true
	}
}

// ringBuf is a full buffer in a BUFFERING session's ring: its stream and records.
type ringBuf struct {
	stream, n int
}

// reserveRing is reserve in a BUFFERING session: a full buffer joins the ring; with no
// free buffer the oldest buffer of the ring is recycled, its events overwritten.
func (s *mSession) reserveRing(proc int, need uint32) bool {
	st := &s.streams[proc%len(s.streams)]
	if st.present && st.off+need > s.bufSize {
		s.ring = append(s.ring, ringBuf{proc % len(s.streams), st.n})
		*st = mStream{}
	}
	if !st.present {
		if s.free == 0 {
			if len(s.ring) == 0 {
				s.lost++ // every buffer is some stream's current one
				return false
			}
			old := s.ring[0]
			s.overwritten += uint64(old.n)
			s.want[old.stream] = s.want[old.stream][old.n:] // the oldest of that stream's
			s.ring = s.ring[1:]
			s.free++
		}
		s.free--
		*st = mStream{present: true, off: headerSize}
	}
	st.off += need
	st.n++
	s.delivered++
	return true
}

// pmc predicts a PMC list request (OpPMC) on session s (nil: no such session): the
// checks of both routes in the order the kernel makes them.
func (m *model) pmc(s *mSession, o Op) error {
	native, events := o.PMCFlags&pmcNative != 0, o.PMCFlags&pmcEvents != 0
	if o.Count == 0 {
		if native {
			return winerr.StatusInfoLengthMismatch
		}
		return winerr.ErrBadLength
	}
	code := func(win32, status error) error {
		if native {
			return status
		}
		return win32
	}
	limit := m.facts.pmcCounters
	if limit == 0 {
		return code(winerr.ErrNotSupported, winerr.StatusInvalidInfoClass)
	}
	if s == nil {
		return code(winerr.ErrWMIInstanceNotFound, winerr.StatusWMIInstanceNotFound)
	}
	if events {
		switch {
		case s.pmcSources == 0:
			return code(winerr.ErrInvalidParameter, winerr.StatusInvalidParameter)
		case len(s.pmcHooks) > 0:
			return code(winerr.ErrBusy, winerr.StatusDeviceBusy)
		case o.Count > 4:
			return code(winerr.ErrInvalidParameter, winerr.StatusInvalidParameter)
		}
		s.pmcHooks = o.hooks()
		return nil
	}
	switch {
	case s.pmcSources > 0:
		return code(winerr.ErrBusy, winerr.StatusDeviceBusy)
	case o.Count > limit:
		return code(winerr.ErrInvalidParameter, winerr.StatusInvalidParameter)
	case m.pmcInUse+o.Count > pmcCounters:
		return code(winerr.ErrBusy, winerr.StatusDeviceBusy)
	}
	s.pmcSources = o.Count
	m.pmcInUse += o.Count
	return nil
}

// sysWrite predicts a kernel event (OpSysWrite) written to session s (nil: no such
// session).
func (m *model) sysWrite(s *mSession, hook uint32, payload, proc int, ev rec) (outcome, error) {
	var o outcome
	if s == nil {
		return o, winerr.ErrInvalidHandle
	}
	size := systemHeader + payload
	if size > maxEvent {
		o.lost++
		s.lost++
		return o, winerr.ErrArithmeticOverflow
	}
	size += s.pmcExtra(hook, true)
	need := uint32(size+7) &^ 7
	if size > maxEvent || need > s.bufSize-headerSize {
		o.lost++
		s.lost++
		return o, winerr.ErrMoreData
	}
	if !s.reserve(proc, need) {
		o.lost++
		return o, winerr.ErrNotEnoughMemory
	}
	o.delivered++
	ev.size, ev.hasTail = uint16(size), payload >= 8
	s.accept(proc, ev)
	return o, nil
}

// accept notes a record the session took on processor proc: its sink receives it after
// those taken before on the same stream.
func (s *mSession) accept(proc int, ev rec) {
	i := proc % len(s.streams)
	for len(s.want) <= i {
		s.want = append(s.want, nil)
	}
	s.want[i] = append(s.want[i], ev)
}
