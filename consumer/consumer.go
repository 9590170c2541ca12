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
	"github.com/etwemu/etwemu/etw"
	"github.com/etwemu/etwemu/winerr"
)

// Consumer delivers the events of its sources, as golang-etw's Consumer (0xrawsec and
// tekert) delivers those of ProcessTrace; it leaves out golang-etw's per-trace
// statistics and its Filter field (a Provider's Filter stands in). Sources are sessions
// (FromSessions, FromTraceNames) and ETL files (FromFiles), fixed when Start runs.
// Events go to EventCallback when it is set, else to the Events channel, which is closed
// when the consumer ends: read it, or set a callback, or the sources wait.
//
// A consumer's life is an http.Server's: NewConsumer, then Start, then the sources end
// by themselves (every session stopped, every file read; Wait returns), or Stop ends
// the consumer gracefully (the sources detach, every buffer already queued for it is
// delivered, then Events closes), or Close ends it at once (what is queued is dropped).
// The first source to fail ends the others at once (errgroup's semantics) and its error
// is Err's. Stop, Shutdown, Close, Wait and Err are valid in any state and from any
// goroutine but EventCallback's; Stop or Close before Start ends the consumer unstarted.
type Consumer struct {
	// Events receives each event when EventCallback is nil. Closed when the consumer ends;
	// events already in it stay readable.
	Events chan *Event
	// EventCallback, if set before Start, receives each event instead of Events. Calls are
	// serialized, one at a time per consumer whichever source the event came from, so the
	// callback needs no lock of its own. An error ends the consumer as a source's error
	// does, and is Err's. The callback must not call Stop, Shutdown or Close, which wait
	// for it to return: it returns an error to end the consumer from inside. Setting the
	// field after Start has no effect.
	EventCallback func(*Event) error

	// LostEvents counts the events the sessions lost while this consumer was attached to
	// them (EventsLost: refused at the writer, so lost to every consumer). LostBuffers
	// counts the buffers the sessions dropped for this consumer alone because it had too
	// many unprocessed; another consumer's losses are not in it. Skipped counts the events
	// a provider's Filter dropped. Losses are announced by RT_LostEvent events too. Added
	// to by the source goroutines, atomically.
	LostEvents  atomic.Uint64
	LostBuffers atomic.Uint64
	Skipped     atomic.Uint64

	k      *emu.Kernel        // nil when kerr says why; immutable
	kerr   error              // why there is no kernel; immutable
	ctx    context.Context    // ends every source at once; immutable
	cancel context.CancelFunc // cancels ctx

	mu       sync.Mutex
	state    state    // under mu
	sources  []source // added in stateNew only; under mu
	badSrc   error    // the first malformed source added; under mu
	detaches []func() // each running source's graceful end; written by Start under mu
	err      error    // the first error a source ended with; under mu

	callback func(*Event) error // EventCallback as Start found it; written by Start before any source runs, then read only
	cbMu     sync.Mutex         // held while the callback runs: one call at a time
	wg       sync.WaitGroup     // the source goroutines
	ended    chan struct{}      // closed (by end, once, under mu's state change) after Events
}

// state is where a consumer is in its life.
type state uint8

const (
	stateNew      state = iota // not started; sources may be added
	stateRunning               // the sources are read
	stateStopping              // Stop ran: the sources detached and deliver what is queued
	stateClosing               // Close ran, or a source failed: the sources end at once
	stateEnded                 // Events is closed and Wait returns
)

// source is one thing a consumer reads: a session by name (with the RealTimeSession
// whose providers' filters apply, when it came from FromSessions) or an ETL file.
type source struct {
	name    string           // a session's name; "" for a file
	session *RealTimeSession // nil when added by name
	path    string           // a file's path; "" for a session
}

