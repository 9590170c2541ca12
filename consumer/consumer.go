package consumer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/etw"
	"github.com/etwemu/etwemu/internal/goid"
	"github.com/etwemu/etwemu/winerr"
)

// Consumer delivers the events of its sources, as golang-etw's Consumer (0xrawsec and
// tekert) delivers those of ProcessTrace; it leaves out golang-etw's per-trace
// statistics and its Filter field (a Provider's Filter stands in). Sources are sessions
// (FromSessions, FromTraceNames) and ETL files (FromFiles), fixed when Start runs.
// Events go to EventCallback, which is DefaultEventCallback unless set: it sends them to
// the Events channel, which is closed when the consumer ends: read it, or set a callback,
// or the sources wait.
//
// A consumer's life is an http.Server's: NewConsumer, then Start, then the sources end
// by themselves (every session stopped, every file read; Wait returns), or Stop ends
// it as golang-etw's Stop does (the sources detach, Events takes nothing more and what
// it holds stays readable, an EventCallback of the user's gets every buffer already
// queued, then Events closes), or Shutdown ends it gracefully (every event queued reaches
// Events too), or Close ends it at once (what is queued is dropped).
// The first source to fail ends the others at once (errgroup's semantics) and its error
// is Err's. Stop, Shutdown, Close, Wait and Err are valid in any state and from any
// goroutine. From a callback, which the consumer's end waits for, Stop, Shutdown,
// StopWithTimeout, Close and Abort end the consumer without waiting
// (ERROR_CTX_CLOSE_PENDING, as CloseTrace called from ProcessTrace's callbacks), and Wait
// and ProcessEvents refuse (ERROR_POSSIBLE_DEADLOCK); a goroutine that a callback waits
// for is not told apart from any other, so it must not wait for the consumer's end
// either. Shutdown and Wait wait for Events to be read, so the reader must not call them
// with more queued than Events holds (Stop and Close never wait for it). Stop or Close
// before Start ends the consumer unstarted. A Consumer no constructor made (a zero or nil
// one) does nothing: From* return it unchanged and every other method returns
// ERROR_INVALID_HANDLE.
type Consumer struct {
	// Events receives each event from DefaultEventCallback; it holds 4,096, as
	// 0xrawsec's does. Closed when the consumer ends; events already in it stay readable.
	Events chan *Event
	// The callbacks, golang-etw's, each called (when set before Start) in this order for
	// every event, one at a time per consumer whichever source it came from, so they need
	// no lock of their own. An error any of them returns is recorded (Err, LastError) and
	// the event goes on, as in both golang-etw forks; an event skipped by a callback is
	// counted in Filtered. They may end the consumer: Stop, Shutdown, StopWithTimeout,
	// Close and Abort return ERROR_CTX_CLOSE_PENDING at once (CloseTrace's code for a
	// successful close that takes effect later), which a callback may return in turn
	// without its being recorded as an error; the consumer then ends as the call says,
	// after the callback returns (after Stop or Shutdown, once every buffer already queued
	// is delivered). Cancelling the consumer's context from a callback closes it too.
	// Setting the callbacks after Start has no effect.
	//
	// EventRecordCallback sees the raw record first; false drops the event.
	EventRecordCallback func(*EventRecord) bool
	// EventRecordHelperCallback and then PreparedCallback (0xrawsec's name) and
	// EventPreparedCallback (tekert's name for the same step; both run when both are
	// set) see the event decoded, through its EventRecordHelper: they may Skip it, make
	// it Skippable, select or change its properties.
	EventRecordHelperCallback func(*EventRecordHelper) error
	PreparedCallback          func(*EventRecordHelper) error
	EventPreparedCallback     func(*EventRecordHelper) error
	// EventCallback receives each event: c.DefaultEventCallback, which sends it to
	// Events, unless the user sets another. Set to nil, nothing is delivered (the events
	// are counted in Filtered), as in both golang-etw forks, where a consumer that works
	// in its record or helper callbacks alone sets it so.
	EventCallback func(*Event) error

	// LostEvents counts the events the sessions lost while this consumer was attached to
	// them (EventsLost: refused at the writer, so lost to every consumer). LostBuffers
	// counts the buffers the sessions dropped for this consumer alone because it had too
	// many unprocessed; another consumer's losses are not in it, and LostBufferEvents
	// counts the events those buffers held. Skipped counts the Skippable events a full
	// Events dropped (0xrawsec's Skipped, the only events either fork counts there), and
	// Filtered those a provider's Filter or a record or helper callback dropped, and those
	// no EventCallback took (set to nil). Dropped counts the events that reached this
	// consumer and that it gave up unread because it ended first (Close, Abort, a Shutdown
	// past its deadline, its context's end, another source's failure, a Start that failed
	// part way): what was still queued for a real-time source, and the rest of the buffer
	// in hand (the rest of a file is not read, nor counted); and, after Stop, the events
	// Events no longer takes (Shutdown delivers them instead). An event dropped so is
	// counted there even when a Filter would have skipped it. Losses are announced by
	// RT_LostEvent events too, which no counter counts. Added to by the source
	// goroutines, atomically.
	LostEvents  atomic.Uint64
	LostBuffers atomic.Uint64
	// LostBufferEvents counts the events in the buffers LostBuffers counts (an etwemu
	// addition: golang-etw's RT_LostBuffer notice gives only the buffers).
	LostBufferEvents atomic.Uint64
	Skipped          atomic.Uint64
	// Filtered is an etwemu addition: golang-etw counts the events its filters and
	// callbacks drop nowhere (tekert documents them under Skipped, and counts none).
	Filtered atomic.Uint64
	Dropped  atomic.Uint64

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
	cbErr    error    // the last error a callback returned; under mu

	// The callbacks as Start found them; written by Start before any source runs, then read only.
	callback  func(*Event) error
	recordCB  func(*EventRecord) bool
	helperCBs []func(*EventRecordHelper) error
	cbMu      sync.Mutex     // held while the callback runs: one call at a time
	wg        sync.WaitGroup // the source goroutines
	// sourceIDs are the goroutine ids of the source goroutines, the only ones that call
	// the callbacks: each appends its own under mu before it reads anything.
	sourceIDs []uint64
	// atEnd are called when the consumer ends (endLocked), under mu: what a Stop,
	// Shutdown or StopWithTimeout called from a callback left to watch its context.
	atEnd   []func()
	ended   chan struct{} // closed (by end, once, under mu's state change) after Events
	stopped chan struct{} // closed by Stop (once, under mu): Events takes nothing more
}

