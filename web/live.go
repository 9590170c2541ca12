package web

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/scenario"
	"github.com/etwemu/etwemu/session"
	"github.com/etwemu/etwemu/winver"
)

// LiveConfig chooses the live kernel and its writers.
type LiveConfig struct {
	Version    winver.Version // default winver.Default
	Processors int            // emulated processors, one writer each; 1 to 64
	Payload    int            // payload bytes per event; 0 to 4096
}

// liveProvider is one of the live kernel's providers and what the sessions ask of it.
type liveProvider struct {
	name     string
	level    uint8  // enabled level on the real-time session
	keywords uint64 // enabled any-keywords
	ring     bool   // also enabled on the circular-file session
}

// liveProviders are the providers of `etwemu demo`, written the same way.
var liveProviders = []liveProvider{
	{"Demo.Network", 5, 0, false},
	{"Demo.Storage", 4, 0x1, true},
	{"Demo.Scheduler", 3, 0x4, false},
}

// Live is a kernel with logger goroutines and real clocks, two sessions (a real-time one
// whose consumer counts the buffers, and a circular log file in memory) and one writer
// goroutine per processor writing as `etwemu demo` does, until Stop.
type Live struct {
	k     *emu.Kernel // immutable
	start time.Time   // immutable

	// mu serializes Frame: the attached machine is not safe for concurrent use. The
	// writers never take it.
	mu  sync.Mutex
	m   *scenario.Machine // protected by mu
	out *switchWriter     // protected by mu

	written []paddedCount // per writer: events the sessions accepted; atomic, added to by that writer every batch
	stop    atomic.Bool   // set by Stop, read by the writers
	wg      sync.WaitGroup
	once    sync.Once
}

// paddedCount is a counter on its own cache line, so that writers do not share lines.
type paddedCount struct {
	n atomic.Uint64
	_ [56]byte
}

// StartLive starts the live kernel and its writers.
func StartLive(cfg LiveConfig) (*Live, error) {
	if cfg.Version == 0 {
		cfg.Version = winver.Default
	}
	if cfg.Processors < 1 || cfg.Processors > 64 {
		return nil, fmt.Errorf("live: %d processors: 1 to 64", cfg.Processors)
	}
	if cfg.Payload < 0 || cfg.Payload > 4096 {
		return nil, fmt.Errorf("live: payload %d bytes: 0 to 4096", cfg.Payload)
	}
	fs := &etl.MemFS{}
	fs.SetCapacity(16 << 20)
	k, err := emu.New(emu.Config{Version: cfg.Version, Processors: cfg.Processors, FileSystem: fs})
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Live, error) { k.Close(); return nil, err }
	rt, err := k.StartTrace("live", &emu.Properties{LogFileMode: logmode.RealTime, BufferSize: 16, Sink: &session.Counter{}})
	if err != nil {
		return fail(fmt.Errorf("StartTrace live: %w", err))
	}
	ring, err := k.StartTrace("ring", &emu.Properties{LogFileMode: logmode.Circular, LogFileName: "ring.etl", MaximumFileSize: 1, BufferSize: 16})
	if err != nil {
		return fail(fmt.Errorf("StartTrace ring: %w", err))
	}
	regs := make([]*emu.Registration, len(liveProviders))
	provs := make([]scenario.Provider, len(liveProviders))
	for i, p := range liveProviders {
		g := guid.FromName(p.name)
		if regs[i], err = k.EventRegister(g, nil, nil); err != nil {
			return fail(err)
		}
		provs[i] = scenario.Provider{Name: p.name, Reg: regs[i]}
		if err := k.EnableTraceEx2(rt, g, emu.EnableProvider, p.level, p.keywords, 0, nil); err != nil {
			return fail(err)
		}
		if p.ring {
			if err := k.EnableTraceEx2(ring, g, emu.EnableProvider, 4, 0, 0, nil); err != nil {
				return fail(err)
			}
		}
	}
	out := &switchWriter{}
	l := &Live{k: k, start: time.Now(), m: scenario.Attach(out, k, fs, provs...), out: out, written: make([]paddedCount, cfg.Processors)}
	for p := range cfg.Processors {
		l.wg.Add(1)
		go l.writer(p, regs, cfg.Payload)
	}
	return l, nil
}

// writer writes events on processor p until Stop, going through the providers, every
// id and the level and keyword pairs as the demo's writers do.
func (l *Live) writer(p int, regs []*emu.Registration, payloadSize int) {
	defer l.wg.Done()
	opts := &emu.WriteOptions{Processor: p, ThreadID: uint32(0x100 + 4*p)}
	payload := make([]byte, payloadSize)
	seq := 0
	for !l.stop.Load() {
		ok := uint64(0)
		for range 64 {
			r, j := regs[seq%len(regs)], seq/len(regs)
			seq++
			d := emu.EventDescriptor{ID: uint16(j % 16), Level: uint8(1 + j%5), Keyword: uint64(1) << (j % 3)}
			if l.k.EventWriteEx(r, &d, opts, payload) == nil {
				ok++
			}
		}
		l.written[p].n.Add(ok)
	}
}

// Written returns the events the sessions accepted so far and the time since the start.
func (l *Live) Written() (uint64, time.Duration) {
	var n uint64
	for i := range l.written {
		n += l.written[i].n.Load()
	}
	return n, time.Since(l.start)
}

// LiveFrame is the live picture: the views and the writers' progress.
type LiveFrame struct {
	Live    bool    `json:"live"`
	Written uint64  `json:"eventsWritten"` // events written that a session accepted
	Seconds float64 `json:"seconds"`       // since the writers started
	Views   *Views  `json:"views"`
}

// Frame reads the views of the live kernel while the writers run.
func (l *Live) Frame(ctx context.Context) (*LiveFrame, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v, err := collect(ctx, l.m, l.out)
	if err != nil {
		return nil, err
	}
	n, d := l.Written()
	return &LiveFrame{Live: true, Written: n, Seconds: d.Seconds(), Views: v}, nil
}

// Stop stops the writers and the kernel, and returns what Written would.
func (l *Live) Stop() (uint64, time.Duration) {
	var n uint64
	var d time.Duration
	l.once.Do(func() {
		l.stop.Store(true)
		l.wg.Wait()
		n, d = l.Written()
		l.k.Close()
	})
	return n, d
}
