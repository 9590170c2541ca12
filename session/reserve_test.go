package session

import (
	"bytes"
	"math/rand/v2"
	"testing"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/guid"
)

// putEventHeader, the write path's encoder, writes the same 80 bytes as
// abi.EventHeader.Encode, the readable one, for events with and without activity ids,
// over random field values.
func TestPutEventHeaderMatchesEncode(t *testing.T) {
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
		ev := &Event{Descriptor: &d, Provider: &pb, ThreadID: rng.Uint32(), ProcessID: rng.Uint32(),
			Size: abi.EventHeaderSize + rng.Uint32N(65000)}
		want := abi.EventHeader{Size: uint16(ev.Size), HeaderType: abi.EventHeaderEvent64,
			Flags: abi.EventFlag64BitHeader, ThreadID: ev.ThreadID, ProcessID: ev.ProcessID,
			TimeStamp: int64(rng.Uint64()), ProviderID: *prov, Descriptor: d}
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
		var got, exp [abi.EventHeaderSize]byte
		for j := range got {
			got[j] = 0xAA // every byte must be written
		}
		putEventHeader(&got, ev, ev.Size, want.TimeStamp)
		want.Encode(exp[:])
		if !bytes.Equal(got[:], exp[:]) {
			t.Fatalf("event %d (%+v):\nputEventHeader % x\nEncode         % x", i, want, got, exp)
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
