package abi_test

import (
	"testing"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/layout"
	"github.com/etwemu/etwemu/winver"
)

// The offsets the encoders write at are the layout catalogue's, in every version that has
// the structure and on both architectures (the two headers are the same on x86 and x64).
func TestOffsetsMatchCatalogue(t *testing.T) {
	for _, c := range []struct {
		s       *layout.Struct
		size    int
		offsets map[string]int
	}{
		{&layout.BufferHeader, abi.BufferHeaderSize, map[string]int{
			"BufferSize": abi.OffBufferSize, "SavedOffset": abi.OffSavedOffset, "CurrentOffset": abi.OffCurrentOffset,
			"ReferenceCount": abi.OffReferenceCount, "TimeStamp": abi.OffTimeStamp, "SequenceNumber": abi.OffSequenceNumber,
			"ClientContext": abi.OffClientContext, "State": abi.OffState, "Offset": abi.OffOffset,
			"BufferFlag": abi.OffBufferFlag, "BufferType": abi.OffBufferType,
			"SlistEntry / NextBuffer / {ClockType:3; Frequency:61}": abi.OffClockFrequency,
			"ReferenceTime / GlobalEntry / Padding1[4]":             abi.OffReferenceTime,
		}},
		{&layout.EventHeader, abi.EventHeaderSize, map[string]int{
			"Size": abi.OffEventSize, "HeaderType": abi.OffEventHeaderType, "Flags": abi.OffEventFlags,
			"EventProperty": abi.OffEventProperty, "ThreadId": abi.OffEventThreadID, "ProcessId": abi.OffEventProcessID,
			"TimeStamp": abi.OffEventTimeStamp, "ProviderId": abi.OffEventProviderID, "EventDescriptor": abi.OffEventDescriptor,
			"KernelTime / UserTime / ProcessorTime": abi.OffEventCPUTime, "ActivityId": abi.OffEventActivityID,
		}},
	} {
		for _, v := range c.s.Versions() {
			for _, a := range []layout.Arch{layout.X86, layout.X64} {
				w := c.s.At(v, a)
				if w.Size != c.size {
					t.Errorf("%s %v %v: catalogue size %#x, abi %#x", c.s.Name, v, a, w.Size, c.size)
				}
				for name, off := range c.offsets {
					if v < winver.V6_2 && off == abi.OffClockFrequency && c.s == &layout.BufferHeader {
						continue // before 6.2 the union's arms are others; its offset is checked below
					}
					if got := w.Offset(name); got != off {
						t.Errorf("%s %v %v: %s at %#x in the catalogue, abi writes it at %#x", c.s.Name, v, a, name, got, off)
					}
				}
			}
		}
	}
	if got := layout.BufferHeader.At(winver.V6_1, layout.X64).Offset("SlistEntry / NextBuffer / Padding0[2]"); got != abi.OffClockFrequency {
		t.Errorf("6.1's 0x20 union at %#x", got)
	}
}
