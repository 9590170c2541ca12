package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
)

// reportNumber reads the number the regular expression re's first group matches in s.
func reportNumber(t *testing.T, s, re string) uint64 {
	t.Helper()
	m := regexp.MustCompile(re).FindStringSubmatch(s)
	if m == nil {
		t.Fatalf("output lacks %q:\n%s", re, s)
	}
	n, err := strconv.ParseUint(m[1], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// readWhole reads an ETL file to its end and returns its header, the buffers read (the
// header buffer included) and the events (EVENT_HEADER records) in it. Any error fails
// the test: the file must read whole.
func readWhole(t *testing.T, path string) (h etl.LogfileHeader, buffers int, events uint64) {
	t.Helper()
	f, err := etl.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for {
		b, err := f.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s after %d buffers: %v", path, buffers, err)
		}
		buffers++
		if b.FileOffset == 0 {
			continue
		}
		err = b.Records(func(r etl.Record) error {
			if r.Kind == etl.KindEventHeader {
				events++
			}
			return nil
		})
		if err != nil {
			t.Fatalf("%s buffer %d: %v", path, buffers, err)
		}
	}
	return f.Header(), buffers, events
}

// SIGTERM stops the demo cleanly: the writers stop, the session is stopped, the file's
// header is finalized with the counters the report prints (BuffersWritten, EventsLost,
// EndTime), and the exit status is 143. Compressed files too.
func TestDemoSignalFinalizesTheFile(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "compressed"}[compress], func(t *testing.T) {
			send, _ := fakeSignals(t)
			demoFirstBuffer = func(ctx context.Context, s *emu.Session) {
				// The logger is held here, so no buffer comes back to the free list and
				// the writers, filling the rest, start losing events: then the report's
				// losses and the header's are worth comparing.
				for s.Stats().EventsLost == 0 {
					runtime.Gosched()
				}
				send(syscall.SIGTERM)
				<-ctx.Done() // the signal was taken: the writers stop from here on
			}
			t.Cleanup(func() { demoFirstBuffer = nil })
			path := filepath.Join(t.TempDir(), "k.etl")
			args := []string{"demo", "-logfile", path, "-duration", "1h", "-progress", "0", "-processors", "2",
				"-slow-sink", "1ms", "-version", "1607"}
			if compress {
				args = append(args, "-compress")
			}
			var out bytes.Buffer
			var errb syncBuffer
			code := run(args, &out, &errb)
			if code != 128+int(syscall.SIGTERM) {
				t.Fatalf("exit %d, want 143\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
			}
			if !strings.Contains(errb.String(), "SIGTERM: stopping the demo") {
				t.Errorf("stderr %q does not say what the signal stops", errb.String())
			}
			s := out.String()
			if !strings.Contains(s, "interrupted by SIGTERM: the writers stopped early") {
				t.Errorf("the report does not say it was interrupted:\n%s", s)
			}
			lost := reportNumber(t, s, `events lost\s+(\d+)`)
			written := reportNumber(t, s, `events written\s+(\d+)`)
			if writers := reportNumber(t, s, `the writers counted (\d+)`); writers != lost {
				t.Errorf("the writers counted %d lost, the session %d", writers, lost)
			}
			h, buffers, events := readWhole(t, path)
			if uint64(h.EventsLost) != lost || int(h.BuffersWritten) != buffers || h.EndTime == 0 {
				t.Errorf("header: EventsLost %d (report %d), BuffersWritten %d (%d in the file), EndTime %d: not finalized",
					h.EventsLost, lost, h.BuffersWritten, buffers, h.EndTime)
			}
			if h.BuffersLost == 0 && events != written {
				t.Errorf("the file holds %d events, the report says %d written", events, written)
			}
			if lost == 0 || written == 0 {
				t.Errorf("%d events written, %d lost before the signal: the hook waited for both", written, lost)
			}
		})
	}
}

