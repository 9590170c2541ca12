package emu

import (
	"bytes"
	"os"
	"testing"

	"github.com/etwemu/etwemu/clock"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/logmode"
)

// hookFS is an in-memory disk whose files run hook once, inside their second write: a
// snapshot's first trace buffer, after the header buffer.
type hookFS struct {
	etl.MemFS
	hook   func()
	writes int
}

func (f *hookFS) OpenFile(name string, flag int, perm os.FileMode) (etl.WriteFile, error) {
	w, err := f.MemFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return hookFile{w, f}, nil
}

type hookFile struct {
	etl.WriteFile
	fs *hookFS
}

func (h hookFile) WriteAt(p []byte, off int64) (int, error) {
	if h.fs.writes++; h.fs.writes == 2 && h.fs.hook != nil {
		h.fs.hook()
	}
	return h.WriteFile.WriteAt(p, off)
}

// A snapshot of an in-memory (BUFFERING) session holds the ring's buffers until it has
// written them: a writer that needs a buffer meanwhile loses its event, counted in
// EventsLost, instead of taking back the oldest buffer of the ring while the snapshot
// writes it. Before, the writer reopened that buffer under the snapshot (a data race),
// and the file got the new events, or a record cut by the old header (ERROR_FILE_CORRUPT).
// Here the writes run inside the snapshot's write of its first buffer.
func TestSnapshotHoldsItsBuffers(t *testing.T) {
	fs := &hookFS{}
	k, err := New(Config{Processors: 1, Clock: clock.NewManualSource(1000, 1), FileSystem: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	h, err := k.StartTrace("ring", &Properties{BufferSize: 4, MinimumBuffers: 4, MaximumBuffers: 4, LogFileMode: logmode.Buffering})
	if err != nil {
		t.Fatal(err)
	}
	r := enabledProvider(t, k, h, "Ring")
	write := func(id uint16, n int) (lost int) {
		for range n {
			if k.EventWriteEx(r, &EventDescriptor{ID: id, Level: 4}, &WriteOptions{Processor: 0}, make([]byte, 200)) != nil {
				lost++
			}
		}
		return lost
	}
	if lost := write(1, 100); lost != 0 { // the ring of four buffers fills and turns
		t.Fatalf("%d events lost filling the ring", lost)
	}
	var before, after Properties
	k.QueryTrace(h, "", &before)
	during := -1
	fs.hook = func() { during = write(2, 50) }
	n, err := k.SaveBuffers("ring", "snap.etl")
	if err != nil || during < 0 {
		t.Fatalf("SaveBuffers: %d buffers, %v; hook ran: %v", n, err, during >= 0)
	}
	k.QueryTrace(h, "", &after)
	if during != 50 || after.EventsLost-before.EventsLost != 50 {
		t.Errorf("50 events written during the snapshot: %d refused, EventsLost %d -> %d; want every one lost and counted", during, before.EventsLost, after.EventsLost)
	}
	data, _ := fs.ReadFile("snap.etl")
	rd, err := etl.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	ids := map[uint16]int{}
	err = rd.Walk(func(b *etl.Buffer, rec etl.Record) error {
		if rec.Kind == etl.KindEventHeader {
			ids[rec.Event.Descriptor.ID]++
		}
		return nil
	})
	if err != nil || len(ids) != 1 || ids[1] == 0 {
		t.Errorf("the snapshot of %d buffers: events by id %v, %v; want only the events written before it", n, ids, err)
	}
}
