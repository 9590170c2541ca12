package etl

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/winver"
)

// seedBuf is the buffer size of the seed files: small, so each file is a few KB.
const seedBuf = 1024

// kindsBuffer is a sealed buffer of seedBuf bytes holding one record of every header kind
// the reader knows (an EVENT_HEADER with extended items, system with PMC counters,
// compact, perfinfo, classic, instance, message, error), then, with unknown, a record of
// a kind it does not know, which ends its walk (the buffer is damaged).
func kindsBuffer(seq int64, proc uint8, unknown bool) []byte {
	b := make([]byte, seedBuf)
	le := binary.LittleEndian
	off := abi.BufferHeaderSize
	put := func(rec []byte) {
		copy(b[off:], rec)
		off += abi.Align(len(rec))
	}
	// EVENT_HEADER with a PROV_TRAITS-like item and a PMC item.
	ext := make([]byte, 64)
	n := abi.PutExtItem(ext, abi.ExtTypePMCCounters, true, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	n += abi.PutExtItem(ext[n:], abi.ExtTypeProvTraits, false, []byte{8, 0, 'S', 'e', 'e', 'd', 0, 0})
	ev := make([]byte, abi.EventHeaderSize+n+6)
	h := abi.EventHeader{Size: uint16(len(ev)), HeaderType: abi.EventHeaderEvent64,
		Flags: abi.EventFlag64BitHeader | abi.EventFlagExtendedInfo, ThreadID: 7, ProcessID: 9, TimeStamp: seq * 10,
		ProviderID: testProvider, Descriptor: abi.EventDescriptor{ID: 1, Level: 4}}
	h.Encode(ev)
	copy(ev[abi.EventHeaderSize:], ext[:n])
	put(ev)
	// System header with one PMC counter: marker 0xC002 plus the counter bits.
	sys := make([]byte, SystemHeaderSize+8+4)
	le.PutUint32(sys, SystemTraceMarker64|1<<abi.TraceHeaderPMCShift)
	le.PutUint16(sys[4:], uint16(len(sys)))
	le.PutUint16(sys[6:], 0x0524)
	le.PutUint64(sys[16:], uint64(seq*10+1))
	put(sys)
	// Compact (0x04) and perfinfo (0x11): size at +4.
	for _, k := range []struct {
		typ  byte
		size int
	}{{typeCompact64, compactHeaderSize + 4}, {typePerfInfo64, perfInfoHeaderSize + 4}} {
		r := make([]byte, k.size)
		le.PutUint32(r, 0xC0000002|uint32(k.typ)<<16)
		le.PutUint16(r[4:], uint16(k.size))
		le.PutUint16(r[6:], 0x0F2E)
		put(r)
	}
	// Classic (0x14), instance (0x15), error (0x0D): size at +0; message (0x90): size at +0.
	for _, k := range []struct {
		flags, typ byte
		size       int
	}{{flagsHeader, typeFullHeader64, fullHeaderSize + 4}, {flagsHeader, typeInstance64, instanceHeaderSize}, {flagsMessage, 0, messageHeaderSize + 8}, {flagsHeader, typeError, 8}} {
		r := make([]byte, k.size)
		le.PutUint32(r, uint32(k.flags)<<24|uint32(k.typ)<<16|uint32(k.size))
		if k.size >= 40 {
			testProvider.Put(r[24:40])
		}
		put(r)
	}
	if unknown {
		le.PutUint32(b[off:], 0x77AB0010) // an unknown marker ends the walk
		off += 16
	}
	for i := off; i < len(b); i++ {
		b[i] = 0xFF
	}
	bh := abi.BufferHeader{BufferSize: seedBuf, SavedOffset: uint32(off), CurrentOffset: uint32(off), SequenceNumber: seq,
		ProcessorNumber: proc, LoggerID: 3, State: abi.BufferStateFlush, Offset: uint32(off), BufferFlag: abi.BufferFlagProcIndex}
	bh.Encode(b)
	return b
}

// seedFiles writes small ETL files of every file mode, compressed and not, each of a few
// buffers holding every record kind, and returns their bytes, with cut and damaged
// copies: FuzzReader's seeds.
func seedFiles(tb testing.TB) map[string][]byte {
	tb.Helper()
	dir := tb.TempDir()
	out := map[string][]byte{}
	for _, c := range []struct {
		name     string
		mode     uint32
		maxKB    uint32
		compress bool
		v        winver.Version
		unknown  bool // the third buffer ends in a record of a kind the reader does not know
	}{
		{"sequential", modeSequential, 0, false, winver.V2004, false},
		{"sequential-6.1", modeSequential, 0, false, winver.V6_1, false},
		{"compressed", modeSequential, 0, true, winver.V2004, false},
		{"compressed-6.2", modeSequential, 0, true, winver.V6_2, false},
		{"circular", modeCircular | modeKBytes, 4, false, winver.V2004, false},
		{"preallocated", modeSequential | modeKBytes | modePreallocate, 8, false, winver.V2004, false},
		{"unknown-kind", modeSequential, 0, false, winver.V2004, true},
	} {
		path := filepath.Join(dir, c.name+".etl")
		w, err := Create(Options{Path: path, BufferSize: seedBuf, Info: testInfo(c.v, c.mode, c.maxKB), Compress: c.compress})
		if err != nil {
			tb.Fatal(c.name, err)
		}
		for i := range 6 {
			w.WriteBuffer(kindsBuffer(int64(i+1), uint8(i%2), c.unknown && i == 2))
		}
		w.Flush()
		w.Close(Counters{EndTime: 133_000_000_100_000_000})
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		out[c.name] = b
	}
	seq := out["sequential"]
	out["cut-at-buffer"] = seq[:3*seedBuf]
	out["cut-mid-buffer"] = seq[:3*seedBuf+300]
	out["bad-record"] = patch(seq, 2*seedBuf+abi.BufferHeaderSize, 0xC013FFF0)
	comp := out["compressed"]
	out["compressed-cut"] = comp[:len(comp)*2/3]
	return out
}

// The seed files read whole (the damaged ones with a DamageError) and give every kind.
func TestSeedFiles(t *testing.T) {
	for name, b := range seedFiles(t) {
		rd, err := NewReader(bytesReaderAt(b), int64(len(b)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		kinds := map[Kind]int{}
		err = rd.Walk(func(_ *Buffer, r Record) error { kinds[r.Kind]++; return nil })
		damaged := name == "cut-at-buffer" || name == "cut-mid-buffer" || name == "bad-record" || name == "compressed-cut" || name == "unknown-kind"
		if (err != nil) != damaged {
			t.Errorf("%s: %v", name, err)
		}
		want := 8 // every kind the reader knows
		if name == "unknown-kind" {
			want = 9
			if d := damage(t, err); d.Stopped || d.Lost != 1 || !strings.Contains(err.Error(), "file offset 0xc00: offset 0x1c0: unknown record marker 0x77ab0010: the 16 bytes") {
				t.Errorf("%s: the buffer with the unknown record is not the one damaged buffer: %+v: %v", name, d, err)
			}
		}
		if len(kinds) != want {
			t.Errorf("%s: kinds %v, want %d", name, kinds, want)
		}
		if len(b) > 16<<10 {
			t.Errorf("%s: %d bytes", name, len(b))
		}
	}
}
