package fuzz

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/etwemu/etwemu/internal/fault"
)

// FuzzInterplay runs decoded operation sequences on a deterministic kernel and the
// reference model, comparing after every step (see Run). Its seed corpus is the committed
// testdata/fuzz/FuzzInterplay, written from seeds().
func FuzzInterplay(f *testing.F) {
	deepStacks()
	oneProcessorWorker()
	f.Fuzz(func(t *testing.T, data []byte) {
		defer watchdog(data, 20*time.Second)()
		if err := Run(data); err != nil {
			t.Fatal(err)
		}
	})
}

// oneProcessorWorker sets GOMAXPROCS to 1 in a fuzzing worker process (testing's
// -test.fuzzworker), and does nothing elsewhere. FuzzInterplay's programs run on a
// synchronous kernel in one goroutine at a time. The engine starts a worker per CPU,
// each with a P per CPU: a worker's second P woke a thread for the goroutine each
// execution starts, and it spun for work on the CPU the other worker needed. With one P,
// 100,000 executions took a quarter less time here on 2 CPUs (see docs/fuzzing.md).
func oneProcessorWorker() {
	if w := flag.Lookup("test.fuzzworker"); w != nil && w.Value.String() == "true" {
		runtime.GOMAXPROCS(1)
	}
}

// oneProcessorWorker changes GOMAXPROCS in a fuzzing worker only.
func TestOneProcessorWorker(t *testing.T) {
	before := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(before)
	oneProcessorWorker()
	if got := runtime.GOMAXPROCS(0); got != before {
		t.Fatalf("GOMAXPROCS %d outside a fuzzing worker, want %d as it was", got, before)
	}
	w := flag.Lookup("test.fuzzworker")
	if w == nil {
		t.Fatal("testing has no -test.fuzzworker flag")
	}
	old := w.Value.String()
	defer flag.Set("test.fuzzworker", old)
	if err := flag.Set("test.fuzzworker", "true"); err != nil {
		t.Fatal(err)
	}
	oneProcessorWorker()
	if got := runtime.GOMAXPROCS(0); got != 1 {
		t.Fatalf("GOMAXPROCS %d in a fuzzing worker, want 1", got)
	}
}

