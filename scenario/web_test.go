package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/guid"
)

// The views' JSON says what the page draws: each processor's current buffer, where a
// logger's buffers go, and a log file's buffers with a circular file's wrap.
func TestViewsJSONForThePicture(t *testing.T) {
	m, out := machine(t, "start ring mode=CIRCULAR,USE_KBYTES_FOR_SIZE file=ring.etl maxfile=16 buffer=4 min=2 max=4",
		"register C", "enable ring C", "write C 300 size=100", "flush ring", "write C 60 size=100", "flush ring", "write C 5 proc=1")
	get := func(cmd string, v any) {
		out.Reset()
		if err := m.Exec(cmd); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out.Bytes(), v); err != nil {
			t.Fatalf("%s: %v", cmd, err)
		}
	}
	var rows []loggerRow
	get("strdump -json", &rows)
	if len(rows) != 1 || strings.Join(rows[0].Destinations, ",") != "file ring.etl" {
		t.Errorf("destinations: %+v", rows)
	}
	var bufs []bufferRow
	get("bufdump ring -json", &bufs)
	current := 0
	for _, b := range bufs {
		if b.Current {
			current++
			if b.Stream != 1 || b.CurrentOffset <= headerSize {
				t.Errorf("current buffer %+v: want processor 1's, written to", b)
			}
		}
	}
	if current != 1 {
		t.Errorf("%d current buffers, want processor 1's: %+v", current, bufs)
	}
	var files []fileRow
	get("files -json", &files)
	if len(files) != 1 || len(files[0].Buffers) != 4 || files[0].Buffers[0].FileOffset != 0 || files[0].WrapAt < 2 {
		t.Errorf("files: %+v", files)
	}
}

// poke writes only the modelled fields, says TAMPERED, and check finds it.
func TestPokeAndCheck(t *testing.T) {
	m, out := machine(t, "start s file=s.etl", "register P", "enable s P", "check")
	if !strings.Contains(out.String(), "agree") {
		t.Fatalf("check before the poke: %s", out.String())
	}
	for _, bad := range []string{"poke reg P", "poke reg P slot=1", "poke guid P mask=1", "poke guid P slot=9", "poke guid P slot=3", "poke reg Q mask=0", "poke eprocess P mask=0", "poke guid Q slot=0"} {
		if err := m.Exec(bad); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	out.Reset()
	if err := m.Exec("poke reg P mask=0"); err != nil || !strings.HasPrefix(out.String(), "TAMPERED") {
		t.Fatalf("poke: %v %q", err, out.String())
	}
	out.Reset()
	_ = m.Exec("write P 1")
	_ = m.Exec("check")
	if !strings.Contains(out.String(), "no session enabled it") || !strings.Contains(out.String(), "reg-mask") {
		t.Fatalf("after the poke: %s", out.String())
	}
}

// An attached machine reads a program's kernel and refuses what would replace it.
func TestAttach(t *testing.T) {
	k, err := emu.New(emu.Config{Processors: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	r, err := k.EventRegister(emuGUID, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	m := Attach(&out, k, nil, Provider{Name: "Prog", Reg: r})
	if err := m.Exec("kernel"); err == nil {
		t.Error("kernel on an attached machine")
	}
	if err := m.Exec("advance 1ms"); err == nil {
		t.Error("advance on an attached machine")
	}
	if err := m.Exec("start live mode=REAL_TIME"); err != nil {
		t.Fatal(err)
	}
	// No output bound: no kernel line could start a new count.
	m.printed.n = DefaultOutput + 1
	out.Reset()
	if err := m.Exec("regs"); err != nil || !strings.Contains(out.String(), "Prog") {
		t.Fatalf("regs: %v %s", err, out.String())
	}
	out.Reset()
	if err := m.Exec("bufdump live"); err != nil || !strings.Contains(out.String(), "logger goroutine") {
		t.Fatalf("bufdump of a live session: %v %s", err, out.String())
	}
	m.Close()
	if len(k.Sessions()) != 1 {
		t.Error("Close stopped the program's kernel")
	}
}

var emuGUID = guid.MustParse("6a0f2d3c-1b2a-4c5d-8e9f-0a1b2c3d4e5f")

// A circular file whose ring came round to its start again reads in order, its oldest
// buffer first after the header: files marks it wrapped there all the same (WrapAt 1),
// where it said the file never wrapped. A ring short of its start is not marked.
func TestFilesRingCameRound(t *testing.T) {
	for _, c := range []struct {
		writes int
		want   []int64
		wrapAt int
	}{
		{30, []int64{0, 1, 2, 3}, -1},    // three buffers, never wrapped
		{400, []int64{0, 19, 20, 21}, 1}, // the lesson's: wrapped and round again
		{430, []int64{0, 22, 20, 21}, 2}, // wrapped, the oldest second
	} {
		m, out := machine(t, "start ring mode=CIRCULAR,USE_KBYTES_FOR_SIZE file=ring.etl maxfile=16 buffer=4 min=2 max=4",
			"register Chatty", "enable ring Chatty", fmt.Sprintf("write Chatty %d size=100", c.writes), "flush ring")
		out.Reset()
		if err := m.Exec("files -json"); err != nil {
			t.Fatal(err)
		}
		var files []fileRow
		if err := json.Unmarshal(out.Bytes(), &files); err != nil || len(files) != 1 {
			t.Fatalf("%v: %s", err, out.String())
		}
		var seqs []int64
		for _, b := range files[0].Buffers {
			seqs = append(seqs, b.SequenceNumber)
		}
		if !slices.Equal(seqs, c.want) || files[0].WrapAt != c.wrapAt {
			t.Errorf("%d writes: buffers %v wrapAt %d; want %v and %d", c.writes, seqs, files[0].WrapAt, c.want, c.wrapAt)
		}
	}
}
