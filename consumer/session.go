package consumer

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etw"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/winerr"
)

// Session is a session a consumer reads, golang-etw's Session interface (0xrawsec's;
// tekert's adds IsKernelSession, which RealTimeSession has too, so both forks' sessions
// pass): its name, and the providers whose Filters apply to its events.
type Session interface {
	TraceName() string
	Providers() []Provider
}

// SessionSlice converts a slice whose elements implement Session (a []*RealTimeSession,
// say) into the []Session FromSessions takes, as golang-etw's SessionSlice does, by
// reflection. Like golang-etw's, it panics when i is not a slice, or when an element does
// not implement Session: a type error in the caller's program, which golang-etw's own
// tests check for.
func SessionSlice(i any) []Session {
	v := reflect.ValueOf(i)
	if v.Kind() != reflect.Slice {
		panic(fmt.Sprintf("consumer: SessionSlice: %T is not a slice of Session values", i))
	}
	out := make([]Session, 0, v.Len())
	for j := range v.Len() {
		s, ok := v.Index(j).Interface().(Session)
		if !ok {
			panic(fmt.Sprintf("consumer: SessionSlice: element %d, %s, does not implement Session", j, v.Index(j).Type()))
		}
		out = append(out, s)
	}
	return out
}

// errNilSession is what the methods of a nil *RealTimeSession return.
var errNilSession = winerr.New(winerr.ErrInvalidParameter, "consumer: nil *RealTimeSession")

// isNil reports whether s is nil or holds a nil pointer.
func isNil(s Session) bool {
	if s == nil {
		return true
	}
	v := reflect.ValueOf(s)
	return v.Kind() == reflect.Pointer && v.IsNil()
}

// RealTimeSession is a real-time tracing session on an emulated kernel, started on first
// use, that providers are enabled on: golang-etw's RealTimeSession (0xrawsec and tekert),
// which leaves out its trace-properties buffer and its kernel-session flags. The methods
// of a nil *RealTimeSession return ERROR_INVALID_PARAMETER (or nothing) and never panic.
type RealTimeSession struct {
	k    *emu.Kernel // nil when kerr says why; immutable
	kerr error       // why there is no kernel; immutable
	name string

	mu        sync.Mutex
	h         emu.TraceHandle // 0 until started; under mu
	providers []Provider      // enabled so far; under mu
	// Properties are the session's properties for StartTrace; set them before Start
	// (BufferSize, MinimumBuffers, ...). EVENT_TRACE_REAL_TIME_MODE is added.
	Properties emu.Properties
}

// NewRealTimeSession returns a real-time session named name on the process's default
// kernel (etw.Kernel: the one providers made without etw.WithKernel write to, and
// NewConsumer reads), not yet started, as golang-etw's NewRealTimeSession returns one of
// the system's. If the default kernel cannot be made, Start and EnableProvider return
// why. Its FlushTimer is 0 unless set in Properties: the session flushes every second,
// as Windows does for a real-time session.
func NewRealTimeSession(name string) *RealTimeSession { return NewRealTimeSessionOn(nil, name) }

// NewRealTimeSessionOn returns a session named name on kernel k (an etwemu addition); a
// nil k is the default kernel, as for NewRealTimeSession.
func NewRealTimeSessionOn(k *emu.Kernel, name string) *RealTimeSession {
	s := &RealTimeSession{k: k, name: name}
	if k == nil {
		if s.k, s.kerr = etw.Kernel(); s.kerr != nil {
			s.kerr = fmt.Errorf("consumer: no kernel given and the etw package's failed: %w", s.kerr)
		}
	}
	return s
}

// TraceName returns the session's name.
func (s *RealTimeSession) TraceName() string {
	if s == nil {
		return ""
	}
	return s.name
}

// IsKernelSession reports whether the session is the NT Kernel Logger or a system
// logger (EVENT_TRACE_SYSTEM_LOGGER_MODE), tekert's IsKernelSession.
func (s *RealTimeSession) IsKernelSession() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.EqualFold(s.name, emu.KernelLoggerName) || s.Properties.LogFileMode&logmode.SystemLogger != 0
}

// IsStarted reports whether Start succeeded and Stop has not run.
func (s *RealTimeSession) IsStarted() bool {
	if s == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h != 0
}

