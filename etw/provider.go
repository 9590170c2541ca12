package etw

import (
	"errors"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/regentry"
	tl "github.com/etwemu/etwemu/tracelogging"
	"github.com/etwemu/etwemu/winerr"
)

// Provider is an ETW TraceLogging provider: a registration with the kernel and the
// provider metadata its events carry.
type Provider struct {
	ID guid.GUID

	k        *emu.Kernel
	reg      *emu.Registration
	metadata []byte // provider metadata blob; written before registration, then read only
	callback EnableCallback

	// closeMu orders Close against the enable callback: the callback records a state
	// and decides to call the user's callback under it only while closed is false; Close
	// sets closed and clears enabled under it.
	closeMu sync.Mutex
	closed  bool // under closeMu

	// The enable state the kernel's callbacks reported; written by the callback (which the
	// kernel runs serially for a registration) under closeMu, and cleared by Close under
	// closeMu; read by writers without the lock, each word atomically.
	enabled    atomic.Bool
	level      atomic.Uint32
	keywordAny atomic.Uint64
	keywordAll atomic.Uint64
}

// ProviderState tells the EnableCallback what the kernel is doing.
type ProviderState uint32

// ProviderState values (EVENT_CONTROL_CODE_*).
const (
	ProviderStateDisable      ProviderState = iota // the provider is disabled
	ProviderStateEnable                            // the provider is enabled
	ProviderStateCaptureState                      // a session asks for the provider's state
)

// EnableCallback receives the provider's enable notifications: the source session's
// GUID, the state, the aggregate level, match-any and match-all keywords, and the filter
// data (always 0 here: the emulator passes no native pointer).
type EnableCallback func(guid.GUID, ProviderState, Level, uint64, uint64, uintptr)

type providerOpts struct {
	callback EnableCallback
	id       guid.GUID
	group    guid.GUID
	kernel   *emu.Kernel
}

// ProviderOpt sets an option of NewProviderWithOptions.
type ProviderOpt func(*providerOpts)

// WithCallback sets the provider's enable callback.
func WithCallback(callback EnableCallback) ProviderOpt {
	return func(o *providerOpts) { o.callback = callback }
}

// WithID sets the provider GUID instead of deriving it from the name.
func WithID(id guid.GUID) ProviderOpt {
	return func(o *providerOpts) { o.id = id }
}

// WithGroup puts the provider in a provider group: a group trait in its metadata.
func WithGroup(group guid.GUID) ProviderOpt {
	return func(o *providerOpts) { o.group = group }
}

// WithKernel registers the provider with k rather than the package's kernel (an etwemu
// option; go-winio has one kernel).
func WithKernel(k *emu.Kernel) ProviderOpt {
	return func(o *providerOpts) { o.kernel = k }
}

var (
	kernelMu sync.Mutex
	kernel   *emu.Kernel // the package's kernel; under kernelMu
)

// SetKernel makes k the kernel that providers created without WithKernel register with.
func SetKernel(k *emu.Kernel) {
	kernelMu.Lock()
	kernel = k
	kernelMu.Unlock()
}

// Kernel returns the package's kernel, creating one (the default Windows version, one
// emulated processor per CPU) on first use when SetKernel was not called.
func Kernel() (*emu.Kernel, error) {
	kernelMu.Lock()
	defer kernelMu.Unlock()
	if kernel == nil {
		k, err := emu.New(emu.Config{})
		if err != nil {
			return nil, err
		}
		kernel = k
	}
	return kernel, nil
}

// NewProvider creates and registers a provider whose GUID is derived from its name.
func NewProvider(name string, callback EnableCallback) (*Provider, error) {
	return NewProviderWithOptions(name, WithCallback(callback))
}

// NewProviderWithID creates and registers a provider with the given GUID.
func NewProviderWithID(name string, id guid.GUID, callback EnableCallback) (*Provider, error) {
	return NewProviderWithOptions(name, WithID(id), WithCallback(callback))
}

