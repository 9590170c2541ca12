package consumer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/winerr"
)

// Consumer delivers the events of its sources: sessions (FromSessions, FromTraceNames)
// and ETL files (FromFiles). Events go to EventCallback when it is set, else to the
// Events channel, which Stop closes (after every source ended) — read it, or set a
// callback, or the sources wait.
type Consumer struct {
	// Events receives each event when EventCallback is nil. Closed when the consumer ends.
	Events chan *Event
	// EventCallback, if set before Start, receives each event instead of Events, on the
	// source's goroutine; an error stops that source and is reported by Err.
	EventCallback func(*Event) error

	// LostEvents and LostBuffers count what the sessions reported lost
	// (EventsLost, RealTimeBuffersLost) while this consumer read them; Skipped counts
	// events a provider's Filter dropped.
	LostEvents  atomic.Uint64
	LostBuffers atomic.Uint64
	Skipped     atomic.Uint64

	k       *emu.Kernel
	ctx     context.Context
	cancel  context.CancelFunc
	names   []string           // trace names to read; set before Start
	session []*RealTimeSession // sessions to read, for their filters; set before Start
	files   []string           // ETL files to read; set before Start

	wg      sync.WaitGroup
	mu      sync.Mutex
	err     error // first source error; under mu
	started bool  // under mu
	ended   chan struct{}
}

// NewConsumer returns a consumer of kernel k's sessions and files; ctx ends it.
func NewConsumer(ctx context.Context, k *emu.Kernel) *Consumer {
	ctx, cancel := context.WithCancel(ctx)
	return &Consumer{Events: make(chan *Event, 256), k: k, ctx: ctx, cancel: cancel, ended: make(chan struct{})}
}

// NewRealTimeConsumer is NewConsumer (golang-etw's older name).
func NewRealTimeConsumer(ctx context.Context, k *emu.Kernel) *Consumer { return NewConsumer(ctx, k) }

// FromSessions adds sessions to read.
func (c *Consumer) FromSessions(sessions ...*RealTimeSession) *Consumer {
	for _, s := range sessions {
		c.session = append(c.session, s)
		c.names = append(c.names, s.TraceName())
	}
	return c
}

// FromTraceNames adds sessions to read by name.
func (c *Consumer) FromTraceNames(names ...string) *Consumer {
	c.names = append(c.names, names...)
	return c
}

// FromFiles adds ETL files to read, through the kernel's file system (Config.FileSystem)
// or the operating system's.
func (c *Consumer) FromFiles(paths ...string) *Consumer {
	c.files = append(c.files, paths...)
	return c
}

// Start attaches to every session and opens every file, then reads them on goroutines
// of their own. A session must be running (ERROR_WMI_INSTANCE_NOT_FOUND otherwise) and
// in real-time mode; the consumer attaches before Start returns, so no buffer the
// session flushes afterwards is missed. A consumer starts once: after a failed Start it
// is over (Wait returns the error, Events is closed).
func (c *Consumer) Start() error {
	c.mu.Lock()
	if c.started {
		c.mu.Unlock()
		return errors.New("consumer: already started")
	}
	c.started = true
	c.mu.Unlock()
	var readers, aborts []func()
	add := func(run, abort func(), err error) error {
		if err != nil {
			for _, a := range aborts {
				a()
			}
			c.cancel()
			c.fail(err)
			close(c.Events) // the consumer is over: Wait and Stop return, Events ends
			close(c.ended)
			return err
		}
		readers, aborts = append(readers, run), append(aborts, abort)
		return nil
	}
	for i, name := range c.names {
		var rs *RealTimeSession
		if i < len(c.session) {
			rs = c.session[i]
		}
		if err := add(c.attach(name, rs)); err != nil {
			return err
		}
	}
	for _, path := range c.files {
		if err := add(c.open(path)); err != nil {
			return err
		}
	}
	for _, run := range readers {
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			run()
		}()
	}
	go func() {
		c.wg.Wait()
		close(c.Events)
		close(c.ended)
	}()
	return nil
}

// Wait blocks until every source has ended (its session stopped, its file read) and
// returns Err.
func (c *Consumer) Wait() error {
	<-c.ended
	return c.Err()
}