// Start starts the session (StartTrace with EVENT_TRACE_REAL_TIME_MODE). Starting a
// started session does nothing. A session of the same name left running is stopped and
// the session started again, as both golang-etw forks do on ERROR_ALREADY_EXISTS. Other
// errors are StartTrace's.
func (s *RealTimeSession) Start() error {
	if s == nil {
		return errNilSession
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.startLocked()
}

func (s *RealTimeSession) startLocked() error {
	if s.h != 0 {
		return nil
	}
	if s.kerr != nil {
		return s.kerr
	}
	p := s.Properties
	p.LogFileMode |= emu.RealTimeMode
	h, err := s.k.StartTrace(s.name, &p)
	if errors.Is(err, winerr.ErrAlreadyExists) {
		if err = s.k.StopTrace(0, s.name, &emu.Properties{}); err == nil {
			p = s.Properties
			p.LogFileMode |= emu.RealTimeMode
			h, err = s.k.StartTrace(s.name, &p)
		}
	}
	if err != nil {
		return err
	}
	s.h = h
	return nil
}

// EnableProvider starts the session if needed and enables p on it (EnableTraceEx2).
func (s *RealTimeSession) EnableProvider(p Provider) error {
	if s == nil {
		return errNilSession
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.startLocked(); err != nil {
		return err
	}
	var params *emu.EnableParameters
	if p.EnableProperties != 0 || len(p.Filters) != 0 {
		params = &emu.EnableParameters{EnableProperty: p.EnableProperties}
		for _, f := range p.Filters {
			if f == nil {
				return winerr.New(winerr.ErrInvalidParameter, "consumer: provider %s: a nil filter", p.Name)
			}
			params.Filters = append(params.Filters, f.descriptor())
		}
	}
	if err := s.k.EnableTraceEx2(s.h, p.GUID, emu.EnableProvider, p.EnableLevel, p.MatchAnyKeyword, p.MatchAllKeyword, params); err != nil {
		return err
	}
	for i := range s.providers {
		if s.providers[i].GUID == p.GUID {
			s.providers[i] = p
			return nil
		}
	}
	s.providers = append(s.providers, p)
	return nil
}

// DisableProvider disables p on the session: a provider group if it was enabled as one
// (EVENT_ENABLE_PROPERTY_PROVIDER_GROUP in the EnableProperties it was enabled with, or
// else in p's), as EnableTraceEx2 needs that bit to find the group.
func (s *RealTimeSession) DisableProvider(p Provider) error {
	if s == nil {
		return errNilSession
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == 0 {
		return nil
	}
	props := p.EnableProperties
	for _, q := range s.providers {
		if q.GUID == p.GUID {
			props = q.EnableProperties
		}
	}
	var params *emu.EnableParameters
	if group := props & EVENT_ENABLE_PROPERTY_PROVIDER_GROUP; group != 0 {
		params = &emu.EnableParameters{EnableProperty: group}
	}
	if err := s.k.EnableTraceEx2(s.h, p.GUID, emu.DisableProvider, 0, 0, 0, params); err != nil {
		return err
	}
	for i := range s.providers {
		if s.providers[i].GUID == p.GUID {
			s.providers = append(s.providers[:i], s.providers[i+1:]...)
			break
		}
	}
	return nil
}

// Providers returns the providers enabled on the session.
func (s *RealTimeSession) Providers() []Provider {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Provider(nil), s.providers...)
}

// Stop stops the session (ControlTrace STOP); consumers attached to it see its last
// buffers and end. Stopping a session not started does nothing.
func (s *RealTimeSession) Stop() error {
	if s == nil {
		return errNilSession
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == 0 {
		return nil
	}
	var p emu.Properties
	err := s.k.StopTrace(s.h, "", &p)
	s.h = 0
	return err
}

// Flush flushes the session's buffers to its consumers (ControlTrace FLUSH; tekert's
// Flush); it returns when they are delivered to the consumers' queues.
// ERROR_INVALID_PARAMETER when the session is not started.
func (s *RealTimeSession) Flush() error {
	if s == nil {
		return errNilSession
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == 0 {
		return winerr.New(winerr.ErrInvalidParameter, "consumer: Flush: session %q is not started", s.name)
	}
	return s.k.FlushTrace(s.h, "", &emu.Properties{})
}

// QueryTrace returns the session's properties and counters (ControlTrace QUERY; tekert's
// QueryTrace). ERROR_INVALID_PARAMETER when the session is not started.
func (s *RealTimeSession) QueryTrace() (*emu.Properties, error) {
	if s == nil {
		return nil, errNilSession
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == 0 {
		return nil, winerr.New(winerr.ErrInvalidParameter, "consumer: QueryTrace: session %q is not started", s.name)
	}
	p := &emu.Properties{}
	if err := s.k.QueryTrace(s.h, "", p); err != nil {
		return nil, err
	}
	return p, nil
}

// filtersOf returns the event-id filters of providers, nil when none has one.
func filtersOf(providers []Provider) map[[16]byte]map[uint16]bool {
	var f map[[16]byte]map[uint16]bool
	for _, p := range providers {
		if len(p.Filter) == 0 {
			continue
		}
		if f == nil {
			f = map[[16]byte]map[uint16]bool{}
		}
		ids := map[uint16]bool{}
		for _, id := range p.Filter {
			ids[id] = true
		}
		f[p.GUID.Bytes()] = ids
	}
	return f
}

// StopSession stops the session named name in the process's default kernel
// (etw.Kernel), as tekert's StopSession stops one on the system, for a session a previous
// run left behind: ControlTrace STOP by name. ERROR_WMI_INSTANCE_NOT_FOUND when no
// session of that name runs.
func StopSession(name string) error {
	k, err := etw.Kernel()
	if err != nil {
		return err
	}
	return k.StopTrace(0, name, &emu.Properties{})
}