// NewProviderWithOptions creates and registers a provider: EventRegister, then
// EventSetInformation(EventProviderSetTraits) with the provider metadata (its name and
// group). If a session enabled the provider before, the callback runs before it returns,
// unless another goroutine is delivering callbacks at that moment (emu's EventRegister
// says when): IsEnabled may then say false until that goroutine has delivered it.
// Errors are the kernel's (a Windows code with the reason), or ERROR_INVALID_PARAMETER
// for a nil option, a name that holds a NUL (which would end the name in the provider
// metadata, the bytes after it read as traits) or a name too long for the metadata's
// 16-bit size.
func NewProviderWithOptions(name string, options ...ProviderOpt) (*Provider, error) {
	var o providerOpts
	for i, opt := range options {
		if opt == nil {
			return nil, winerr.New(winerr.ErrInvalidParameter, "etw: provider option %d is nil", i)
		}
		opt(&o)
	}
	if i := strings.IndexByte(name, 0); i >= 0 {
		return nil, winerr.New(winerr.ErrInvalidParameter, "etw: provider name of %d bytes holds a NUL at byte %d, where the provider metadata would end it", len(name), i)
	}
	metadata, err := providerMetadata(name, o.group)
	if err != nil {
		return nil, err
	}
	if o.id.IsZero() {
		o.id = guid.FromName(name)
	}
	k := o.kernel
	if k == nil {
		if k, err = Kernel(); err != nil {
			return nil, err
		}
	}
	p := &Provider{ID: o.id, k: k, callback: o.callback, metadata: metadata}
	reg, err := k.EventRegister(p.ID, p.enableCallback, nil)
	if err != nil {
		return nil, err
	}
	if err := k.EventSetInformation(reg, emu.EventProviderSetTraits, p.metadata); err != nil {
		_ = k.EventUnregister(reg)
		return nil, err
	}
	p.reg = reg
	return p, nil
}

// providerMetadata is the provider's traits: its name and, when group is not GUID_NULL,
// a group trait; ERROR_INVALID_PARAMETER when they do not fit the traits' 16-bit size.
func providerMetadata(name string, group guid.GUID) ([]byte, error) {
	if group.IsZero() {
		return regentry.EncodeTraits(name)
	}
	return regentry.EncodeTraits(name, regentry.GroupTrait(group))
}

// enableCallback records the kernel's enablement, then calls the user's callback; after
// Close it does neither.
func (p *Provider) enableCallback(source guid.GUID, code emu.EventControlCode, level uint8, matchAny, matchAll uint64, _ []byte, _ any) {
	p.closeMu.Lock()
	if p.closed {
		p.closeMu.Unlock()
		return
	}
	state := ProviderState(code)
	switch state {
	case ProviderStateDisable:
		p.enabled.Store(false)
	case ProviderStateEnable:
		p.level.Store(uint32(level))
		p.keywordAny.Store(matchAny)
		p.keywordAll.Store(matchAll)
		p.enabled.Store(true)
	}
	p.closeMu.Unlock()
	if p.callback != nil {
		p.callback(source, state, Level(level), matchAny, matchAll, 0)
	}
}

// String returns the provider GUID as text, "<nil>" for a nil provider.
func (p *Provider) String() string {
	if p == nil {
		return "<nil>"
	}
	return p.ID.String()
}

// Close unregisters the provider (EventUnregister); its events are no longer written.
// It wins against an enable callback in flight: once Close returns, IsEnabled and its kin
// report false, and no enable callback starts, not even one the kernel had begun to
// deliver. A callback already running when Close was called (on the goroutine of the
// control call that caused it) runs to its end; Close does not wait for it, so that the
// callback may itself call Close. Closing twice returns ERROR_INVALID_HANDLE, as
// EventUnregister does for a handle already unregistered.
func (p *Provider) Close() error {
	if p == nil {
		return nil
	}
	p.closeMu.Lock()
	p.closed = true
	p.enabled.Store(false)
	p.closeMu.Unlock()
	return p.k.EventUnregister(p.reg)
}

// Registration returns the provider's registration with the kernel (an etwemu addition,
// for views of its ETW_REG_ENTRY).
func (p *Provider) Registration() *emu.Registration {
	if p == nil {
		return nil
	}
	return p.reg
}

// IsEnabled reports whether any session enabled the provider.
func (p *Provider) IsEnabled() bool {
	return p.IsEnabledForLevelAndKeywords(LevelAlways, ^uint64(0))
}

// IsEnabledForLevel reports whether a session wants events of the level.
func (p *Provider) IsEnabledForLevel(level Level) bool {
	return p.IsEnabledForLevelAndKeywords(level, ^uint64(0))
}

// IsEnabledForLevelAndKeywords reports whether a session wants events of the level and
// keywords, by the state the enable callback last reported: the level is at most the
// enabled level (0 enables every level, as ETW reads it), and keywords 0 always pass,
// others share a bit with match-any and hold every bit of match-all.
func (p *Provider) IsEnabledForLevelAndKeywords(level Level, keywords uint64) bool {
	if p == nil || !p.enabled.Load() {
		return false
	}
	enabled := p.level.Load()
	if enabled == 0 {
		enabled = 255
	}
	if uint32(level) > enabled {
		return false
	}
	all := p.keywordAll.Load()
	if any := p.keywordAny.Load(); keywords != 0 && (any != 0 && keywords&any == 0 || keywords&all != all) {
		return false
	}
	return true
}

