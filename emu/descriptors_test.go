package emu

import (
	"bytes"
	"errors"
	"fmt"
	"testing"

	"github.com/etwemu/etwemu/abi"
	"github.com/etwemu/etwemu/etl"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/regentry"
	"github.com/etwemu/etwemu/winerr"
	"github.com/etwemu/etwemu/winver"
)

// sinkRecords decodes every record a memory sink received, extended items included.
func sinkRecords(t *testing.T, s *MemorySink) []etl.Record {
	t.Helper()
	var out []etl.Record
	for _, b := range s.Buffers() {
		buf, err := etl.ParseBuffer(b)
		if err != nil {
			t.Fatal(err)
		}
		if err := buf.Records(func(r etl.Record) error { out = append(out, r); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestEventWriteDescriptors checks the rule for typed data descriptors: ETW honours
// their Type only for a registration that set traits or UseDescriptorType; honoured,
// provider and event metadata become the PROV_TRAITS and EVENT_SCHEMA_TL items (after a
// RELATED_ACTIVITYID item), blocks of one type concatenated, and only user data is the
// payload.
func TestEventWriteDescriptors(t *testing.T) {
	k := newKernel(t, winver.V2004)
	h, sink := startMem(t, k, "typed", 0)
	plain, _ := k.EventRegister(guid.FromName("plain"), nil, nil)
	traits, _ := k.EventRegister(guid.FromName("traits"), nil, nil)
	useType, _ := k.EventRegister(guid.FromName("use-type"), nil, nil)
	blob := regentry.BuildTraits("traits")
	if err := k.EventSetInformation(traits, EventProviderSetTraits, blob); err != nil {
		t.Fatal(err)
	}
	if err := k.EventSetInformation(useType, EventProviderUseDescriptorType, []byte{1}); err != nil {
		t.Fatal(err)
	}
	for _, g := range []string{"plain", "traits", "use-type"} {
		k.EnableTraceEx2(h, guid.FromName(g), regentry.ControlEnable, 0, 0, 0, nil)
	}
	descs := []DataDescriptor{
		{Data: []byte("PROV"), Type: DescriptorProviderMetadata},
		{Data: []byte("EV"), Type: DescriptorEventMetadata},
		{Data: []byte("ENT"), Type: DescriptorEventMetadata},
		{Data: []byte("user"), Type: DescriptorUserData},
		{Data: []byte("data"), Type: DescriptorUserData},
	}
	rel := guid.FromName("related")
	for i, r := range []*Registration{plain, traits, useType} {
		if err := k.EventWriteDescriptors(r, &EventDescriptor{ID: uint16(i)}, &WriteOptions{Processor: 0, RelatedActivityID: &rel}, descs...); err != nil {
			t.Fatal(err)
		}
	}
	err := k.EventWriteDescriptors(traits, &EventDescriptor{}, nil, DataDescriptor{Data: []byte{1}, Type: 3})
	if !errors.Is(err, winerr.ErrInvalidParameter) {
		t.Errorf("an honoured Type 3: %v, want ERROR_INVALID_PARAMETER", err)
	}
	if err := k.EventWriteDescriptors(plain, &EventDescriptor{ID: 9}, nil, DataDescriptor{Data: []byte{1}, Type: 3}); err != nil {
		t.Errorf("Type 3 on a registration whose types are ignored: %v", err)
	}
	k.StopTrace(h, "", nil)

	recs := sinkRecords(t, sink)
	if len(recs) != 4 {
		t.Fatalf("%d records, want 4", len(recs))
	}
	want := []struct {
		payload string
		ext     string
	}{
		{"PROVEVENTuserdata", "[1:16]"},
		{"userdata", "[1:16 12:PROV 11:EVENT]"},
		{"userdata", "[1:16 12:PROV 11:EVENT]"},
		{"\x01", "[]"},
	}
	for i, r := range recs {
		var ext []string
		for _, x := range r.Ext {
			if x.Type == abi.ExtTypeRelatedActivityID {
				ext = append(ext, fmt.Sprintf("%d:%d", x.Type, len(x.Data)))
			} else {
				ext = append(ext, fmt.Sprintf("%d:%s", x.Type, x.Data))
			}
		}
		if !bytes.Equal(r.Payload, []byte(want[i].payload)) || fmt.Sprint(ext) != want[i].ext {
			t.Errorf("record %d: payload %q ext %v, want %q %s", i, r.Payload, ext, want[i].payload, want[i].ext)
		}
		if int(r.Event.Size) != r.Size || (len(r.Ext) > 0) != (r.Event.Flags&abi.EventFlagExtendedInfo != 0) {
			t.Errorf("record %d: EVENT_HEADER.Size %d of %d bytes, flags %#x with %d items", i, r.Event.Size, r.Size, r.Event.Flags, len(r.Ext))
		}
	}
}
