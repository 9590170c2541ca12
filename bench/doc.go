// Package bench holds etwemu's end-to-end benchmarks: events written through the public
// emu API (EventRegister, StartTrace, EnableTraceEx2, EventWrite) against realistic
// sessions, compared in the same run with the floor, a mutex-protected buffer and a
// buffered channel. The suite itself is bench/benchsuite; bench/peers (a module of its
// own) runs it beside zerolog and zap and writes the table of bench/RESULTS.md, which
// holds the current figures; bench/HISTORY.md is the record of how they were reached.
//
// Run them with
//
//	go test -run '^$' -bench . -count 10 ./bench/ | tee new.txt
//
// and compare two versions with benchstat (golang.org/x/perf/cmd/benchstat). Each result
// reports ns/op, B/op, allocs/op, MB/s of payload, events/s and lost/op (events the
// sessions dropped for want of a free buffer, per event written). BenchmarkProbe times
// no tracing at all, only integer work whose time moves with the machine
// (bench/benchbase.Probe): where its runs spread, every benchmark's can spread as much.
package bench
