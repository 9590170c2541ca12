// Package etw is a TraceLogging provider with the names and semantics of go-winio's
// pkg/etw (github.com/Microsoft/go-winio/pkg/etw), writing to an emulated kernel: code
// instrumented with go-winio compiles against it by changing its import paths,
// github.com/Microsoft/go-winio/pkg/etw to github.com/etwemu/etwemu/etw and
// github.com/Microsoft/go-winio/pkg/guid to github.com/etwemu/etwemu/guid (which has
// go-winio's guid API whole), and runs on Linux, where go-winio's provider does not
// build.
//
//	p, err := etw.NewProvider("MyCompany.MyComponent", nil)
//	...
//	defer p.Close()
//	p.WriteEvent("Started", etw.WithEventOpts(etw.WithLevel(etw.LevelInfo)),
//		etw.WithFields(etw.StringField("Name", name), etw.Uint32Field("Count", n)))
//
// Providers register with the package's kernel (Kernel, SetKernel), the process's
// default kernel, which package consumer's golang-etw-shaped sessions and consumers use
// too, so that a provider and a consumer in one process meet without wiring; or with the
// kernel WithKernel names. Registration is EventRegister, then EventSetInformation with the
// provider traits (name and group), so that the kernel honours the data descriptors'
// types; each event is EventWriteTransfer with three typed descriptors, as go-winio
// writes it: the provider metadata (PROV_TRAITS in the event), the event metadata
// (EVENT_SCHEMA_TL) and the fields' values (the payload). Package tracelogging reads
// them back.
//
// As in go-winio: the provider GUID comes from the name by the EventSource algorithm
// unless WithID gives one; events default to level Verbose (5) and channel
// TraceLogging (11); WriteEvent applies its event options, then returns nil at once when
// no session wants the event; the enable callback's state is what IsEnabled and its
// kin test; methods of a nil *Provider do nothing. Beyond go-winio: WithKernel,
// BinaryField and GUIDField.
package etw
