package consumer_test

import (
	"context"
	"errors"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/etwemu/etwemu/consumer"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/etw"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/winerr"
)

// syncKernel is a synchronous kernel of one processor: a flush delivers every buffer to
// the real-time consumers before it returns, so a test knows what is queued for them.
func syncKernel(t *testing.T) (*emu.Kernel, *etl.MemFS) {
	t.Helper()
	fs := &etl.MemFS{}
	k, err := emu.New(emu.Config{Processors: 1, Synchronous: true, FileSystem: fs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(k.Close)
	return k, fs
}

// liveSession starts a real-time session named name with 64 KB buffers, with the
// provider enabled on it.
func liveSession(t *testing.T, k *emu.Kernel, name, provider string) *consumer.RealTimeSession {
	t.Helper()
	s := consumer.NewRealTimeSessionOn(k, name)
	s.Properties.BufferSize = 64
	if err := s.EnableProvider(consumer.MustParseProvider(provider)); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Stop() })
	return s
}

func newProvider(t *testing.T, k *emu.Kernel, name string) *etw.Provider {
	t.Helper()
	p, err := etw.NewProviderWithOptions(name, etw.WithKernel(k))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// liveConsumer makes a synchronous kernel, the provider Etwemu.Test.NAME, a live session
// NAME enabling it, and a consumer of that session (by the name as given in consumerName,
// names comparing without regard to case), not yet started.
func liveConsumer(t *testing.T, name, consumerName string) (*emu.Kernel, *etw.Provider, *consumer.Consumer) {
	t.Helper()
	k, _ := syncKernel(t)
	p := newProvider(t, k, "Etwemu.Test."+name)
	liveSession(t, k, name, "Etwemu.Test."+name+":5")
	return k, p, consumer.NewConsumerOn(context.Background(), k).FromTraceNames(consumerName)
}

// start starts c.
func start(t *testing.T, c *consumer.Consumer) {
	t.Helper()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
}

// detached fails t unless k's one session has no consumer attached after the consumer's
// end (named by how).
func detached(t *testing.T, k *emu.Kernel, how string) {
	t.Helper()
	if s := k.Sessions(); len(s) != 1 || s[0].Consumers() != 0 {
		t.Error("the consumer is still attached after " + how)
	}
}

// numbered returns a check that each event it is given carries the next number, from 0,
// in its field I (as writeFlush numbers them), and the count of events it checked.
func numbered(t *testing.T) (check func(*consumer.Event), read *int) {
	read = new(int)
	return func(e *consumer.Event) {
		t.Helper()
		if v := e.EventData["I"]; v != strconv.Itoa(*read) {
			t.Fatalf("event %d carries I=%v", *read, v)
		}
		*read++
	}, read
}

// writeFlush writes n events numbered from first, then flushes the session, so that
// they are queued for its consumers when it returns.
func writeFlush(t *testing.T, k *emu.Kernel, p *etw.Provider, session string, first, n int) {
	t.Helper()
	for i := first; i < first+n; i++ {
		if err := p.WriteEvent("E", nil, etw.WithFields(etw.IntField("I", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.FlushTrace(0, session, &emu.Properties{}); err != nil {
		t.Fatal(err)
	}
}

// TestShutdownDeliversQueued: with a slow reader (it has read 10 events when Shutdown is
// called), Shutdown detaches but delivers every event already queued, in order, before
// Events closes; the reader gets all 6,000.
func TestShutdownDeliversQueued(t *testing.T) {
	k, p, c := liveConsumer(t, "Slow", "Slow")
	start(t, c)
	const n = 6000 // more than Events holds
	writeFlush(t, k, p, "Slow", 0, n)
	check, read := numbered(t)
	for *read < 10 {
		check(<-c.Events)
	}
	stopped := make(chan error, 1)
	go func() { stopped <- c.Shutdown(context.Background()) }()
	for e := range c.Events {
		check(e)
	}
	if err := <-stopped; err != nil || *read != n || c.LostBuffers.Load() != 0 || c.Dropped.Load() != 0 {
		t.Errorf("Shutdown: %v, %d events read, %d buffers lost, %d dropped; want nil, %d, 0, 0", err, *read, c.LostBuffers.Load(), c.Dropped.Load(), n)
	}
	detached(t, k, "Shutdown")
	writeFlush(t, k, p, "Slow", n, 1) // the session goes on without it
}

// TestStopWaitsForNoReader: Stop, as golang-etw's, returns with more events queued than
// Events holds and nobody reading, called before reading or from the reading loop; Events
// keeps what it took, in order, and the rest is counted in Dropped.
func TestStopWaitsForNoReader(t *testing.T) {
	for _, fromLoop := range []bool{false, true} {
		k, p, c := liveConsumer(t, "Stop", "Stop")
		start(t, c)
		const n = 6000 // more than Events holds, and within what the session queues for it
		writeFlush(t, k, p, "Stop", 0, n)
		check, read := numbered(t)
		check(<-c.Events) // the consumer has begun: 5,999 more are queued
		if !fromLoop {
			if err := c.Stop(); err != nil {
				t.Fatal(err)
			}
		}
		for e := range c.Events {
			if check(e); fromLoop && *read == 5 {
				if err := c.Stop(); err != nil {
					t.Fatal(err)
				}
			}
		}
		if got := *read; got == 0 || got > cap(c.Events)+5 || uint64(got)+c.Dropped.Load()+c.LostEvents.Load() != n || c.LostBuffers.Load() != 0 {
			t.Errorf("from the loop %v: read %d (Events holds %d), Dropped %d, LostEvents %d, LostBuffers %d: want the %d written read or dropped",
				fromLoop, got, cap(c.Events), c.Dropped.Load(), c.LostEvents.Load(), c.LostBuffers.Load(), n)
		}
		detached(t, k, "Stop")
	}
}

// TestNilEventCallback: an EventCallback set to nil delivers nothing, as in golang-etw,
// where a consumer that works in its helper callbacks sets it so: those run for every
// event, Events receives none, each is counted in Filtered (Skipped stays 0, as in
// 0xrawsec's, which counts only Skippable events a full Events dropped), and Stop
// returns.
func TestNilEventCallback(t *testing.T) {
	k, p, c := liveConsumer(t, "NilCallback", "NilCallback")
	prepared := 0
	c.PreparedCallback = func(*consumer.EventRecordHelper) error { prepared++; return nil }
	c.EventCallback = nil
	start(t, c)
	const n = 6000 // more than Events holds: a send would wait
	writeFlush(t, k, p, "NilCallback", 0, n)
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	got := 0
	for range c.Events {
		got++
	}
	if got != 0 || prepared != n || c.Filtered.Load() != n || c.Skipped.Load() != 0 {
		t.Errorf("Events %d, PreparedCallback ran %d times, Filtered %d, Skipped %d; want 0, %d, %d, 0", got, prepared, c.Filtered.Load(), c.Skipped.Load(), n, n)
	}
}

// TestSkippableWhenFull: events a helper callback made Skippable wait for no reader:
// with nobody reading, Events takes what it holds and the rest are counted in Skipped,
// as 0xrawsec's Skipped counts them, and in nothing else.
func TestSkippableWhenFull(t *testing.T) {
	k, p, c := liveConsumer(t, "Skippable", "Skippable")
	c.PreparedCallback = func(h *consumer.EventRecordHelper) error { h.Skippable(); return nil }
	start(t, c)
	const n = 6000 // more than Events holds
	writeFlush(t, k, p, "Skippable", 0, n)
	if err := c.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	read := 0
	for range c.Events {
		read++
	}
	if read != cap(c.Events) || c.Skipped.Load() != n-uint64(read) || c.Filtered.Load() != 0 || c.Dropped.Load() != 0 {
		t.Errorf("read %d (Events holds %d), Skipped %d, Filtered %d, Dropped %d; want Events full and the other %d Skipped",
			read, cap(c.Events), c.Skipped.Load(), c.Filtered.Load(), c.Dropped.Load(), n-cap(c.Events))
	}
}

// TestEndBeforeStart: Stop and Close before Start end the consumer: Events is closed,
// Wait returns, and Start is refused.
func TestEndBeforeStart(t *testing.T) {
	k, _ := syncKernel(t)
	for _, end := range []func(*consumer.Consumer) error{(*consumer.Consumer).Stop, (*consumer.Consumer).Close} {
		c := consumer.NewConsumerOn(context.Background(), k).FromTraceNames("none")
		if err := end(c); err != nil {
			t.Errorf("ending an unstarted consumer: %v", err)
		}
		if _, open := <-c.Events; open {
			t.Error("Events open after ending an unstarted consumer")
		}
		if err := c.Wait(); err != nil {
			t.Errorf("Wait: %v", err)
		}
		if err := c.Start(); !errors.Is(err, winerr.ErrInvalidHandle) {
			t.Errorf("an ended consumer's Start: %v, want ERROR_INVALID_HANDLE", err)
		}
		if err := c.Stop(); err != nil || c.Close() != nil {
			t.Error("ending twice failed")
		}
	}
}

// TestCloseDropsQueued: Close ends a consumer whose reader reads nothing, at once: the
// events queued are dropped, those already in Events stay readable, and the session
// goes on.
func TestCloseDropsQueued(t *testing.T) {
	k, p, c := liveConsumer(t, "Close", "CLOSE") // names compare without regard to case
	start(t, c)
	const n = 6000 // more than Events holds
	writeFlush(t, k, p, "Close", 0, n)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	got := 0
	for range c.Events {
		got++
	}
	if got >= n || c.Wait() != nil {
		t.Errorf("%d events after Close, Wait %v; want fewer than %d (Events holds %d), nil", got, c.Wait(), n, cap(c.Events))
	}
	// Every event is read or counted: those Close gave up are in Dropped.
	t.Logf("read %d dropped %d lost %d lost buffers %d skipped %d", got, c.Dropped.Load(), c.LostEvents.Load(), c.LostBuffers.Load(), c.Skipped.Load())
	if c.LostBuffers.Load() != 0 || uint64(got)+c.Dropped.Load()+c.LostEvents.Load() != n {
		t.Errorf("read %d, Dropped %d, LostEvents %d, LostBuffers %d: want no buffer lost and the rest adding up to the %d written",
			got, c.Dropped.Load(), c.LostEvents.Load(), c.LostBuffers.Load(), n)
	}
	detached(t, k, "Close")
}

// TestEndBeforeFlushCounted: events still in the session's buffers when the consumer
// ends were never sent to it. They stay with the session, and a session stopped with no
// consumer attached counts them in RealTimeEventsLost: with what the consumer read and
// counted, every event written.
func TestEndBeforeFlushCounted(t *testing.T) {
	for _, end := range []string{"Close", "Stop", "context"} {
		t.Run(end, func(t *testing.T) {
			k, _ := syncKernel(t)
			p := newProvider(t, k, "Etwemu.Test.Unflushed")
			liveSession(t, k, "Unflushed", "Etwemu.Test.Unflushed:5")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			c := consumer.NewConsumerOn(ctx, k).FromTraceNames("Unflushed")
			start(t, c)
			writeFlush(t, k, p, "Unflushed", 0, 100) // sent to the consumer
			for i := 0; i < 50; i++ {                // in the session's buffer only
				if err := p.WriteEvent("E", nil, etw.WithFields(etw.IntField("I", 100+i))); err != nil {
					t.Fatal(err)
				}
			}
			switch end {
			case "Close":
				c.Close()
			case "Stop":
				c.Stop()
			case "context":
				cancel()
			}
			read := 0
			for range c.Events {
				read++
			}
			c.Wait()
			sessions := k.Sessions()
			if len(sessions) != 1 || sessions[0].Consumers() != 0 {
				t.Fatalf("%d sessions, the consumer still attached after %s", len(sessions), end)
			}
			if err := k.StopTrace(0, "Unflushed", &emu.Properties{}); err != nil {
				t.Fatal(err)
			}
			st := sessions[0].Stats()
			counted := uint64(read) + c.Dropped.Load() + c.LostEvents.Load() + c.LostBufferEvents.Load() + c.Skipped.Load() + c.Filtered.Load()
			if counted+st.RealTimeEventsLost != 150 || st.RealTimeEventsLost < 50 {
				t.Errorf("read %d, Dropped %d, LostEvents %d, LostBufferEvents %d, Skipped %d, Filtered %d, the session's RealTimeEventsLost %d: %d of the 150 written, want all and at least the 50 never sent",
					read, c.Dropped.Load(), c.LostEvents.Load(), c.LostBufferEvents.Load(), c.Skipped.Load(), c.Filtered.Load(), st.RealTimeEventsLost, counted+st.RealTimeEventsLost)
			}
		})
	}
}

// TestShutdownDeadline: Shutdown with a context that ends before the reader read the
// queued events closes the consumer and returns the context's error.
func TestShutdownDeadline(t *testing.T) {
	k, p, c := liveConsumer(t, "Shutdown", "Shutdown")
	start(t, c)
	writeFlush(t, k, p, "Shutdown", 0, 2000)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown past its context: %v, want context.Canceled", err)
	}
	for range c.Events { // closed: Shutdown closed the consumer
	}
	if err := c.Wait(); err != nil {
		t.Errorf("Wait: %v", err)
	}
}

// TestStopWithTimeoutPastDeadline: StopWithTimeout, with more events queued than
// Events holds and nobody reading, cannot deliver them all before its deadline; then it
// closes the consumer and returns nil, as tekert's returns only what closing the traces
// returned. Events keeps what it took, and the rest is counted in Dropped.
func TestStopWithTimeoutPastDeadline(t *testing.T) {
	k, p, c := liveConsumer(t, "Deadline", "Deadline")
	start(t, c)
	const n = 6000 // more than Events holds, and within what the session queues for it
	writeFlush(t, k, p, "Deadline", 0, n)
	if err := c.StopWithTimeout(time.Millisecond); err != nil {
		t.Errorf("StopWithTimeout past its deadline: %v, want nil", err)
	}
	read := 0
	for range c.Events {
		read++
	}
	if err := c.Wait(); err != nil {
		t.Errorf("Wait: %v", err)
	}
	if uint64(read)+c.Dropped.Load()+c.LostEvents.Load() != n || read > cap(c.Events) {
		t.Errorf("read %d (Events holds %d), %d dropped, %d lost; want the %d written read or dropped", read, cap(c.Events), c.Dropped.Load(), c.LostEvents.Load(), n)
	}
	detached(t, k, "StopWithTimeout")
}

// TestSourcesAreValues: a session added by name and one added as a RealTimeSession keep
// their own filters: a's event-id filter applies to a's events only, whatever the
// order of the calls.
func TestSourcesAreValues(t *testing.T) {
	k, _ := syncKernel(t)
	raw, err := k.EventRegister(guid.FromName("Etwemu.Test.Values"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer k.EventUnregister(raw)
	a := liveSession(t, k, "A", "Etwemu.Test.Values:5:2") // keeps id 2
	b := liveSession(t, k, "B", "Etwemu.Test.Values:5")
	c := consumer.NewConsumerOn(context.Background(), k).FromTraceNames("B").FromSessions(a)
	ids := map[string][]uint16{}
	c.EventCallback = func(e *consumer.Event) error {
		ids[e.Source] = append(ids[e.Source], e.System.EventID)
		return nil
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	for id := uint16(1); id <= 2; id++ {
		if err := k.EventWrite(raw, &emu.EventDescriptor{ID: id, Level: 4}, []byte{byte(id)}); err != nil {
			t.Fatal(err)
		}
	}
	a.Stop()
	b.Stop()
	if err := c.Wait(); err != nil {
		t.Fatal(err)
	}
	if len(ids["A"]) != 1 || ids["A"][0] != 2 || len(ids["B"]) != 2 || c.Filtered.Load() != 1 {
		t.Errorf("ids by session %v, Filtered %d; want A [2], B [1 2], 1", ids, c.Filtered.Load())
	}
}

// TestLostBuffersPerConsumer: of two consumers of one session, the one that reads
// nothing loses buffers and counts them; the one that keeps up gets every event and
// counts no loss, though the session counts the other's.
func TestLostBuffersPerConsumer(t *testing.T) {
	k, _ := syncKernel(t)
	p := newProvider(t, k, "Etwemu.Test.Two")
	liveSession(t, k, "Two", "Etwemu.Test.Two:5")
	stuck := consumer.NewConsumerOn(context.Background(), k).FromTraceNames("Two")
	if err := stuck.Start(); err != nil {
		t.Fatal(err)
	}
	progress := make(chan struct{}, 64)
	fast := consumer.NewConsumerOn(context.Background(), k).FromTraceNames("Two")
	got := 0
	fast.EventCallback = func(e *consumer.Event) error {
		if e.Name == "E" {
			got++
			progress <- struct{}{}
		}
		return nil
	}
	if err := fast.Start(); err != nil {
		t.Fatal(err)
	}
	const rounds, each = 120, 50 // one buffer a round; the stuck one holds 4,096 events and 17 buffers
	for r := 0; r < rounds; r++ {
		writeFlush(t, k, p, "Two", r*each, each)
		for i := 0; i < each; i++ {
			<-progress // fast has handled the round: it never has two buffers queued
		}
	}
	if err := stuck.Close(); err != nil {
		t.Fatal(err)
	}
	if err := fast.Stop(); err != nil {
		t.Fatal(err)
	}
	sessionLost := k.Sessions()[0].Stats().RealTimeBuffersLost
	if got != rounds*each || fast.LostBuffers.Load() != 0 || stuck.LostBuffers.Load() == 0 || sessionLost == 0 {
		t.Errorf("fast: %d events, %d buffers lost; stuck: %d lost; session: %d lost; want %d, 0, >0, >0",
			got, fast.LostBuffers.Load(), stuck.LostBuffers.Load(), sessionLost, rounds*each)
	}
	// The stuck consumer's books: the events Events holds, those in the buffers it lost,
	// and those it dropped unread at Close are every event written.
	held := 0
	for e := range stuck.Events {
		if e.Name == "E" {
			held++
		}
	}
	inLost, dropped := stuck.LostBufferEvents.Load(), stuck.Dropped.Load()
	if inLost == 0 || uint64(held)+inLost+dropped+stuck.Skipped.Load()+stuck.Filtered.Load()+stuck.LostEvents.Load() != rounds*each {
		t.Errorf("stuck: %d held, %d in lost buffers, %d dropped, %d skipped, %d filtered, %d lost: want them to add up to %d",
			held, inLost, dropped, stuck.Skipped.Load(), stuck.Filtered.Load(), stuck.LostEvents.Load(), rounds*each)
	}
}

// cutFile writes n events to an ETL file through a file session, then stores a copy cut
// in the middle of its last buffer as cut; it returns the events in the whole buffers.
func cutFile(t *testing.T, k *emu.Kernel, fs *etl.MemFS, p *etw.Provider, n int, cut string) int {
	t.Helper()
	h, err := k.StartTrace("file", &emu.Properties{LogFileName: "whole.etl", LogFileMode: emu.FileModeSequential, BufferSize: 8})
	if err != nil {
		t.Fatal(err)
	}
	if err := k.EnableTraceEx2(h, p.ID, emu.EnableProvider, 5, 0, 0, nil); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		if err := p.WriteEvent("E", nil, etw.WithFields(etw.IntField("I", i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := k.StopTrace(h, "", &emu.Properties{}); err != nil {
		t.Fatal(err)
	}
	data, _ := fs.ReadFile("whole.etl")
	rd, err := etl.NewReader(strings.NewReader(string(data)), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var counts []int
	for {
		b, err := rd.Next()
		if err != nil {
			break
		}
		c := 0
		b.Records(func(r etl.Record) error {
			if r.Kind == etl.KindEventHeader {
				c++
			}
			return nil
		})
		counts = append(counts, c)
	}
	if len(counts) < 3 || counts[len(counts)-1] == 0 {
		t.Fatalf("the file's buffers hold %v events", counts)
	}
	f, err := fs.OpenFile(cut, os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data[:len(data)-8*1024/2], 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return n - counts[len(counts)-1]
}

// TestFileErrorEndsConsumer: a file cut in the middle of a buffer ends the consumer with
// the reader's error, after the events of the whole buffers before the cut were
// delivered; the live session beside it is ended too (the first error cancels the
// other sources), though it still runs.
func TestFileErrorEndsConsumer(t *testing.T) {
	k, fs := syncKernel(t)
	p := newProvider(t, k, "Etwemu.Test.Cut")
	want := cutFile(t, k, fs, p, 2000, "cut.etl")
	liveSession(t, k, "Beside", "Etwemu.Test.Cut:5")
	for _, delivery := range []string{"callback", "channel"} {
		c := consumer.NewConsumerOn(context.Background(), k).FromSessions().FromTraceNames("Beside").FromFiles("cut.etl")
		got := 0
		if delivery == "callback" {
			c.EventCallback = func(e *consumer.Event) error {
				if e.Source == "cut.etl" {
					got++
				}
				return nil
			}
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		if delivery == "channel" {
			for e := range c.Events {
				if e.Source == "cut.etl" {
					got++
				}
			}
		}
		err := c.Wait()
		if err == nil || !strings.Contains(err.Error(), "cut.etl") || got != want {
			t.Errorf("%s: Wait %v after %d events; want the reader's error after %d", delivery, err, got, want)
		}
	}
}

// TestCallbackSerialized: two sources' events reach the callback one call at a time, so
// a callback with no lock of its own counts them right (the race detector checks).
func TestCallbackSerialized(t *testing.T) {
	k, _ := syncKernel(t)
	p := newProvider(t, k, "Etwemu.Test.Serial")
	liveSession(t, k, "S1", "Etwemu.Test.Serial:5")
	liveSession(t, k, "S2", "Etwemu.Test.Serial:5")
	c := consumer.NewConsumerOn(context.Background(), k).FromTraceNames("S1", "S2")
	count, inside := 0, 0
	c.EventCallback = func(*consumer.Event) error {
		inside++
		if inside != 1 {
			t.Error("two callbacks at once")
		}
		count++
		inside--
		return nil
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	writeFlush(t, k, p, "S1", 0, 500)
	writeFlush(t, k, p, "S2", 500, 500) // S1's buffers are queued for it already: both sources run
	if err := k.FlushTrace(0, "S1", &emu.Properties{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if count != 2*2*500 { // each session has every event
		t.Errorf("%d events counted, want %d", count, 2*2*500)
	}
}

// TestOwnPayload: two consumers of one session get the same event in memory of their
// own: writing one's Payload changes nothing in the other's.
func TestOwnPayload(t *testing.T) {
	k, _ := syncKernel(t)
	raw, err := k.EventRegister(guid.FromName("Etwemu.Test.Own"), nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer k.EventUnregister(raw)
	s := liveSession(t, k, "Own", "Etwemu.Test.Own:5")
	var events [2][]*consumer.Event
	var cs [2]*consumer.Consumer
	for i := range cs {
		cs[i] = consumer.NewConsumerOn(context.Background(), k).FromSessions(s)
		cs[i].EventCallback = func(e *consumer.Event) error { events[i] = append(events[i], e); return nil }
		if err := cs[i].Start(); err != nil {
			t.Fatal(err)
		}
	}
	for i := byte(1); i <= 2; i++ {
		if err := k.EventWrite(raw, &emu.EventDescriptor{ID: uint16(i), Level: 4}, []byte{i, i, i}); err != nil {
			t.Fatal(err)
		}
	}
	s.Stop()
	for _, c := range cs {
		if err := c.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	if len(events[0]) != 2 || len(events[1]) != 2 {
		t.Fatalf("%d and %d events, want 2 each", len(events[0]), len(events[1]))
	}
	a, b := events[0][0], events[1][0]
	a.Payload[0] = 0xEE
	a.Payload = append(a.Payload, 0xEE) // capacity ends at the length: the next event's bytes stay
	if b.Payload[0] != 1 || events[0][1].Payload[0] != 2 || cap(a.Ext) > 0 && &a.Ext[0] == &b.Ext[0] {
		t.Errorf("consumer B's payload %v, A's next event's %v after A wrote its own", b.Payload, events[0][1].Payload)
	}
	if v := b.EventData["Payload"]; v != "0x010101" {
		t.Errorf("B's EventData[Payload] %v changed with A's", v)
	}
}

// TestNilArguments: nil kernels, a nil context and a nil session give errors or the etw
// package's kernel, never a panic.
func TestNilArguments(t *testing.T) {
	k, _ := syncKernel(t)
	etw.SetKernel(k)
	defer etw.SetKernel(nil)
	s := consumer.NewRealTimeSessionOn(nil, "Default")
	if err := s.Start(); err != nil {
		t.Fatalf("a session on the etw package's kernel: %v", err)
	}
	defer s.Stop()
	//lint:ignore SA1012 a nil context is what is tested
	c := consumer.NewConsumerOn(nil, nil).FromTraceNames("Default") //nolint:staticcheck
	if err := c.Start(); err != nil {
		t.Fatalf("a consumer on the etw package's kernel: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	c = consumer.NewConsumerOn(context.Background(), k).FromSessions(nil)
	if err := c.Start(); err == nil || !strings.Contains(err.Error(), "ERROR_INVALID_PARAMETER") {
		t.Errorf("a nil session: %v, want ERROR_INVALID_PARAMETER", err)
	}
}

// TestUnmadeConsumer: a zero Consumer and a nil one return ERROR_INVALID_HANDLE from
// every method, without a panic (a zero one's Start used to panic on a goroutine of its
// own, its Stop to panic holding its lock) or a wait that never ends (Wait,
// ProcessEvents).
func TestUnmadeConsumer(t *testing.T) {
	var zero consumer.Consumer
	for name, c := range map[string]*consumer.Consumer{"zero": &zero, "nil": nil} {
		calls := map[string]func() error{
			"Start":                func() error { return c.FromTraceNames("x").FromFiles("y").FromSessions(nil).Start() },
			"Wait":                 c.Wait,
			"Stop":                 c.Stop,
			"Shutdown":             func() error { return c.Shutdown(context.Background()) },
			"Close":                c.Close,
			"Abort":                c.Abort,
			"Err":                  c.Err,
			"LastError":            c.LastError,
			"StopWithTimeout":      func() error { return c.StopWithTimeout(time.Second) },
			"ProcessEvents":        func() error { return c.ProcessEvents(func(*consumer.Event) {}) },
			"DefaultEventCallback": func() error { return c.DefaultEventCallback(&consumer.Event{}) },
			"QueryTrace":           func() error { _, err := c.QueryTrace("x"); return err },
		}
		for call, f := range calls {
			if err := f(); !errors.Is(err, winerr.ErrInvalidHandle) {
				t.Errorf("%s Consumer: %s: %v, want ERROR_INVALID_HANDLE", name, call, err)
			}
		}
	}
}

// TestBadRecordCostsItsBuffer: a record whose size runs past its buffer costs that
// buffer's events, not the file's: the consumer delivers every other buffer's events,
// then Wait returns the reader's damage report.
func TestBadRecordCostsItsBuffer(t *testing.T) {
	k, fs := syncKernel(t)
	p := newProvider(t, k, "Etwemu.Test.Bad")
	const n = 2000
	cutFile(t, k, fs, p, n, "unused.etl")
	data, _ := fs.ReadFile("whole.etl")
	rd, err := etl.NewReader(strings.NewReader(string(data)), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var in2 int
	var at int64
	for i := 0; ; i++ {
		b, err := rd.Next()
		if err != nil {
			break
		}
		if i == 2 { // the third buffer: the header buffer, then two of events before it
			at = b.FileOffset + 0x48
			b.Records(func(r etl.Record) error {
				if r.Kind == etl.KindEventHeader {
					in2++
				}
				return nil
			})
		}
	}
	if in2 == 0 {
		t.Fatal("the third buffer holds no event")
	}
	data[at], data[at+1] = 0xFF, 0xFF // the first record's Size, past the buffer's end
	f, err := fs.OpenFile("bad.etl", os.O_CREATE|os.O_RDWR|os.O_TRUNC, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c := consumer.NewConsumerOn(context.Background(), k).FromSessions().FromFiles("bad.etl")
	got := 0
	c.EventCallback = func(e *consumer.Event) error {
		if e.Name == "E" {
			got++
		}
		return nil
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	err = c.Wait()
	var damage *etl.DamageError
	if !errors.As(err, &damage) {
		t.Fatalf("Wait: %v, want the reader's *etl.DamageError", err)
	}
	if got != n-in2 {
		t.Errorf("got %d events, want %d: all but the %d of the buffer with the bad record", got, n-in2, in2)
	}
}

// TestNoticesAreNotCounted: the RT_LostEvent notices the consumer makes are no provider's
// events, so a notice it does not deliver (EventCallback set to nil, or Stop before
// Events took it) is counted nowhere: what was read (less notices), Skipped, Filtered,
// Dropped and LostEvents add up to the events written.
func TestNoticesAreNotCounted(t *testing.T) {
	for _, stop := range []bool{false, true} {
		k, _ := syncKernel(t)
		p := newProvider(t, k, "Etwemu.Test.Notice")
		s := consumer.NewRealTimeSessionOn(k, "Notice")
		s.Properties.BufferSize = 4 // KB: the second event does not fit and is lost
		if err := s.EnableProvider(consumer.MustParseProvider("Etwemu.Test.Notice:5")); err != nil {
			t.Fatal(err)
		}
		c := consumer.NewConsumerOn(context.Background(), k).FromTraceNames("Notice")
		if !stop {
			c.EventCallback = nil
		}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		p.WriteEvent("Small", nil, etw.WithFields(etw.Uint8Field("x", 1)))
		p.WriteEvent("Huge", nil, etw.WithFields(etw.BinaryField("b", make([]byte, 8000))))
		if err := k.FlushTrace(0, "Notice", &emu.Properties{}); err != nil {
			t.Fatal(err)
		}
		if stop {
			c.Stop()
		} else {
			s.Stop()
		}
		c.Wait()
		read := 0
		for e := range c.Events {
			if e.System.Provider.Name != "RT_LostEvent" {
				read++
			}
		}
		if total := uint64(read) + c.Skipped.Load() + c.Filtered.Load() + c.Dropped.Load() + c.LostEvents.Load(); total != 2 || c.LostEvents.Load() != 1 {
			t.Errorf("stop %v: read %d, Skipped %d, Filtered %d, Dropped %d, LostEvents %d: want 2 in all, 1 of them lost", stop, read, c.Skipped.Load(), c.Filtered.Load(), c.Dropped.Load(), c.LostEvents.Load())
		}
		s.Stop()
	}
}

// TestEndFromCallback: a callback may end its consumer, as a ProcessTrace callback may
// call CloseTrace. Stop, Shutdown and Close called from EventCallback return
// ERROR_CTX_CLOSE_PENDING at once instead of waiting for the callback they are in; the
// consumer then ends, having given the callback every event already queued (Stop,
// Shutdown) or dropped and counted the rest (Close, Abort). Wait and ProcessEvents from
// a callback refuse with ERROR_POSSIBLE_DEADLOCK and the consumer goes on. A callback
// that returns the pending code has not failed (Wait returns nil), and one that calls
// StopWithTimeout for every event left starts no goroutine each time. Every event is
// delivered or counted, and no call hangs (a hang fails the test after a minute).
func TestEndFromCallback(t *testing.T) {
	const n, at = 1000, 10
	ends := []struct {
		name  string
		call  func(*consumer.Consumer) error
		want  *winerr.Errno
		whole bool // the callback gets all n events
		ret   bool // the callback returns the call's error
		every bool // the callback calls it for every event from the at-th on
	}{
		{name: "Stop", call: (*consumer.Consumer).Stop, want: winerr.ErrCtxClosePending, whole: true},
		{name: "Shutdown", call: func(c *consumer.Consumer) error { return c.Shutdown(context.Background()) }, want: winerr.ErrCtxClosePending, whole: true},
		{name: "StopWithTimeout", call: func(c *consumer.Consumer) error { return c.StopWithTimeout(time.Hour) }, want: winerr.ErrCtxClosePending, whole: true},
		{name: "StopWithTimeoutEvery", call: func(c *consumer.Consumer) error { return c.StopWithTimeout(time.Hour) }, want: winerr.ErrCtxClosePending, whole: true, every: true},
		{name: "StopReturned", call: (*consumer.Consumer).Stop, want: winerr.ErrCtxClosePending, whole: true, ret: true},
		{name: "Close", call: (*consumer.Consumer).Close, want: winerr.ErrCtxClosePending},
		{name: "Abort", call: (*consumer.Consumer).Abort, want: winerr.ErrCtxClosePending},
		{name: "Wait", call: (*consumer.Consumer).Wait, want: winerr.ErrPossibleDeadlock, whole: true},
		{name: "ProcessEvents", call: func(c *consumer.Consumer) error { return c.ProcessEvents(func(*consumer.Event) {}) }, want: winerr.ErrPossibleDeadlock, whole: true},
	}
	for _, end := range ends {
		t.Run(end.name, func(t *testing.T) {
			k, p, c := liveConsumer(t, "FromCallback", "FromCallback")
			check, read := numbered(t)
			var inside error
			goroutines, most := 0, 0
			queued := make(chan struct{}) // closed once all n events are queued for c
			c.EventCallback = func(e *consumer.Event) error {
				if *read == 0 {
					<-queued // the first buffer arrives as it fills: wait for the rest
				}
				check(e)
				if *read == at {
					goroutines = runtime.NumGoroutine()
				}
				if *read == at || end.every && *read > at {
					err := end.call(c)
					if *read == at {
						inside = err
					}
					most = max(most, runtime.NumGoroutine())
					if end.ret {
						return err
					}
				}
				return nil
			}
			start(t, c)
			writeFlush(t, k, p, "FromCallback", 0, n)
			close(queued)
			if end.want == winerr.ErrPossibleDeadlock {
				if err := c.Stop(); err != nil { // from outside: the consumer is still running
					t.Fatal(err)
				}
			}
			waited := make(chan error, 1)
			go func() { waited <- c.Wait() }()
			select {
			case err := <-waited:
				if err != nil {
					t.Errorf("Wait after %s from the callback: %v", end.name, err)
				}
			case <-time.After(time.Minute):
				t.Fatalf("the consumer did not end within a minute of %s from its callback", end.name)
			}
			if !errors.Is(inside, end.want) {
				t.Errorf("%s from the callback returned %v, want %v", end.name, inside, end.want)
			}
			if most > goroutines+5 {
				t.Errorf("%s from the callback: %d goroutines at most, %d before the first call", end.name, most, goroutines)
			}
			got, dropped := *read, c.Dropped.Load()
			switch {
			case end.whole && (got != n || dropped != 0):
				t.Errorf("after %s: the callback got %d events, %d dropped; want all %d, none dropped", end.name, got, dropped, n)
			case !end.whole && (got != at || uint64(got)+dropped != n):
				t.Errorf("after %s: the callback got %d events, %d dropped; want %d and the other %d dropped", end.name, got, dropped, at, n-at)
			}
			detached(t, k, end.name+" from the callback")
		})
	}
}

// TestDisableGroupProvider: a provider group enabled through Provider.EnableProperties
// (EVENT_ENABLE_PROPERTY_PROVIDER_GROUP) is disabled by DisableProvider, given the
// Provider as enabled or only its GUID: its member is enabled, then no longer.
func TestDisableGroupProvider(t *testing.T) {
	for _, byGUID := range []bool{false, true} {
		k, _ := syncKernel(t)
		group := guid.FromName("Etwemu.Test.Group")
		r, err := k.EventRegister(guid.FromName("Etwemu.Test.Member"), nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := k.EventSetInformation(r, emu.EventProviderSetTraits, regentry.BuildTraits("M", regentry.GroupTrait(group))); err != nil {
			t.Fatal(err)
		}
		s := consumer.NewRealTimeSessionOn(k, "Group")
		p := consumer.Provider{GUID: group, EnableLevel: 5, EnableProperties: consumer.EVENT_ENABLE_PROPERTY_PROVIDER_GROUP}
		if err := s.EnableProvider(p); err != nil {
			t.Fatal(err)
		}
		if !k.EventProviderEnabled(r, 4, 0) {
			t.Fatal("the group's enable did not reach its member")
		}
		if byGUID {
			p = consumer.Provider{GUID: group}
		}
		if err := s.DisableProvider(p); err != nil || len(s.Providers()) != 0 || k.EventProviderEnabled(r, 4, 0) {
			t.Errorf("by GUID %v: DisableProvider %v, %d providers left, member enabled %v; want nil, 0, false",
				byGUID, err, len(s.Providers()), k.EventProviderEnabled(r, 4, 0))
		}
		s.Stop()
	}
}

// A second Start says why with a Windows code: ERROR_BUSY while the consumer reads its
// sources, ERROR_INVALID_HANDLE once it stopped. An empty path given to FromFiles is
// ERROR_INVALID_PARAMETER at Start, naming FromFiles, where it was taken for a session of
// no name.
func TestStartTwiceAndEmptyPath(t *testing.T) {
	_, _, c := liveConsumer(t, "Twice", "Twice")
	start(t, c)
	if err := c.Start(); !errors.Is(err, winerr.ErrBusy) || !strings.Contains(err.Error(), "starts once") {
		t.Errorf("Start while running: %v, want ERROR_BUSY and why", err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); !errors.Is(err, winerr.ErrInvalidHandle) {
		t.Errorf("Start after Stop: %v, want ERROR_INVALID_HANDLE", err)
	}
	k, _ := syncKernel(t)
	err := consumer.NewConsumerOn(context.Background(), k).FromFiles("a.etl", "").Start()
	if !errors.Is(err, winerr.ErrInvalidParameter) || !strings.Contains(err.Error(), "FromFiles: path 1 is empty") {
		t.Errorf("FromFiles(\"\"): %v, want ERROR_INVALID_PARAMETER naming the empty path", err)
	}
}
