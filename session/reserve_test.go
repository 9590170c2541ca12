package session

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/internal/hw"
	"github.com/etwemu/etwemu/logmode"
)

// Write's EVENT_HEADER, encoded in line, is the 80 bytes abi.EventHeader.Encode, the
// readable encoder, writes, for events with and without activity ids and over random
// field values; the data follows it (after the related activity id's item, when there is
// one), and the padding up to the aligned size is zero. Every byte of the buffers is set
// to 0xAA before each event, so a byte Write leaves alone shows.
func TestWriteHeaderMatchesEncode(t *testing.T) {
	l := startSynchronous(t, "header", 1, Properties{LogFileMode: logmode.RealTime, BufferSize: 128,
		MinimumBuffers: 2, MaximumBuffers: 2, Sink: &Counter{}})
	defer l.Stop()
	rng := rand.New(rand.NewPCG(1, 2))
	randGUID := func() *guid.GUID {
		var b [16]byte
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		g := guid.FromBytes(b[:])
		return &g
	}
	for i := 0; i < 2000; i++ {
		d := abi.EventDescriptor{ID: uint16(rng.Uint32()), Version: uint8(rng.Uint32()), Channel: uint8(rng.Uint32()),
			Level: uint8(rng.Uint32()), Opcode: uint8(rng.Uint32()), Task: uint16(rng.Uint32()), Keyword: rng.Uint64()}
		prov := randGUID()
		pb := prov.Bytes()
		n := rng.Uint32N(65000)
		if i%2 == 0 { // and as many small blocks, which Write copies with hw.CopyRelease
			n = rng.Uint32N(2 * hw.CopyReleaseMax)
		}
		data := make([]byte, n)
		for j := range data {
			data[j] = byte(rng.Uint32())
		}
		ev := &Event{Descriptor: &d, Provider: &pb, ThreadID: rng.Uint32(), ProcessID: rng.Uint32(),
			Size: abi.EventHeaderSize + uint32(len(data)), Data: [][]byte{data}}
		want := abi.EventHeader{HeaderType: abi.EventHeaderEvent64, Flags: abi.EventFlag64BitHeader,
			ThreadID: ev.ThreadID, ProcessID: ev.ProcessID, ProviderID: *prov, Descriptor: d}
		switch i % 4 {
		case 1:
			ev.Extra = &EventExtra{Activity: randGUID()}
			want.ActivityID = *ev.Extra.Activity
		case 2:
			ev.Extra = &EventExtra{Related: randGUID()}
			want.Flags |= abi.EventFlagExtendedInfo
		case 3:
			ev.Extra = &EventExtra{Activity: randGUID(), Related: randGUID()}
			want.ActivityID = *ev.Extra.Activity
			want.Flags |= abi.EventFlagExtendedInfo
		}
		items := 0
		if ev.Extra != nil && ev.Extra.Related != nil {
			items = RelatedItemSize
			ev.Size += RelatedItemSize
		}
		want.Size = uint16(ev.Size)
		if i%500 == 499 { // and one from each of the two ways into Write's stores: the split data
			ev.Data = [][]byte{data[:len(data)/2], data[len(data)/2:]}
		}
		for _, b := range l.all {
			for j := range b.data {
				b.data[j] = 0xAA
			}
		}
		if err := l.Write(0, ev); err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		b := l.streams[0].cur.Load()
		end := uint32(b.word.Load())
		rec := b.data[end-abi.Align(ev.Size) : end]
		want.TimeStamp = int64(binary.LittleEndian.Uint64(rec[abi.OffEventTimeStamp:]))
		var exp [abi.EventHeaderSize]byte
		want.Encode(exp[:])
		if !bytes.Equal(rec[:abi.EventHeaderSize], exp[:]) {
			t.Fatalf("event %d (%+v):\nWrite  % x\nEncode % x", i, want, rec[:abi.EventHeaderSize], exp)
		}
		body := rec[abi.EventHeaderSize+items:]
		if !bytes.Equal(body[:len(data)], data) || !bytes.Equal(body[len(data):], make([]byte, len(body)-len(data))) {
			t.Fatalf("event %d: the data or the padding after it differs", i)
		}
	}
}

// The write path's RELATED_ACTIVITYID item is the bytes abi.PutExtItem, the general
// encoder, writes for it, with and without the linkage bit, and ends where it says.
func TestPutRelatedItemMatchesPutExtItem(t *testing.T) {
	related := guid.MustParse("{0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0}")
	for _, more := range []bool{false, true} {
		got := bytes.Repeat([]byte{0xAA}, RelatedItemSize+8)
		want := bytes.Repeat([]byte{0xAA}, RelatedItemSize+8)
		rest := putRelatedItem(got, &related, more)
		var data [16]byte
		related.Put(data[:])
		n := abi.PutExtItem(want, abi.ExtTypeRelatedActivityID, more, data[:])
		if !bytes.Equal(got, want) || len(rest) != len(got)-n || n != RelatedItemSize {
			t.Errorf("more %v:\n got % x (rest %d)\nwant % x (size %d)", more, got, len(rest), want, n)
		}
	}
}

// TestPropItemsTable: PropItems, the constant the kernel tests, names exactly the
// properties of propItems, the table putItems writes by, each with an item of its own.
func TestPropItemsTable(t *testing.T) {
	var props uint32
	var items uint
	for _, p := range propItems {
		if props&p.prop != 0 || items&p.item != 0 {
			t.Errorf("property %#x or item %#x twice in propItems", p.prop, p.item)
		}
		props, items = props|p.prop, items|p.item
	}
	if props != PropItems {
		t.Errorf("propItems names properties %#x, PropItems %#x", props, PropItems)
	}
}
