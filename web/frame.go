package web

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"

	"github.com/etwemu/etwemu/scenario"
)

// Views are the scenario language's views of one kernel, each the JSON its -json form
// prints: the page draws these and nothing else.
type Views struct {
	Version    string                     `json:"version"`
	Processors int                        `json:"processors"`
	Strdump    json.RawMessage            `json:"strdump"`
	Guids      json.RawMessage            `json:"guids"`
	Regs       json.RawMessage            `json:"regs"`
	Files      json.RawMessage            `json:"files"`
	Loggers    map[string]LoggerViews     `json:"loggers"` // by logger id
	Guid       map[string]json.RawMessage `json:"guid"`    // `guid P -json`, by provider name
	Reg        map[string]json.RawMessage `json:"reg"`     // `reg R -json`, by provider name
}

// LoggerViews are one logger's views.
type LoggerViews struct {
	Logger  json.RawMessage `json:"logger"`  // logger ID -json
	Bufdump json.RawMessage `json:"bufdump"` // bufdump ID -json
}

// switchWriter is the machine's output, pointed by the replay at the step's buffer or
// at a view's.
type switchWriter struct{ w io.Writer }

func (s *switchWriter) Write(p []byte) (int, error) { return s.w.Write(p) }

// MaxStepOutput and MaxFrameOutput bound the command output a frame carries: a step's,
// and all its steps' together. A step that prints more shows the first bytes and says
// how many it left out; the views of the frame are not counted.
const (
	MaxStepOutput  = 1 << 20
	MaxFrameOutput = 8 << 20
)

// capWriter keeps the first max bytes written to it and counts the rest.
type capWriter struct {
	b        bytes.Buffer
	max, cut int
}

func (c *capWriter) Write(p []byte) (int, error) {
	keep := min(len(p), c.max-c.b.Len())
	c.b.Write(p[:keep])
	c.cut += len(p) - keep
	return len(p), nil
}

// String is what was kept, with a last line saying what was not.
func (c *capWriter) String() string {
	if c.cut == 0 {
		return c.b.String()
	}
	return fmt.Sprintf("%s\n(%d more bytes of output left out: a step shows at most %d, a frame %d in all)\n", c.b.String(), c.cut, MaxStepOutput, MaxFrameOutput)
}

// view runs one view command on m, whose output goes to out, and returns what it printed.
func view(ctx context.Context, m *scenario.Machine, out *switchWriter, cmd string) (json.RawMessage, error) {
	var b bytes.Buffer
	out.w = &b
	if err := m.ExecView(ctx, cmd); err != nil { // the page's own reading: not the learner's quota
		return nil, fmt.Errorf("%s: %w", cmd, err)
	}
	return json.RawMessage(bytes.TrimSpace(b.Bytes())), nil
}

// collect reads every view of m. maxProviders bounds the dt views per provider.
func collect(ctx context.Context, m *scenario.Machine, out *switchWriter) (*Views, error) {
	v := &Views{Version: m.Version(), Processors: m.Processors(), Loggers: map[string]LoggerViews{},
		Guid: map[string]json.RawMessage{}, Reg: map[string]json.RawMessage{}}
	var err error
	for _, x := range []struct {
		dst *json.RawMessage
		cmd string
	}{{&v.Strdump, "strdump -json"}, {&v.Guids, "guids -json"}, {&v.Regs, "regs -json"}, {&v.Files, "files -json"}} {
		if *x.dst, err = view(ctx, m, out, x.cmd); err != nil {
			return nil, err
		}
	}
	var loggers []struct {
		LoggerID uint16 `json:"loggerId"`
	}
	if err := json.Unmarshal(v.Strdump, &loggers); err != nil {
		return nil, err
	}
	for _, l := range loggers {
		id := strconv.Itoa(int(l.LoggerID))
		var lv LoggerViews
		// "#id": a session may be named with another's logger id.
		if lv.Logger, err = view(ctx, m, out, "logger #"+id+" -json"); err != nil {
			return nil, err
		}
		if lv.Bufdump, err = view(ctx, m, out, "bufdump #"+id+" bytes=0 -json"); err != nil {
			return nil, err
		}
		v.Loggers[id] = lv
	}
	var regs []struct {
		Provider   string `json:"provider"`
		Registered bool   `json:"registered"`
	}
	if err := json.Unmarshal(v.Regs, &regs); err != nil {
		return nil, err
	}
	for i, r := range regs {
		if i == maxProviders {
			break
		}
		if g, err := view(ctx, m, out, "guid "+r.Provider+" -json"); err == nil {
			v.Guid[r.Provider] = g
		}
		if r.Registered {
			if g, err := view(ctx, m, out, "reg "+r.Provider+" -json"); err == nil {
				v.Reg[r.Provider] = g
			}
		}
	}
	return v, nil
}

// maxProviders bounds the providers whose GUID entry and registration a frame shows as
// dt does.
const maxProviders = 64

// Ran is one step as it ran: its comment, command, what it printed and its error.
type Ran struct {
	Step
	Output string `json:"output"`
	Error  string `json:"error,omitempty"`
}

// Frame is the picture at one step of a lesson: the steps that ran, and the views.
type Frame struct {
	Lesson string `json:"lesson"`
	Title  string `json:"title"`
	Steps  []Step `json:"steps"` // every step of the lesson and the typed commands
	Step   int    `json:"step"`  // how many steps ran (0: none)
	Ran    []Ran  `json:"ran"`   // the steps that ran, in order
	Views  *Views `json:"views"`
}

// Limits bound a replay's machine, below the shell's defaults: its disk, the events of
// one write, buffer sizes and counts, processors, and the trace-buffer memory of all its
// sessions together (ReplayTimeout bounds its time, maxReplays how many run at once).
var Limits = scenario.Limits{Disk: 64 << 20, Events: 1_000_000, BufferKB: 16 << 10, Buffers: 4096, Processors: 64, BufferMemory: 256 << 20}

// Replay runs steps[:n] on a fresh machine and returns the frame. A step that fails is
// recorded with its error and the replay goes on, as the shell goes on; ctx bounds it.
func Replay(ctx context.Context, l Lesson, steps []Step, n int) (*Frame, error) {
	n = max(0, min(n, len(steps)))
	out := &switchWriter{w: io.Discard}
	m := scenario.NewLimited(out, Limits)
	defer m.Close()
	f := &Frame{Lesson: l.Name, Title: l.Title, Steps: steps, Step: n, Ran: []Ran{}}
	left := MaxFrameOutput
	for _, s := range steps[:n] {
		b := &capWriter{max: min(MaxStepOutput, left)}
		out.w = b
		r := Ran{Step: s}
		if s.Command != "" {
			if err := m.ExecContext(ctx, s.Command); err != nil {
				if ctx.Err() != nil {
					return nil, fmt.Errorf("%q: %w", s.Command, context.Cause(ctx))
				}
				r.Error = err.Error()
			}
		}
		r.Output = b.String()
		left -= b.b.Len()
		f.Ran = append(f.Ran, r)
	}
	v, err := collect(ctx, m, out)
	if err != nil {
		return nil, err
	}
	f.Views = v
	return f, nil
}