// NewConsumer returns a consumer of kernel k's sessions and files; ctx's end is Close.
// A nil k is the etw package's kernel (etw.Kernel), which providers made without
// etw.WithKernel write to; a nil ctx is context.Background().
func NewConsumer(ctx context.Context, k *emu.Kernel) *Consumer {
	if ctx == nil {
		ctx = context.Background()
	}
	c := &Consumer{Events: make(chan *Event, 256), k: k, ended: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(ctx)
	if k == nil {
		if c.k, c.kerr = etw.Kernel(); c.kerr != nil {
			c.kerr = fmt.Errorf("consumer: no kernel given and the etw package's failed: %w", c.kerr)
		}
	}
	return c
}

// NewRealTimeConsumer is NewConsumer (golang-etw's older name).
func NewRealTimeConsumer(ctx context.Context, k *emu.Kernel) *Consumer { return NewConsumer(ctx, k) }

// FromSessions adds sessions to read (golang-etw's FromSessions); each one's providers'
// Filters apply to its events. A nil session makes Start fail with
// ERROR_INVALID_PARAMETER. Sources are fixed at Start: added later, they are ignored.
func (c *Consumer) FromSessions(sessions ...*RealTimeSession) *Consumer {
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, s := range sessions {
		if s == nil {
			c.badLocked(winerr.New(winerr.ErrInvalidParameter, "consumer: FromSessions: session %d is nil", i))
			continue
		}
		c.addLocked(source{name: s.TraceName(), session: s})
	}
	return c
}

// FromTraceNames adds sessions to read by name (golang-etw's FromTraceNames); no
// provider Filter applies to them. Sources are fixed at Start.
func (c *Consumer) FromTraceNames(names ...string) *Consumer {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range names {
		c.addLocked(source{name: n})
	}
	return c
}

// FromFiles adds ETL files to read, through the kernel's file system (Config.FileSystem)
// or the operating system's. Sources are fixed at Start.
func (c *Consumer) FromFiles(paths ...string) *Consumer {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range paths {
		c.addLocked(source{path: p})
	}
	return c
}

func (c *Consumer) addLocked(s source) {
	if c.state == stateNew {
		c.sources = append(c.sources, s)
	}
}

func (c *Consumer) badLocked(err error) {
	if c.badSrc == nil && c.state == stateNew {
		c.badSrc = err
	}
}

// Start attaches to every session and opens every file, then reads them on goroutines
// of their own. A session must be running (ERROR_WMI_INSTANCE_NOT_FOUND otherwise) and
// in real-time mode (ERROR_INVALID_PARAMETER otherwise); the consumer attaches before
// Start returns, so no buffer the session flushes afterwards is missed. A consumer
// starts once: after a failed Start it has ended (Wait returns the error, Events is
// closed), and Start after Start, Stop or Close fails.
func (c *Consumer) Start() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state != stateNew {
		return errors.New("consumer: Start after Start, Stop or Close: a consumer starts once")
	}
	fail := func(err error) error {
		c.err = err
		c.endLocked()
		return err
	}
	if c.kerr != nil {
		return fail(c.kerr)
	}
	if c.badSrc != nil {
		return fail(c.badSrc)
	}
	c.callback = c.EventCallback
	type opened struct {
		run    func() error
		detach func()
	}
	var all []opened
	for _, s := range c.sources {
		var o opened
		var err error
		if s.path != "" {
			o.run, o.detach, err = c.open(s.path)
		} else {
			o.run, o.detach, err = c.attach(s.name, s.session)
		}
		if err != nil {
			c.cancel() // the sources opened so far end at once, delivering nothing
			for _, x := range all {
				x.run()
			}
			return fail(err)
		}
		all = append(all, o)
	}
	c.state = stateRunning
	for _, o := range all {
		c.detaches = append(c.detaches, o.detach)
		c.wg.Add(1)
		go func() {
			defer c.wg.Done()
			c.fail(o.run())
		}()
	}
	go func() {
		c.wg.Wait()
		c.mu.Lock()
		c.endLocked()
		c.mu.Unlock()
	}()
	return nil
}

// endLocked ends the consumer: Events closes, then Wait returns. Preconditions: c.mu is
// held, and no source goroutine runs.
func (c *Consumer) endLocked() {
	if c.state == stateEnded {
		return
	}
	c.state = stateEnded
	c.cancel()
	close(c.Events)
	close(c.ended)
}

// Wait blocks until the consumer has ended (its sources ended by themselves, or Stop,
// Close or a source's error ended them), then returns Err.
func (c *Consumer) Wait() error {
	<-c.ended
	return c.Err()
}

// Stop ends the consumer gracefully (golang-etw's Stop, with http.Server.Shutdown's
// semantics): the sources detach, so that the sessions deliver nothing more, and every
// buffer already queued for the consumer is delivered; then Events closes and Stop
// returns Err. A file source ends after the buffer it is reading. Stopping does not stop
// the sessions. Stop before Start ends the consumer unstarted. While events remain to
// be delivered, Stop waits for Events to be read: call it from a goroutine other than
// the reader's, or use Shutdown with a deadline, or Close.
func (c *Consumer) Stop() error { return c.Shutdown(context.Background()) }

