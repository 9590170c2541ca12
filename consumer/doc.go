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
// Each Event carries its EVENT_HEADER fields in golang-etw's System shape, its extended
// items, and for a TraceLogging event its name and fields, decoded from the event's
// EVENT_SCHEMA_TL item (in order in Fields, by name in EventData). Events the session
// lost are announced as golang-etw users see them from Windows: an event of the
// RT_LostEvent class (opcode 32 RTLostEvent, 33 RTLostBuffer) carrying the count, and
// LostEvents and LostBuffers count them.
package consumer
