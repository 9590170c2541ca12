package consumer

import (
	"fmt"
	"sync"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etw"
)

// RealTimeSession is a real-time tracing session on an emulated kernel, started on first
// use, that providers are enabled on: golang-etw's RealTimeSession (0xrawsec and tekert),
// which leaves out its trace-properties buffer and its kernel-session flags.
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

// NewRealTimeSession returns a session named name on k, not yet started. A nil k is the
// etw package's kernel (etw.Kernel), which providers made without etw.WithKernel write
// to; if that cannot be made, Start and EnableProvider return why.
func NewRealTimeSession(k *emu.Kernel, name string) *RealTimeSession {
	s := &RealTimeSession{k: k, name: name}
	if k == nil {
		if s.k, s.kerr = etw.Kernel(); s.kerr != nil {
			s.kerr = fmt.Errorf("consumer: no kernel given and the etw package's failed: %w", s.kerr)
		}
	}
	return s
}

// TraceName returns the session's name.
func (s *RealTimeSession) TraceName() string { return s.name }

// IsStarted reports whether Start succeeded and Stop has not run.
func (s *RealTimeSession) IsStarted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.h != 0
}

// Start starts the session (StartTrace with EVENT_TRACE_REAL_TIME_MODE). Starting a
// started session does nothing. Errors are StartTrace's, such as ERROR_ALREADY_EXISTS
// when another session has the name.
func (s *RealTimeSession) Start() error {
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
	if err != nil {
		return err
	}
	s.h = h
	return nil
}

// EnableProvider starts the session if needed and enables p on it (EnableTraceEx2).
func (s *RealTimeSession) EnableProvider(p Provider) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.startLocked(); err != nil {
		return err
	}
	if err := s.k.EnableTraceEx2(s.h, p.GUID, emu.EnableProvider, p.EnableLevel, p.MatchAnyKeyword, p.MatchAllKeyword, nil); err != nil {
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

// DisableProvider disables p on the session.
func (s *RealTimeSession) DisableProvider(p Provider) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.h == 0 {
		return nil
	}
	if err := s.k.EnableTraceEx2(s.h, p.GUID, emu.DisableProvider, 0, 0, 0, nil); err != nil {
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
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Provider(nil), s.providers...)
}

// Stop stops the session (ControlTrace STOP); consumers attached to it see its last
// buffers and end. Stopping a session not started does nothing.
func (s *RealTimeSession) Stop() error {
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

// filters returns the event-id filters of the enabled providers, nil when none has one.
func (s *RealTimeSession) filters() map[[16]byte]map[uint16]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	var f map[[16]byte]map[uint16]bool
	for _, p := range s.providers {
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
