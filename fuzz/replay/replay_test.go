package replay_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/fuzz"
	"github.com/etwemu/etwemu/scenario"
)

// A program printed as a scenario replays on the scenario machine with every answer the
// harness saw: each operation the emulator refused is an expect of the same code, and
// each it accepted runs without error. Two drivers, one through the fuzz harness and one
// through the scenario language, agree on a thousand random programs.
func TestProgramsAsScenarios(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 200
	}
	rng := rand.New(rand.NewPCG(5, 6))
	lines := 0
	for i := range n {
		data := randomInput(rng, 400)
		p := fuzz.Decode(data)
		// The scenario language cannot hold a logger back, nor register through package
		// etw: the program goes on without those operations (every list of operations is
		// a program). Its writes are EventWriteEx calls without activity ids, so an
		// EventWriteTransfer, whose related activity id can make the event too large,
		// is made an EventWriteEx.
		p.Ops = slices.DeleteFunc(p.Ops, func(o fuzz.Op) bool { return o.Kind == fuzz.OpHold || o.Kind == fuzz.OpRegister && o.TL })
		for j := range p.Ops {
			if p.Ops[j].API == fuzz.APITransfer {
				p.Ops[j].API = fuzz.APIEx
			}
		}
		text, err := fuzz.Scenario(p)
		if err != nil {
			t.Fatalf("input %d (%x): %v", i, data, err)
		}
		var out bytes.Buffer
		m := scenario.New(&out)
		err = m.Run(strings.NewReader(text))
		m.Close()
		if err != nil {
			t.Fatalf("input %d (%x): the scenario does not replay: %v\n%s", i, data, err, text)
		}
		lines += strings.Count(text, "\n")
	}
	t.Logf("%d programs, %d scenario lines replayed", n, lines)
	if lines < 10*n {
		t.Fatalf("%d programs gave only %d scenario lines: too few operations reach the replay", n, lines)
	}
}

// randomInput returns 2 to max+1 random bytes.
func randomInput(rng *rand.Rand, max int) []byte {
	data := make([]byte, 2+rng.IntN(max))
	for j := range data {
		data[j] = byte(rng.Uint32())
	}
	return data
}

// Every committed FuzzInterplay seed prints as a scenario that replays, TraceLogging
// providers and all: their registrations and the operations through them are comments
// there, as are the operations of a held logger or an interleaved write, whose
// programs are left out here (the refusals they cause cannot be replayed without them).
func TestSeedsAsScenarios(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "fuzz", "FuzzInterplay", "*"))
	if err != nil || len(files) < 30 {
		t.Fatalf("%d seeds (%v)", len(files), err)
	}
	replayed, viaTL := 0, 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		body, ok := strings.CutPrefix(string(b), "go test fuzz v1\n[]byte(")
		if !ok {
			t.Fatalf("%s: not a fuzz corpus file", f)
		}
		q, err := strconv.Unquote(strings.TrimSuffix(strings.TrimSpace(body), ")"))
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		p := fuzz.Decode([]byte(q))
		if slices.ContainsFunc(p.Ops, func(o fuzz.Op) bool { return o.Kind == fuzz.OpHold }) {
			continue
		}
		text, err := fuzz.Scenario(p)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		var out bytes.Buffer
		m := scenario.New(&out)
		err = m.Run(strings.NewReader(text))
		m.Close()
		if err != nil {
			t.Errorf("%s: the scenario does not replay: %v\n%s", filepath.Base(f), err, text)
		}
		replayed++
		if strings.Contains(text, "is package etw's provider)") {
			viaTL++
		}
	}
	if replayed < 25 || viaTL == 0 {
		t.Fatalf("%d seeds replayed, %d with writes through package etw's provider: the test reaches too little", replayed, viaTL)
	}
}