// writer holds one event being built; pooled so that enabled writes allocate nothing
// once warm.
type writer struct {
	opts eventOptions
	em   eventMetadata
	ed   eventData
}

var writers = sync.Pool{New: func() any { return new(writer) }}

// WriteEvent writes a TraceLogging event named name: the event options (level,
// keywords, ...) apply first; when no session wants an event of that level and
// keywords it returns nil having built nothing. Otherwise the fields are encoded and the
// event is written; errors are the kernel's EventWrite errors (ERROR_MORE_DATA,
// ERROR_NOT_ENOUGH_MEMORY, ERROR_ARITHMETIC_OVERFLOW, ...), or ERROR_INVALID_PARAMETER,
// which writes nothing, for what the TraceLogging encoding cannot say: a nil option
// (event or field, a Struct's included), metadata over 64 KB, a struct of more than 127
// fields, or a NUL in a string value, a field name or the event name (the encoding ends
// each at its first NUL).
func (p *Provider) WriteEvent(name string, eventOpts []EventOpt, fieldOpts []FieldOpt) error {
	if p == nil || !p.enabled.Load() {
		return nil
	}
	w := writers.Get().(*writer)
	defer writers.Put(w)
	w.opts = eventOptions{descriptor: defaultDescriptor}
	for i, opt := range eventOpts {
		if opt == nil {
			return winerr.New(winerr.ErrInvalidParameter, "etw: event %s: event option %d is nil", tl.QuoteName(name), i)
		}
		opt(&w.opts)
	}
	d := &w.opts.descriptor
	if !p.IsEnabledForLevelAndKeywords(Level(d.Level), d.Keyword) {
		return nil
	}
	w.em.b.Event(name, w.opts.tags)
	w.em.bad = ""
	w.ed.b = w.ed.b[:0]
	for i, opt := range fieldOpts {
		if opt == nil {
			return winerr.New(winerr.ErrInvalidParameter, "etw: event %s: field option %d is nil", tl.QuoteName(name), i)
		}
		opt(&w.em, &w.ed)
	}
	if w.em.bad != "" {
		return winerr.New(winerr.ErrInvalidParameter, "etw: event %s: %s", tl.QuoteName(name), w.em.bad)
	}
	meta, err := w.em.b.Bytes()
	if err != nil {
		if strings.IndexByte(name, 0) >= 0 { // the error is the event name's, and quotes it
			return winerr.New(winerr.ErrInvalidParameter, "etw: %v", err)
		}
		return winerr.New(winerr.ErrInvalidParameter, "etw: event %s: %v", tl.QuoteName(name), err)
	}
	o := emu.WriteOptions{Processor: emu.AnyProcessor}
	if !w.opts.activityID.IsZero() {
		o.ActivityID = &w.opts.activityID
	}
	// [UNCERTAIN] go-winio passes a pointer to the related activity id even when it is
	// zero; whether ETW then adds a RELATED_ACTIVITYID item with GUID_NULL is not
	// established. The emulator adds it only for a non-zero id.
	if !w.opts.relatedActivityID.IsZero() {
		o.RelatedActivityID = &w.opts.relatedActivityID
	}
	descs := [3]emu.DataDescriptor{
		{Data: p.metadata, Type: emu.DescriptorProviderMetadata},
		{Data: meta, Type: emu.DescriptorEventMetadata},
		{Data: w.ed.b, Type: emu.DescriptorUserData},
	}
	n := 3
	if len(w.ed.b) == 0 { // as go-winio: no data descriptor for an event without data
		n = 2
	}
	err = p.k.EventWriteDescriptors(p.reg, d, &o, descs[:n]...)
	if err != nil {
		// The kernel's refusals of the event's size come back bare (its write path does not
		// allocate); the event's name and size are known here, on a path that failed.
		size := len(p.metadata) + len(meta) + len(w.ed.b)
		switch {
		case errors.Is(err, winerr.ErrArithmeticOverflow):
			return winerr.New(winerr.ErrArithmeticOverflow, "etw: event %s: its %d bytes of provider traits, event metadata and data, with the event's header, are over ETW's 64 KB limit on an event", tl.QuoteName(name), size)
		case errors.Is(err, winerr.ErrMoreData):
			return winerr.New(winerr.ErrMoreData, "etw: event %s: its %d bytes of provider traits, event metadata and data, with the event's header, do not fit the buffers of a session that enables the provider; it is counted in that session's EventsLost", tl.QuoteName(name), size)
		}
	}
	return err
}

// GUID is a Windows GUID, with go-winio's guid.GUID fields (Data1 to Data4).
type GUID = guid.GUID