// Shutdown is Stop, bounded by ctx as http.Server.Shutdown is: if ctx ends before every
// queued event was delivered, the consumer is closed (Close) and Shutdown returns ctx's
// error.
func (c *Consumer) Shutdown(ctx context.Context) error {
	if ctx == nil {
		ctx = context.Background()
	}
	var detaches []func()
	c.mu.Lock()
	switch c.state {
	case stateNew:
		c.endLocked()
	case stateRunning:
		c.state = stateStopping
		detaches = c.detaches
	}
	c.mu.Unlock()
	for _, d := range detaches {
		d()
	}
	select {
	case <-c.ended:
		return c.Err()
	case <-ctx.Done():
		c.Close()
		return ctx.Err()
	}
}

// Close ends the consumer at once (http.Server.Close's semantics): the sources detach
// and stop, events queued and not yet delivered are dropped (those already in Events
// stay readable), and Close returns Err once every source goroutine has ended and Events
// is closed; no EventCallback call runs after it returns. Close before Start ends the
// consumer unstarted; closing twice does nothing more.
func (c *Consumer) Close() error {
	c.mu.Lock()
	switch c.state {
	case stateNew:
		c.endLocked()
	case stateRunning, stateStopping:
		c.state = stateClosing
	}
	c.mu.Unlock()
	c.cancel()
	<-c.ended
	return c.Err()
}

// Err returns the first error a source ended with (nil while none did, and for sources
// ended by Stop, Close or the consumer's context).
func (c *Consumer) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// fail records a source's error, the first one only, and ends the other sources at once.
func (c *Consumer) fail(err error) {
	if err == nil || c.ctx.Err() != nil && errors.Is(err, c.ctx.Err()) {
		return // ended by Close, or by another source's error
	}
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	if c.state == stateRunning || c.state == stateStopping {
		c.state = stateClosing
	}
	c.mu.Unlock()
	c.cancel()
}

// emit hands one event to the callback or the channel; it fails once the consumer is
// closing.
func (c *Consumer) emit(e *Event) error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	if c.callback != nil {
		c.cbMu.Lock()
		defer c.cbMu.Unlock()
		if err := c.ctx.Err(); err != nil { // closed while waiting for the callback
			return err
		}
		return c.callback(e)
	}
	select {
	case c.Events <- e:
		return nil
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
}

// attach attaches to the running session name (OpenTrace) and returns the function that
// reads it (ProcessTrace) and the one that detaches it (CloseTrace).
func (c *Consumer) attach(name string, rs *RealTimeSession) (run func() error, detach func(), err error) {
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
	t, err := c.k.OpenTrace(name, 0)
	if err != nil {
		return nil, nil, err
	}
	lastEvents, lastBuffers := view.Stats().EventsLost, uint64(0)
	// losses announces what was lost since the last look: the session's refused events,
	// and the buffers dropped for this consumer.
	losses := func() error {
		ne, nb := view.Stats().EventsLost-lastEvents, t.BuffersLost()-lastBuffers
		lastEvents, lastBuffers = lastEvents+ne, lastBuffers+nb
		c.LostEvents.Add(ne)
		c.LostBuffers.Add(nb)
		if ne > 0 {
			if err := c.emit(lostEvent(OpcodeRTLostEvent, "EventsLost", ne, name)); err != nil {
				return err
			}
		}
		if nb > 0 {
			return c.emit(lostEvent(OpcodeRTLostBuffer, "BuffersLost", nb, name))
		}
		return nil
	}
	dec := newDecoder(name)
	return func() error {
		err := t.Process(c.ctx, func(b *etl.Buffer) error {
			if err := c.buffer(b, dec, rs); err != nil {
				return err
			}
			return losses()
		})
		if e := losses(); err == nil { // the final counts, kept even when the notice cannot be delivered
			err = e
		}
		return err
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

// open opens an ETL file and returns the function that reads it and the one that ends
// the reading after the buffer in hand. Any error the reader returns, a damaged or cut
// file included, ends the consumer with it once the events before it were delivered.
func (c *Consumer) open(path string) (run func() error, detach func(), err error) {
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
		return nil, nil, fmt.Errorf("consumer: %s: %w", path, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("consumer: %s: %w", path, err)
	}
	dec := newDecoder(path)
	rd, err := etl.NewReader(f, fi.Size())
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("consumer: %s: %w", path, err)
	}
	var detached atomic.Bool // set by detach (Stop's goroutine), read by run
	return func() error {
		defer f.Close()
		for !detached.Load() {
			if err := c.ctx.Err(); err != nil {
				return err
			}
			b, err := rd.Next()
			if err == io.EOF {
				return nil
			}
			if err == nil {
				err = c.buffer(b, dec, nil)
			}
			if err != nil {
				if c.ctx.Err() != nil && errors.Is(err, c.ctx.Err()) {
					return err
				}
				return fmt.Errorf("consumer: %s: %w", path, err)
			}
		}
		return nil
	}, func() { detached.Store(true) }, nil
}