// state is where a consumer is in its life.
type state uint8

const (
	stateNew      state = iota // not started; sources may be added
	stateRunning               // the sources are read
	stateStopping              // Stop or Shutdown ran: the sources detached and pass on what is queued (Events, after Stop, none of it)
	stateClosing               // Close ran, or a source failed: the sources end at once
	stateEnded                 // Events is closed and Wait returns
)

// source is one thing a consumer reads: a session by name (with the Session whose
// providers' filters apply, when it came from FromSessions) or an ETL file.
type source struct {
	name    string  // a session's name; "" for a file
	session Session // nil when added by name
	path    string  // a file's path; "" for a session
}

// NewConsumer returns a consumer of the process's default kernel (etw.Kernel: the one
// providers made without etw.WithKernel write to, and NewRealTimeSession starts sessions
// on), as golang-etw's NewConsumer (tekert) returns one of the system's sessions; ctx's
// end is Close, and a nil ctx is context.Background(). If the default kernel cannot be
// made, Start returns why.
func NewConsumer(ctx context.Context) *Consumer { return NewConsumerOn(ctx, nil) }

// NewRealTimeConsumer is NewConsumer (0xrawsec's name).
func NewRealTimeConsumer(ctx context.Context) *Consumer { return NewConsumerOn(ctx, nil) }

