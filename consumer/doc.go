// Package consumer reads events, decoded, from an emulated kernel's real-time sessions
// and from ETL files, with the vocabulary of the golang-etw consumer libraries
// (0xrawsec/golang-etw and its fork tekert/golang-etw): a RealTimeSession that providers
// are enabled on, a Consumer fed from sessions, trace names or files, an Events channel
// or an EventCallback, LostEvents, Start and Stop.
//
//	s := consumer.NewRealTimeSession(k, "MySession")
//	s.EnableProvider(consumer.MustParseProvider("MyCompany.MyComponent:5"))
//	c := consumer.NewConsumer(ctx, k).FromSessions(s)
//	c.Start()
//	for e := range c.Events {
//		fmt.Println(e.System.Provider.Name, e.Name, e.EventData)
//	}
//
// A nil kernel is the etw package's (etw.Kernel), the one providers write to when made
// without etw.WithKernel.
//
// A consumer lives as an http.Server does. Start attaches to the sessions (OpenTrace)
// and opens the files; each source is then read on a goroutine of its own
// (ProcessTrace). The consumer ends when every source has ended by itself (its session
// stopped, its file read to the end), or on Stop, which ends it gracefully: the sources
// detach (CloseTrace), every buffer already queued for the consumer is still delivered,
// then Events closes; Shutdown is Stop with a deadline. Close, or the end of the
// consumer's context, ends it at once and drops what is queued. The first source to fail
// (a malformed file, a callback's error) ends the others at once and Wait and Err return
// its error, after the events read before it were delivered. Stop and Close are valid in
// any state: before Start they end the consumer unstarted, and Events closes.
//
// EventCallback is called by one source at a time, so it needs no lock of its own. Each
// Event holds its payload and extended items in memory of its own, copied out of the
// session's buffer: consumers may keep and change events without pinning buffers or
// seeing each other's changes.
//
// Each Event carries its EVENT_HEADER fields in golang-etw's System shape, its extended
// items, and for a TraceLogging event its name and fields, decoded from the event's
// EVENT_SCHEMA_TL item (in order in Fields, by name in EventData). Events lost are
// announced as golang-etw users see them from Windows: an event of the RT_LostEvent
// class (opcode 32 RTLostEvent, 33 RTLostBuffer) carrying the count, and LostEvents and
// LostBuffers count them. LostEvents counts the events the sessions refused while the
// consumer was attached (lost to every consumer); LostBuffers counts only the buffers
// dropped for this consumer because it fell behind.
package consumer
