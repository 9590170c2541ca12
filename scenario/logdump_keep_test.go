package scenario

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/etwemu/etwemu/decode"
	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/etw"
	"github.com/etwemu/etwemu/logmode"
	"github.com/etwemu/etwemu/session"
)

// An event logdump keeps outlives the bytes Peek lent it, which the next buffer
// overwrites: its fields, a binary one and an array of binaries among them, and the
// sizes of its payload and items are its own.
func TestKeptEventsOwnTheirValues(t *testing.T) {
	k, err := emu.New(emu.Config{Processors: 1, Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	h, err := k.StartTrace("keep", &emu.Properties{LogFileMode: logmode.Buffering, BufferSize: 4, MinimumBuffers: 8})
	if err != nil {
		t.Fatal(err)
	}
	p, err := etw.NewProviderWithOptions("Etwemu.Test.Keep", etw.WithKernel(k))
	if err != nil {
		t.Fatal(err)
	}
	if err := k.EnableTraceEx2(h, p.ID, emu.EnableProvider, 5, 0, 0, nil); err != nil {
		t.Fatal(err)
	}
	const n = 40 // a few to a 4 KB buffer
	for i := range n {
		b := bytes.Repeat([]byte{byte(i)}, 500)
		if err := p.WriteEvent(fmt.Sprint("E", i), nil, etw.WithFields(etw.BinaryField("blob", b))); err != nil {
			t.Fatal(err)
		}
	}
	dec := decode.New()
	dec.HeadersOnly = true
	var kept []*decode.Event
	err = k.Session(h).Peek(func(v session.BufferView, data []byte) {
		dec.Buffer(&etl.Buffer{Data: data}, v.ID, func(e *decode.Event) error {
			if e.Kind == etl.KindEventHeader {
				row := *e
				keep(dec, &row)
				kept = append(kept, &row)
			}
			return nil
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) != n {
		t.Fatalf("%d events kept, want %d", len(kept), n)
	}
	for _, e := range kept {
		var i int
		if _, err := fmt.Sscanf(e.Name, "E%d", &i); err != nil || len(e.Fields) != 1 {
			t.Fatalf("kept event %q with fields %v", e.Name, e.Fields)
		}
		if b, _ := e.Fields[0].Value.([]byte); !bytes.Equal(b, bytes.Repeat([]byte{byte(i)}, 500)) {
			t.Errorf("%s: blob %x..., want 500 bytes of %02x", e.Name, b[:min(8, len(b))], i)
		}
		if len(e.Payload) < 500 || e.Bytes != nil || len(e.Ext) == 0 {
			t.Errorf("%s: payload of %d bytes, record bytes kept %v, %d items", e.Name, len(e.Payload), e.Bytes != nil, len(e.Ext))
		}
	}
	// ownValue copies the bytes nested in arrays and structs as well.
	in := []byte{1, 2, 3}
	arr := ownValue([]any{in}).([]any)
	in[0] = 9
	if arr[0].([]byte)[0] != 1 {
		t.Error("an array's binary element still shares the payload")
	}
}