// Stop ends the consumer: the sources stop being read, and Stop returns once their
// goroutines are gone and Events is closed. Stopping does not stop the sessions.
func (c *Consumer) Stop() error {
	c.cancel()
	c.mu.Lock()
	started := c.started
	c.mu.Unlock()
	if started {
		go func() { // unblock a source waiting on a full Events channel
			for range c.Events {
			}
		}()
		<-c.ended
	}
	return c.Err()
}

// Err returns the first error a source ended with.
func (c *Consumer) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

func (c *Consumer) fail(err error) {
	if err == nil || errors.Is(err, context.Canceled) {
		return
	}
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.mu.Unlock()
}

// emit hands one event to the callback or the channel.
func (c *Consumer) emit(e *Event) error {
	if c.EventCallback != nil {
		return c.EventCallback(e)
	}
	select {
	case c.Events <- e:
		return nil
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
}

// attach attaches to the running session name (OpenTrace) and returns the function that
// reads it (ProcessTrace).
func (c *Consumer) attach(name string, rs *RealTimeSession) (run, abort func(), err error) {
	var view *emu.Session
	for _, s := range c.k.Sessions() {
		if s.Name() == name {
			view = s
		}
	}
	if view == nil {
		return nil, nil, winerr.New(winerr.ErrWMIInstanceNotFound, "no session %q is running", name)
	}
	if view.Mode()&emu.RealTimeMode == 0 {
		return nil, nil, winerr.New(winerr.ErrInvalidParameter, "session %q has no EVENT_TRACE_REAL_TIME_MODE", name)
	}
	st := view.Stats()
	lastEvents, lastBuffers := st.EventsLost, st.RealTimeBuffersLost
	// losses announces what the session lost since the last look.
	losses := func() error {
		st := view.Stats()
		if n := st.EventsLost - lastEvents; n > 0 {
			lastEvents = st.EventsLost
			c.LostEvents.Add(n)
			if err := c.emit(lostEvent(OpcodeRTLostEvent, "EventsLost", n, name)); err != nil {
				return err
			}
		}
		if n := st.RealTimeBuffersLost - lastBuffers; n > 0 {
			lastBuffers = st.RealTimeBuffersLost
			c.LostBuffers.Add(n)
			return c.emit(lostEvent(OpcodeRTLostBuffer, "BuffersLost", n, name))
		}
		return nil
	}
	dec := newDecoder(name)
	t, err := c.k.OpenTrace(name, 0)
	if err != nil {
		return nil, nil, err
	}
	return func() {
		err := t.Process(c.ctx, func(b *etl.Buffer) error {
			if err := c.buffer(b, dec, rs); err != nil {
				return err
			}
			return losses()
		})
		if err == nil {
			err = losses() // the stop's final counts
		}
		c.fail(err)
	}, t.Close, nil
}

// buffer emits the events of one buffer.
func (c *Consumer) buffer(b *etl.Buffer, dec *decoder, rs *RealTimeSession) error {
	var filters map[[16]byte]map[uint16]bool
	if rs != nil {
		filters = rs.filters()
	}
	return b.Records(func(r etl.Record) error {
		if r.Kind != etl.KindEventHeader {
			return nil
		}
		if ids, ok := filters[r.Event.ProviderID.Bytes()]; ok && !ids[r.Event.Descriptor.ID] {
			c.Skipped.Add(1)
			return nil
		}
		return c.emit(dec.event(b, r))
	})
}

// open opens an ETL file and returns the function that reads it.
func (c *Consumer) open(path string) (run, abort func(), err error) {
	type file interface {
		io.ReaderAt
		io.Closer
		Stat() (os.FileInfo, error)
	}
	var f file
	if fs := c.k.FileSystem(); fs != nil {
		f, err = fs.OpenFile(path, os.O_RDONLY, 0)
	} else {
		f, err = os.Open(path)
	}
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	dec := newDecoder(path)
	rd, err := etl.NewReader(f, fi.Size())
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("consumer: %s: %w", path, err)
	}
	return func() {
		defer f.Close()
		for {
			if err := c.ctx.Err(); err != nil {
				return
			}
			b, err := rd.Next()
			if err == io.EOF {
				return
			}
			if err == nil {
				err = c.buffer(b, dec, nil)
			}
			if err != nil {
				c.fail(fmt.Errorf("consumer: %s: %w", path, err))
				return
			}
		}
	}, func() { f.Close() }, nil
}
