// Package consumer reads events, decoded, from an emulated kernel's real-time sessions
// and from ETL files, with the vocabulary of the golang-etw consumer libraries
// (0xrawsec/golang-etw and its fork tekert/golang-etw): code written for either runs
// against it with its import line changed to
//
//	etw "github.com/etwemu/etwemu/consumer"
//
// as in golang-etw's README:
//
//	s := etw.NewRealTimeSession("TestingGoEtw")
//	defer s.Stop()
//	if err := s.EnableProvider(etw.MustParseProvider("Microsoft-Windows-Kernel-File")); err != nil {
//		panic(err)
//	}
//	c := etw.NewRealTimeConsumer(context.Background())
//	defer c.Stop()
//	c.FromSessions(s)
//	go func() {
//		for e := range c.Events {
//			b, _ := json.Marshal(e)
//			fmt.Println(string(b))
//		}
//	}()
//	if err := c.Start(); err != nil {
//		panic(err)
//	}
//
// # The default kernel
//
// NewRealTimeSession, NewConsumer and NewRealTimeConsumer take no kernel, as golang-etw's
// take none: they use the process's default kernel, etw.Kernel, the one the etw package's
// providers write to, so a provider and a consumer in one process meet without wiring.
// NewRealTimeSessionOn and NewConsumerOn take an explicit kernel; nil there is the
// default kernel too.
//
// # When events arrive
//
// A real-time session whose Properties.FlushTimer is 0 flushes its buffers every second,
// as Windows documents for a real-time logger (EVENT_TRACE_PROPERTIES); FlushTimer N
// flushes every N seconds. RealTimeSession.Flush flushes at once (ControlTrace FLUSH).
//
// # Both forks
//
// Where the forks differ, the package keeps both compiling where it can: 0xrawsec's
// Events channel (a chan *Event; tekert's batched Events.Channel is not modelled),
// NewRealTimeConsumer and Err, and its PreparedCallback; tekert's NewConsumer,
// ProcessEvents (reading Events), LastError, Abort, StopWithTimeout, QueryTrace,
// RealTimeSession.Flush and Event.Release, and its EventPreparedCallback (the same step
// as PreparedCallback). The Session interface is 0xrawsec's (tekert's adds
// IsKernelSession, which RealTimeSession has). LostEvents and Skipped are tekert's
// atomic counters; Skipped counts what 0xrawsec's does (Skippable events a full Events
// dropped), and the events filters and callbacks drop, which neither fork counts, are in
// Filtered. System follows 0xrawsec's Event (Keywords as Value and Name, GUIDs as
// strings) with tekert's Version. Errors a callback returns are recorded (Err,
// LastError) and the events go on, as in both forks.
//
// # Events
//
// Each Event carries its EVENT_HEADER fields in golang-etw's System shape (channel,
// level, opcode and keyword names from winmeta.xml's well-known values, the task name
// from the TraceLogging event name), its extended items' names, and its properties in
// EventData as TDH formats them: strings, as golang-etw delivers them (see
// Event.EventData). The typed values are in Fields, the raw header, extended items and
// payload in Header, Ext and Payload; they are left out of the event's JSON, which has
// golang-etw's field names only.
//
// # Lifecycle
//
// A consumer lives as an http.Server does. Start attaches to the sessions (OpenTrace)
// and opens the files; each source is then read on a goroutine of its own
// (ProcessTrace). The consumer ends when every source has ended by itself (its session
// stopped, its file read to the end), or on Stop, which ends it as golang-etw's does:
// the sources detach (CloseTrace), Events takes nothing more (it keeps what it holds, and
// Dropped counts the rest), an EventCallback of the user's still gets every buffer
// already queued, then Events closes; Stop never waits for a reader. Shutdown ends it
// gracefully, delivering everything queued to Events too, within a deadline if its
// context has one. Close (Abort), or the end of the consumer's context, ends it at once
// and drops what is queued, counting the dropped events in Dropped. The first source to
// fail (a malformed file) ends the others at once and Wait and Err return its error,
// after the events read before it were delivered. Stop and Close are valid in any
// state: before Start they end the consumer unstarted, and Events closes.
//
// The callbacks are called for one event at a time per consumer, so they need no lock
// of their own. Each Event holds its payload and extended items in memory of its own,
// copied out of the session's buffer: consumers may keep and change events without
// pinning buffers or seeing each other's changes.
//
// Events lost are announced as golang-etw users see them from Windows: an event of the
// RT_LostEvent class (opcode 32 RTLostEvent, 33 RTLostBuffer) carrying the count, and
// LostEvents and LostBuffers count them. LostEvents counts the events the sessions
// refused while the consumer was attached (lost to every consumer); LostBuffers counts
// only the buffers dropped for this consumer because it fell behind, and LostBufferEvents
// the events in them. With Skipped, Filtered and Dropped they account for every event a
// session sent the consumer: delivered + LostEvents + LostBufferEvents + Skipped +
// Filtered + Dropped.
// Events still in a session's buffers when the consumer ends were not sent to it: the
// session keeps them for the next consumer, or counts them in its
// Stats().RealTimeEventsLost when it drops them with none attached.
package consumer
