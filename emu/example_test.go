package emu_test

import (
	"fmt"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/guid"
)

// The README's example: start a session, register and enable a provider, write, stop.
func Example() {
	k, _ := emu.New(emu.Config{Processors: 1}) // Windows 10 2004 unless Version says otherwise
	defer k.Close()
	sink := &emu.MemorySink{}
	props := &emu.Properties{LogFileMode: emu.RealTimeMode, BufferSize: 64, Sink: sink}
	h, _ := k.StartTrace("MySession", props)
	prov := guid.FromName("My.Provider")
	reg, _ := k.EventRegister(prov, nil, nil)
	k.EnableTraceEx2(h, prov, emu.EnableProvider, 4, 0, 0, nil)
	k.EventWrite(reg, &emu.EventDescriptor{ID: 1, Level: 4}, []byte("hello"))
	k.EventWrite(reg, &emu.EventDescriptor{ID: 2, Level: 5}, []byte("too verbose for level 4"))
	var p emu.Properties
	k.StopTrace(h, "", &p)
	n, _ := sink.CountEvents()
	fmt.Printf("MinimumBuffers %d, events %d, lost %d, buffers written %d\n", props.MinimumBuffers, n, p.EventsLost, p.BuffersWritten)
	// One buffer: the stop's flush takes the processor's buffer out of its slot and writes
	// it with ETW_BUFFER_FLAG_FLUSH_MARKER. With more processors the marker goes on the
	// last processor's buffer, which is written even when empty, so the count would depend
	// on the processor the event landed on (TestFlushMarkerOnLastProcessor).

	// Output: MinimumBuffers 2, events 1, lost 0, buffers written 1
}