// SIGINT stops logsave's writing early; the ring as it stands is saved and reads whole,
// and the exit status is 130.
func TestLogsaveSignalSavesTheRing(t *testing.T) {
	send, _ := fakeSignals(t)
	logsaveWriting = func(ctx context.Context) {
		send(os.Interrupt)
		<-ctx.Done()
	}
	t.Cleanup(func() { logsaveWriting = nil })
	path := filepath.Join(t.TempDir(), "ring.etl")
	var out bytes.Buffer
	var errb syncBuffer
	code := run([]string{"logsave", "-events", "5000000", "-o", path}, &out, &errb)
	if code != 130 {
		t.Fatalf("exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	s := out.String()
	stopped := reportNumber(t, s, `stopped writing after (\d+) of 5000000 events`)
	if stopped != logsaveBatch {
		t.Errorf("stopped after %d events, want %d: the first look at the context after the signal", stopped, logsaveBatch)
	}
	if w := reportNumber(t, s, `wrote (\d+) events`); w != stopped {
		t.Errorf("report says %d written, stopped after %d", w, stopped)
	}
	kept := reportNumber(t, s, `holding the newest (\d+) events`)
	h, _, events := readWhole(t, path)
	if events != kept || h.EndTime == 0 {
		t.Errorf("the file holds %d events (report: %d), EndTime %d", events, kept, h.EndTime)
	}
	if h.EventsLost != uint32(reportNumber(t, s, `EventsLost (\d+)`)) {
		t.Errorf("header EventsLost %d differs from the report", h.EventsLost)
	}
}

// -events counts events written: filtered ones do not count, so the file holds exactly
// that many.
func TestDemoEventsCountsWrittenEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), "n.etl")
	var out, errb bytes.Buffer
	if code := run([]string{"demo", "-logfile", path, "-events", "3000", "-progress", "0", "-processors", "2"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errb.String(), out.String())
	}
	s := out.String()
	if written := reportNumber(t, s, `events written\s+(\d+)`); written != 3000 {
		t.Errorf("report: %d events written, want 3000\n%s", written, s)
	}
	if filtered := reportNumber(t, s, `filtered out\s+(\d+)`); filtered == 0 {
		t.Errorf("nothing filtered: the test does not show that filtered events are not counted")
	}
	h, _, events := readWhole(t, path)
	if h.BuffersLost == 0 && events != 3000 {
		t.Errorf("the file holds %d events, want 3000", events)
	}
	if !strings.Contains(s, "what -events counts") {
		t.Errorf("the report does not say what -events counts:\n%s", s)
	}
	out.Reset()
	run([]string{"help", "demo"}, &out, &errb)
	if !strings.Contains(out.String(), "filtered and lost events do not count") {
		t.Errorf("help demo does not say what -events counts:\n%s", out.String())
	}
}

// -pmc names are checked with the other flags, before the session header is printed.
func TestDemoPMCRefusedFirst(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"demo", "-pmc", "TotalCycles,NoSuchCounter"}, &out, &errb); code != 2 {
		t.Fatalf("exit %d, want 2: %s", code, errb.String())
	}
	if out.Len() != 0 || !strings.HasPrefix(errb.String(), `etwemu demo: -pmc "TotalCycles,NoSuchCounter": `) {
		t.Errorf("stdout %q, stderr %q: want nothing printed before the refusal", out.String(), errb.String())
	}
}

// SIGINT stops bench after the benchmark under way: the table holds the rows measured
// whole, the exit status is 130. The sweep likewise prints the writer counts with a whole
// round.
func TestBenchSignalPrintsWhatWasMeasured(t *testing.T) {
	send, _ := fakeSignals(t)
	at := 0 // the benchmark (suite) or run (sweep) before which the signal comes
	benchMeasuring = func(ctx context.Context, i int) {
		if i == at {
			send(syscall.SIGINT)
			<-ctx.Done()
		}
	}
	t.Cleanup(func() { benchMeasuring = nil })

	at = 2
	var out bytes.Buffer
	var errb syncBuffer
	if code := run([]string{"bench", "-benchtime", "1ms"}, &out, &errb); code != 130 {
		t.Fatalf("bench: exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	if !strings.Contains(out.String(), "Interrupted: the 2 of ") || !strings.Contains(out.String(), "before the suite; not run after it") {
		t.Errorf("stdout does not give the two rows measured whole:\n%s", out.String())
	}

	// The sweep of 1 and 2 writers runs five designs a round: the signal before run 7
	// leaves one whole round of 1 writer, and none of 2.
	at = 7
	out.Reset()
	if code := run([]string{"bench", "-sweep", "-writers", "1,2", "-benchtime", "1ms", "-json"}, &out, &errb); code != 130 {
		t.Fatalf("bench -sweep: exit %d, want 130\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	var points []struct {
		Writers int `json:"writers"`
	}
	if err := json.Unmarshal(out.Bytes(), &points); err != nil || len(points) != 4 || points[3].Writers != 1 {
		t.Fatalf("points %+v (%v); want the four designs at 1 writer\n%s", points, err, out.String())
	}
}