// Every seed passes, and decodes back to the program it was encoded from.
func TestSeeds(t *testing.T) {
	for _, s := range seeds() {
		t.Run(s.name, func(t *testing.T) {
			if err := Run(s.data); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The interleaved-switch seed reaches the race of two writers switching one buffer:
// writes run inside another writer's switch, and writers retire the buffer they took.
func TestSeedReachesSwitchRace(t *testing.T) {
	cov := runSeed(t, "interleaved-switch")
	if cov.Interleaved < 4 || cov.Retired < 3 || cov.Lost == 0 {
		t.Fatalf("%d interleaved writes, %d retired buffers, %d events lost: the seed misses the race", cov.Interleaved, cov.Retired, cov.Lost)
	}
}

// runSeed runs the seed named name and returns what it exercised.
func runSeed(t *testing.T, name string) Coverage {
	t.Helper()
	for _, s := range seeds() {
		if s.name == name {
			cov, err := RunProgram(Decode(s.data))
			if err != nil {
				t.Fatal(err)
			}
			return cov
		}
	}
	t.Fatalf("no seed %s", name)
	return Coverage{}
}

// The tracelogging-provider seed writes through package etw's provider: events its own
// filter passes reach the session, with their traits and schema, and the others do not.
func TestSeedWritesTraceLogging(t *testing.T) {
	cov := runSeed(t, "tracelogging-provider")
	if cov.TraceLogging != 7 || cov.Delivered != 3 || cov.Lost != 1 {
		t.Fatalf("%d TraceLogging writes, %d delivered, %d lost; want 7, 3 (level 3 with keyword 2 or none, then level 5 after the second enable) and 1 (too large)",
			cov.TraceLogging, cov.Delivered, cov.Lost)
	}
}

// The filters seed's writes reach the sessions each enablement's filters keep: its 64
// writes make 82 deliveries (see filterOps), where a filter ignored or applied to the
// wrong enablement gives another count.
func TestSeedFilters(t *testing.T) {
	cov := runSeed(t, "filters")
	// s0 drops id 1 (6), then takes all nine through its group (9 in each of the next
	// six rounds); s1 keeps 2 and 3 (6), its own process (9), another's (0), drops 2 (6),
	// keeps 1 and 3 of another process (0); after s0's provider enable goes, the last
	// write reaches s0 through the group (1).
	if want := uint64(6 + 9 + (9 + 6) + (9 + 9) + 9 + (9 + 6) + 9 + 1); cov.Delivered != want {
		t.Fatalf("%d events delivered, want %d", cov.Delivered, want)
	}
	if cov.Lost != 0 {
		t.Fatalf("%d events lost, want none", cov.Lost)
	}
}

// The filters-executable seed's writes reach the sessions the EXECUTABLE_NAME filters
// keep: s1 takes all nine writes with its own executable's name, none with another's,
// and ids 3 and 1 (6) with its name in capitals beside another's and id 2 dropped; in
// the second round s0, without filters, takes all 27 as well.
func TestSeedExecutableFilters(t *testing.T) {
	cov := runSeed(t, "filters-executable")
	if want := uint64((9 + 0 + 6) + (27 + 9 + 0 + 6)); cov.Delivered != want || cov.Lost != 0 {
		t.Fatalf("%d events delivered, %d lost; want %d and none", cov.Delivered, cov.Lost, want)
	}
}

// The enable-stack seed's writes all reach s0 (24) and those of id 1 in the second
// round s1 (6), each with a stack of 32 return addresses (the records' sizes and items
// are compared with the model's on the way).
func TestSeedStack(t *testing.T) {
	cov := runSeed(t, "enable-stack")
	if want := uint64(24 + 6); cov.Delivered != want || cov.Lost != 0 {
		t.Fatalf("%d events delivered, %d lost; want %d and none", cov.Delivered, cov.Lost, want)
	}
}

// The enable-properties seed's records carry the items their enablement asks for: every
// one of its 24 writes reaches s0, and 18 reach s1.
func TestSeedProperties(t *testing.T) {
	cov := runSeed(t, "enable-properties")
	if cov.Delivered != 24+18 || cov.Lost != 0 {
		t.Fatalf("%d events delivered, %d lost; want %d and none", cov.Delivered, cov.Lost, 24+18)
	}
}

// A deliberately broken emulator is caught: with the fault hook keeping EnableMask bits
// after a disable, random programs (fixed seed) expose it within a few hundred inputs,
// and the report names the mask, and its scenario the step that failed. The same holds
// for dropped enable callbacks.
func TestModelCatchesInjectedFaults(t *testing.T) {
	for _, tc := range []struct {
		f    fault.Fault
		want string
	}{
		{fault.KeepMaskOnDisable, "EnableMask"},
		{fault.SkipCallbackOnEnable, "callbacks"},
	} {
		t.Run(fmt.Sprint(tc.f), func(t *testing.T) {
			restore := fault.Set(tc.f)
			defer restore()
			rng := rand.New(rand.NewPCG(1, 2))
			start := time.Now()
			for i := 0; i < 5000; i++ {
				data := randomInput(rng, 200)
				err := Run(data)
				if err == nil {
					continue
				}
				if !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("input %d: the fault was reported as\n%v\nwhich does not mention %s", i, err, tc.want)
				}
				if !strings.Contains(err.Error(), "\n# The harness failed at the last line above, step ") {
					t.Fatalf("input %d: the report's scenario does not say where the run failed:\n%v", i, err)
				}
				t.Logf("caught after %d random inputs in %v: %v", i+1, time.Since(start), strings.SplitN(err.Error(), "\n", 2)[0])
				return
			}
			t.Fatal("5000 random programs ran on a broken emulator and the model saw nothing")
		})
	}
}

// Random programs from a fixed seed agree with the model; a quick, always-run sample of
// what the fuzzer does.
func TestRandomPrograms(t *testing.T) {
	n := 2000
	if testing.Short() {
		n = 200
	}
	total := sample(t, n, rand.NewPCG(3, 4), func(data []byte) (Coverage, error) { return RunProgram(Decode(data)) })
	// The sample must have exercised every operation both ways, and events both ways
	// (the short sample is too small to be sure of every kind).
	for k := Kind(0); k < numKinds && !testing.Short(); k++ {
		if total.Succeeded[k] == 0 || (total.Failed[k] == 0 && k != OpRegister) {
			t.Errorf("%v: %d succeeded, %d failed; the sample does not exercise it", k, total.Succeeded[k], total.Failed[k])
		}
	}
	if !testing.Short() && total.TraceLogging == 0 {
		t.Errorf("no TraceLogging write: the sample does not exercise package etw's provider")
	}
	if !testing.Short() && total.Stacks == 0 {
		t.Errorf("no record with a stack: the sample does not exercise STACK_TRACE")
	}
	if total.Delivered == 0 || total.Lost == 0 || total.Callbacks == 0 {
		t.Errorf("delivered %d, lost %d, callbacks %d: the sample does not exercise the write path", total.Delivered, total.Lost, total.Callbacks)
	}
	t.Logf("%d programs: %+v", n, total)
}

var (
	updateCorpus = flag.Bool("update-corpus", false, "rewrite fuzz/testdata/fuzz/FuzzInterplay from the seeds")
	rawCorpus    = flag.String("raw-corpus", "", "also write each seed's raw bytes into this directory (OSS-Fuzz's corpus format)")
)

// The committed corpus holds every seed under its readable name, so `go test -fuzz`
// starts from them and plain `go test` replays them; -update-corpus rewrites it.
func TestCorpusMatchesSeeds(t *testing.T) {
	dir := filepath.Join("testdata", "fuzz", "FuzzInterplay")
	for _, s := range seeds() {
		file := filepath.Join(dir, s.name)
		want := fmt.Sprintf("go test fuzz v1\n[]byte(%q)\n", s.data)
		if *rawCorpus != "" {
			if err := os.WriteFile(filepath.Join(*rawCorpus, s.name), s.data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if *updateCorpus {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(file)
		if err != nil || string(got) != want {
			t.Errorf("%s is missing or stale (%v); run go test ./fuzz -run TestCorpusMatchesSeeds -update-corpus", file, err)
		}
	}
}

// FuzzConcurrent splits each program across goroutines on a kernel with real logger
// goroutines; run it with -race. Its corpus starts from FuzzInterplay's seeds.
func FuzzConcurrent(f *testing.F) {
	deepStacks()
	for _, s := range seeds() {
		f.Add(s.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		defer watchdog(data, 2*Deadline)() // RunConcurrent names a stuck worker's operation first
		if _, err := RunConcurrent(data); err != nil {
			t.Fatal(err)
		}
	})
}

// The concurrent run over random programs from a fixed seed: what `go test -race` always
// checks, without the fuzzer.
func TestConcurrentPrograms(t *testing.T) {
	n := 200
	if testing.Short() {
		n = 30
	}
	total := sample(t, n, rand.NewPCG(5, 6), RunConcurrent)
	if total.Delivered == 0 || total.Lost == 0 || total.Callbacks == 0 {
		t.Fatalf("delivered %d, lost %d, registrations checked against their last callback %d: the sample does not exercise the write path and enablement",
			total.Delivered, total.Lost, total.Callbacks)
	}
	t.Logf("%d programs: %d events delivered, %d lost, %d registrations' last callbacks checked", n, total.Delivered, total.Lost, total.Callbacks)
}

// watchdog crashes the process with every goroutine's stack if one input runs for
// longer than limit (inputs take milliseconds), so a deadlock becomes a reported crasher
// with its input instead of a silent stall. Call the returned function when done.
func watchdog(data []byte, limit time.Duration) (stop func()) {
	t := time.AfterFunc(limit, func() {
		buf := make([]byte, 1<<20)
		n := runtime.Stack(buf, true)
		panic(fmt.Sprintf("input %x ran for %v; goroutines:\n%s", data, limit, buf[:n]))
	})
	return func() { t.Stop() }
}

// sample runs n random inputs of up to 400 bytes from src through run, failing on the
// first error, and returns the summed coverage.
func sample(t *testing.T, n int, src rand.Source, run func([]byte) (Coverage, error)) Coverage {
	t.Helper()
	rng := rand.New(src)
	var total Coverage
	for i := 0; i < n; i++ {
		data := randomInput(rng, 400)
		cov, err := run(data)
		if err != nil {
			t.Fatalf("input %d (%x): %v", i, data, err)
		}
		total.Add(cov)
	}
	return total
}

// randomInput returns 2 to max+1 random bytes.
func randomInput(rng *rand.Rand, max int) []byte {
	data := make([]byte, 2+rng.IntN(max))
	for j := range data {
		data[j] = byte(rng.Uint32())
	}
	return data
}

// The PMC seed reaches every outcome it is written for, and counted events.
func TestPMCSeed(t *testing.T) {
	for _, s := range seeds() {
		if s.name != "pmc-counters-events-writes" {
			continue
		}
		cov, err := RunProgram(Decode(s.data))
		if err != nil {
			t.Fatal(err)
		}
		// Three lists set (counters on two sessions, events on one); refused: events
		// before counters, counters past the HAL's eight, five events, a second event
		// and counter list on s0, a second counter list on s1, a session that is not there.
		if cov.Succeeded[OpPMC] != 3 || cov.Failed[OpPMC] != 7 || cov.Counted == 0 || cov.Succeeded[OpSysWrite] == 0 || cov.Failed[OpSysWrite] != 1 {
			t.Errorf("coverage %+v", cov)
		}
		return
	}
	t.Fatal("no PMC seed")
}