// NewConsumerOn returns a consumer of kernel k's sessions and files (an etwemu addition);
// a nil k is the default kernel, as for NewConsumer.
func NewConsumerOn(ctx context.Context, k *emu.Kernel) *Consumer {
	if ctx == nil {
		ctx = context.Background()
	}
	c := &Consumer{Events: make(chan *Event, 4096), k: k, ended: make(chan struct{}), stopped: make(chan struct{})}
	c.ctx, c.cancel = context.WithCancel(ctx)
	c.EventCallback = c.DefaultEventCallback
	if k == nil {
		if c.k, c.kerr = etw.Kernel(); c.kerr != nil {
			c.kerr = fmt.Errorf("consumer: no kernel given and the etw package's failed: %w", c.kerr)
		}
	}
	return c
}

// errNotMade is what every method of a Consumer that no constructor made returns.
var errNotMade = winerr.Because(winerr.ErrInvalidHandle, "consumer: the Consumer was not made by NewConsumer, NewRealTimeConsumer or NewConsumerOn (a zero or nil Consumer has no kernel, context or Events channel)")

// made returns errNotMade for a nil Consumer or a zero one, whose every method then
// returns it (From* do nothing, and Start says why) rather than panic or wait forever.
func (c *Consumer) made() error {
	if c == nil || c.ended == nil {
		return errNotMade
	}
	return nil
}

// FromSessions adds sessions to read (golang-etw's FromSessions); the Filter of each
// provider a session's Providers returns applies to its events, as that list stands
// when each buffer is read. A nil session makes Start fail with
// ERROR_INVALID_PARAMETER. Sources are fixed at Start: added later, they are ignored.
func (c *Consumer) FromSessions(sessions ...Session) *Consumer {
	if c.made() != nil {
		return c // Start says why
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, s := range sessions {
		if isNil(s) {
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
	if c.made() != nil {
		return c // Start says why
	}
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
	if c.made() != nil {
		return c // Start says why
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, p := range paths {
		if p == "" { // else a source with no path: a session of no name
			c.badLocked(winerr.New(winerr.ErrInvalidParameter, "consumer: FromFiles: path %d is empty", i))
			continue
		}
		c.addLocked(source{path: p})
	}
	return c
}

// addLocked adds s, once: as golang-etw's consumers keep their traces by name, a session
// added again (by FromSessions and by FromTraceNames, as etwdump adds each producer's)
// or a file named again is read once, not once per call. Session names compare without
// regard to case, as Windows compares logger names; a session added with its object
// keeps it, so that its providers' Filters apply.
func (c *Consumer) addLocked(s source) {
	if c.state != stateNew {
		return
	}
	for i, o := range c.sources {
		switch {
		case s.path != "" && o.path == s.path:
			return
		case s.path == "" && o.path == "" && strings.EqualFold(o.name, s.name):
			if o.session == nil && s.session != nil {
				c.sources[i] = s
			}
			return
		}
	}
	c.sources = append(c.sources, s)
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
	if err := c.made(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.state {
	case stateNew:
	case stateRunning:
		// ProcessTrace on traces a ProcessTrace is already reading.
		return winerr.New(winerr.ErrBusy, "consumer: Start after Start: a consumer starts once, and this one is reading its sources")
	default:
		// ProcessTrace on traces CloseTrace closed.
		return winerr.New(winerr.ErrInvalidHandle, "consumer: Start after Stop, Close or a failed Start: a consumer starts once, and this one has ended")
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
	c.callback, c.recordCB = c.EventCallback, c.EventRecordCallback
	for _, cb := range []func(*EventRecordHelper) error{c.EventRecordHelperCallback, c.PreparedCallback, c.EventPreparedCallback} {
		if cb != nil {
			c.helperCBs = append(c.helperCBs, cb)
		}
	}
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
			id := goid.ID()
			c.mu.Lock()
			c.sourceIDs = append(c.sourceIDs, id)
			c.mu.Unlock()
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
	for _, f := range c.atEnd {
		f()
	}
	c.atEnd = nil
}

// Wait blocks until the consumer has ended (its sources ended by themselves, or Stop,
// Close or a source's error ended them), then returns Err. Called from a callback, which
// the consumer's end waits for, it returns ERROR_POSSIBLE_DEADLOCK at once.
func (c *Consumer) Wait() error {
	if err := c.made(); err != nil {
		return err
	}
	if c.inCallback() {
		return winerr.New(winerr.ErrPossibleDeadlock, "consumer: Wait called from a callback, which the consumer's end waits for")
	}
	<-c.ended
	return c.Err()
}

// Stop ends the consumer as golang-etw's Stop does: the sources detach, so that the
// sessions deliver nothing more; Events takes no more events (DefaultEventCallback drops
// them, counted in Dropped, as golang-etw's returns once its context is cancelled) and
// the events it holds stay readable; an EventCallback of the user's still receives every
// buffer already queued. Then Events closes and Stop returns nil: as golang-etw's Stop
// returns only what closing its traces returned, the error a source ended with or a
// callback returned is Err's (LastError, Wait), not Stop's. A file source ends after the
// buffer it is reading. Stopping does not stop the sessions. Stop never waits
// for Events to be read, so a reader may call it, or call it first and read after.
// Called from a callback, as CloseTrace may be from ProcessTrace's, it stops the consumer
// the same way but cannot wait for the callback it is in: it returns
// ERROR_CTX_CLOSE_PENDING at once (CloseTrace's "the call was successful"), and the
// consumer ends once the callbacks have had every buffer already queued. Shutdown
// delivers everything queued to Events instead. Stop before Start ends the consumer
// unstarted.
func (c *Consumer) Stop() error {
	if err := c.made(); err != nil {
		return err
	}
	c.mu.Lock()
	select {
	case <-c.stopped:
	default:
		close(c.stopped)
	}
	c.mu.Unlock()
	return closing(c.Shutdown(context.Background()))
}

// closing is what golang-etw's Stop, Abort and StopWithTimeout return of the consumer's
// end: only what the close itself met (ERROR_CTX_CLOSE_PENDING, called from a callback),
// never the sources' or callbacks' errors, which Err reports. (A tool's deferred Stop
// reported a callback's error as its own failure.)
func closing(err error) error {
	if errors.Is(err, winerr.ErrCtxClosePending) {
		return err
	}
	return nil
}

// Shutdown ends the consumer gracefully, as http.Server.Shutdown does: the sources
// detach, and every event already queued for the consumer is delivered, to Events too,
// which it waits for the reader to take; then Events closes and Shutdown returns Err. If
// ctx ends first, the consumer is closed (Close) and Shutdown returns ctx's error. Call
// it from a goroutine other than the reader's, or with a deadline: the reader waiting in
// it reads nothing. Called from a callback, it begins the same end and returns
// ERROR_CTX_CLOSE_PENDING at once, as Stop does; ctx's end still closes the consumer.
func (c *Consumer) Shutdown(ctx context.Context) error { return c.shutdown(ctx, nil) }

// shutdown is Shutdown; release, if not nil, is called once the consumer no longer
// needs ctx (StopWithTimeout's cancel): at return, or, called from a callback, when the
// consumer has ended or ctx's end has closed it.
func (c *Consumer) shutdown(ctx context.Context, release func()) error {
	if err := c.made(); err != nil {
		if release != nil {
			release()
		}
		return err
	}
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
	if c.inCallback() {
		// The consumer ends after the callback returns. Meanwhile ctx's end closes it,
		// through a function the context runs, not a goroutine waiting: a callback may
		// call this for every event still queued.
		done := func() {}
		if ctx.Done() != nil {
			stop := context.AfterFunc(ctx, func() { c.Close() })
			done = func() { stop() }
		}
		c.mu.Lock()
		if c.state == stateEnded {
			c.mu.Unlock()
			done()
			if release != nil {
				release()
			}
		} else {
			c.atEnd = append(c.atEnd, func() {
				done()
				if release != nil {
					release()
				}
			})
			c.mu.Unlock()
		}
		return closePending("Stop or Shutdown")
	}
	if release != nil {
		defer release()
	}
	select {
	case <-c.ended:
		return c.Err()
	case <-ctx.Done():
		c.Close()
		return ctx.Err()
	}
}

// closePending is what Stop, Shutdown and Close return when called from a callback:
// ERROR_CTX_CLOSE_PENDING, CloseTrace's code for a close that takes effect after the
// callbacks in progress return.
func closePending(call string) error {
	return winerr.New(winerr.ErrCtxClosePending, "consumer: %s called from a callback: the consumer ends after the callback returns", call)
}

// inCallback reports whether the calling goroutine is one of the consumer's source
// goroutines: the only ones that run the callbacks, so a caller there is a callback (or
// code it called), which the consumer's end waits for.
func (c *Consumer) inCallback() bool {
	c.mu.Lock()
	ids := c.sourceIDs
	c.mu.Unlock()
	if len(ids) == 0 {
		return false
	}
	id := goid.ID()
	for _, x := range ids {
		if x == id {
			return true
		}
	}
	return false
}

// Close ends the consumer at once (http.Server.Close's semantics): the sources detach
// and stop, events queued and not yet delivered are dropped (those already in Events
// stay readable), and Close returns Err once every source goroutine has ended and Events
// is closed; no EventCallback call runs after it returns. Called from a callback, it
// ends the consumer the same way once that callback returns, and returns
// ERROR_CTX_CLOSE_PENDING at once. Close before Start ends the consumer unstarted;
// closing twice does nothing more.
func (c *Consumer) Close() error {
	if err := c.made(); err != nil {
		return err
	}
	c.mu.Lock()
	switch c.state {
	case stateNew:
		c.endLocked()
	case stateRunning, stateStopping:
		c.state = stateClosing
	}
	c.mu.Unlock()
	c.cancel()
	if c.inCallback() {
		return closePending("Close")
	}
	<-c.ended
	return c.Err()
}

// Err returns the first error a source ended with (a session's end by Stop, Close or
// the consumer's context is none), else the last error a callback returned, else nil
// (0xrawsec's Err).
func (c *Consumer) Err() error {
	if err := c.made(); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return c.err
	}
	return c.cbErr
}

// LastError is Err (tekert's name).
func (c *Consumer) LastError() error { return c.Err() }

// Abort is Close (tekert's Abort: stop at once, dropping what is queued), returning what
// Stop returns: nil, or ERROR_CTX_CLOSE_PENDING from a callback.
func (c *Consumer) Abort() error {
	if err := c.made(); err != nil {
		return err
	}
	return closing(c.Close())
}

// StopWithTimeout is tekert's: a timeout of 0 is Stop, a negative one is Abort, and any
// other is Shutdown with that deadline, after which what is still queued is dropped
// (counted in Dropped). It returns what Stop returns, the deadline's passing included:
// as tekert's, which returns only what closing the traces returned.
func (c *Consumer) StopWithTimeout(timeout time.Duration) error {
	if err := c.made(); err != nil {
		return err
	}
	switch {
	case timeout == 0:
		return c.Stop()
	case timeout < 0:
		return c.Abort()
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	return closing(c.shutdown(ctx, cancel))
}

// ProcessEvents reads Events until it closes, calling fn for each event (tekert's
// ProcessEvents): fn is a func(*Event), or a func(*Event) error whose error makes
// ProcessEvents return it at once (the consumer goes on; Stop or Close it). It blocks, so
// run it on a goroutine of its own, before or after Start; from a callback, where it
// would wait for itself, it returns ERROR_POSSIBLE_DEADLOCK. With an EventCallback other
// than DefaultEventCallback, Events receives nothing and ProcessEvents returns when the
// consumer ends. Any other fn, nil included, is ERROR_INVALID_PARAMETER.
func (c *Consumer) ProcessEvents(fn any) error {
	if err := c.made(); err != nil {
		return err
	}
	if c.inCallback() {
		return winerr.New(winerr.ErrPossibleDeadlock, "consumer: ProcessEvents called from a callback: Events closes only when the consumer ends, which waits for the callback")
	}
	switch f := fn.(type) {
	case func(*Event):
		if f != nil {
			for e := range c.Events {
				f(e)
			}
			return nil
		}
	case func(*Event) error:
		if f != nil {
			for e := range c.Events {
				if err := f(e); err != nil {
					return err
				}
			}
			return nil
		}
	}
	return winerr.New(winerr.ErrInvalidParameter, "consumer: ProcessEvents: fn is %T, want a non-nil func(*Event) or func(*Event) error", fn)
}

// DefaultEventCallback sends the event to Events (golang-etw's DefaultEventCallback,
// EventCallback's value unless the user sets another): it waits while the channel is
// full, unless the event is Skippable, which is then dropped and counted in Skipped.
// After Stop it drops the event, counted in Dropped. Once the consumer is closing it
// returns the consumer's context's error (the context ends before Events is closed). Call
// it from EventCallback, where the consumer serializes it with its own end.
func (c *Consumer) DefaultEventCallback(e *Event) error {
	if err := c.made(); err != nil {
		return err
	}
	if e == nil {
		return winerr.New(winerr.ErrInvalidParameter, "consumer: DefaultEventCallback: nil event")
	}
	if err := c.ctx.Err(); err != nil {
		return err // Events may be closed: a send would panic
	}
	select {
	case <-c.stopped:
		c.gaveUp(e, &c.Dropped)
		return nil
	default:
	}
	if e.Flags.Skippable {
		select {
		case c.Events <- e:
		default:
			c.gaveUp(e, &c.Skipped)
		}
		return nil
	}
	select {
	case c.Events <- e:
		return nil
	case <-c.stopped:
		c.gaveUp(e, &c.Dropped)
		return nil
	case <-c.ctx.Done():
		return c.ctx.Err()
	}
}

// QueryTrace returns the properties and counters of the running session name
// (ControlTrace QUERY; tekert's QueryTrace); ERROR_WMI_INSTANCE_NOT_FOUND when none runs.
func (c *Consumer) QueryTrace(name string) (*emu.Properties, error) {
	if err := c.made(); err != nil {
		return nil, err
	}
	if c.kerr != nil {
		return nil, c.kerr
	}
	p := &emu.Properties{}
	if err := c.k.QueryTrace(0, name, p); err != nil {
		return nil, err
	}
	return p, nil
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
// closing. A callback's error is recorded, and the event goes on.
func (c *Consumer) emit(e *Event) error {
	if err := c.ctx.Err(); err != nil {
		return err
	}
	if c.callback == nil {
		c.gaveUp(e, &c.Filtered) // EventCallback set to nil: the user takes nothing
		return nil
	}
	c.cbMu.Lock()
	defer c.cbMu.Unlock()
	if err := c.ctx.Err(); err != nil { // closed while waiting for the callback
		return err
	}
	err := c.callback(e)
	if err != nil && c.ctx.Err() != nil && errors.Is(err, c.ctx.Err()) {
		return err // the consumer closed before the event was taken (DefaultEventCallback)
	}
	c.callbackErr(err)
	return nil // delivered: a close meanwhile stops the next event
}

// gaveUp counts in n an event the consumer did not deliver, unless it is a loss notice
// the consumer made itself, which no provider wrote.
func (c *Consumer) gaveUp(e *Event, n *atomic.Uint64) {
	if !e.notice {
		n.Add(1)
	}
}

// callbackErr records a callback's error. ERROR_CTX_CLOSE_PENDING is not one: it is
// what a callback that ended its consumer (Stop, Close) got back, a success.
func (c *Consumer) callbackErr(err error) {
	if err != nil && !errors.Is(err, winerr.ErrCtxClosePending) {
		c.mu.Lock()
		c.cbErr = err
		c.mu.Unlock()
	}
}

// prepare runs the record and helper callbacks on one event, one at a time per
// consumer, and returns the event to deliver, or nil when a callback dropped it (counted
// in Filtered). Without callbacks it only decodes.
func (c *Consumer) prepare(dec *decoder, rec *EventRecord) *Event {
	if c.recordCB == nil && len(c.helperCBs) == 0 {
		return dec.event(rec)
	}
	c.cbMu.Lock()
	defer c.cbMu.Unlock()
	if c.recordCB != nil && !c.recordCB(rec) {
		c.Filtered.Add(1)
		return nil
	}
	e := dec.event(rec)
	h := &EventRecordHelper{EventRec: rec, event: e}
	for _, cb := range c.helperCBs {
		c.callbackErr(cb(h))
		if h.Flags.Skip {
			c.Filtered.Add(1)
			return nil
		}
	}
	h.applySelection()
	e.Flags.Skippable = h.Flags.Skippable
	return e
}

// attach attaches to the running session name (OpenTrace) and returns the function that
// reads it (ProcessTrace) and the one that detaches it (CloseTrace).
func (c *Consumer) attach(name string, ss Session) (run func() error, detach func(), err error) {
	// The session's counters are read from the one OpenTrace attached to: found by the
	// same lookup, so the two cannot disagree on a name's case or on a session restarted
	// in between.
	t, err := c.k.OpenTrace(name, 0)
	if err != nil {
		return nil, nil, err
	}
	view := t.Session()
	lastEvents, lastBuffers, lastInBuffers := view.Stats().EventsLost, uint64(0), uint64(0)
	// losses announces what was lost since the last look: the session's refused events,
	// and the buffers dropped for this consumer (counted with their events).
	losses := func() error {
		ne, nb := view.Stats().EventsLost-lastEvents, t.BuffersLost()-lastBuffers
		nbe := t.EventsInBuffersLost() - lastInBuffers
		lastEvents, lastBuffers, lastInBuffers = lastEvents+ne, lastBuffers+nb, lastInBuffers+nbe
		c.LostEvents.Add(ne)
		c.LostBuffers.Add(nb)
		c.LostBufferEvents.Add(nbe)
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
	t.OnDrop(func(b *etl.Buffer) { c.Dropped.Add(b.EventRecords()) })
	return func() error {
		err := t.Process(c.ctx, func(b *etl.Buffer) error {
			if err := c.buffer(b, dec, ss); err != nil {
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
func (c *Consumer) buffer(b *etl.Buffer, dec *decoder, ss Session) error {
	var filters map[[16]byte]map[uint16]bool
	if ss != nil {
		filters = filtersOf(ss.Providers())
	}
	var ended error // the consumer's end, met part way through the buffer
	err := b.Records(func(r etl.Record) error {
		if r.Kind != etl.KindEventHeader {
			return nil
		}
		if ended != nil { // the rest of the buffer is dropped, counted
			c.Dropped.Add(1)
			return nil
		}
		if ids, ok := filters[r.Event.ProviderID.Bytes()]; ok && !ids[r.Event.Descriptor.ID] {
			c.Filtered.Add(1)
			return nil
		}
		e := c.prepare(dec, dec.record(b, r))
		if e == nil {
			return nil
		}
		if ended = c.emit(e); ended != nil {
			c.Dropped.Add(1) // emit fails only for an event it did not deliver
		}
		return nil
	})
	if ended != nil {
		return ended
	}
	return err
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
	var f io.Closer
	var rd *etl.Reader
	if fs := c.k.FileSystem(); fs != nil {
		var ff file
		if ff, err = fs.OpenFile(path, os.O_RDONLY, 0); err != nil {
			return nil, nil, fmt.Errorf("consumer: %s: %w", path, err)
		}
		fi, err := ff.Stat()
		if err == nil {
			rd, err = etl.NewReader(ff, fi.Size())
		}
		if err != nil {
			ff.Close()
			return nil, nil, fmt.Errorf("consumer: %s: %w", path, err)
		}
		f = ff
	} else {
		// etl.Open looks at the file before it opens it (a FIFO would wait for a writer,
		// and Stop with it) and answers with Windows' codes: ERROR_FILE_NOT_FOUND, a
		// directory or a device refused; its errors name the file.
		ef, err := etl.Open(path)
		if err != nil {
			return nil, nil, fmt.Errorf("consumer: %w", err)
		}
		f, rd = ef, ef.Reader
	}
	dec := newDecoder(path)
	dec.dec.Clock = rd.Clock() // for buffers without a reference clock of their own
	var detached atomic.Bool   // set by detach (Stop's goroutine), read by run
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
				var bad *etl.RecordError
				if errors.As(err, &bad) {
					// A bad record costs the rest of its buffer, not the file: the reader
					// has counted it, and its last Next reports the damage.
					continue
				}
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
