package regentry

import (
	"bytes"
	"encoding/binary"
	"strings"
	"sync"

	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/winerr"
)

// ETW_PROVIDER_TRAIT_TYPE values (evntcons.h).
const (
	TraitTypeGroup      = 1 // EtwProviderTraitTypeGroup: data is the group GUID
	TraitTypeDecodeGUID = 2 // EtwProviderTraitDecodeGuid: data is the decode GUID
)

// Trait is one trait of a provider-traits blob.
type Trait struct {
	Type uint8
	Data []byte
}

// Traits models ETW_PROVIDER_TRAITS: a reference-counted, deduplicated provider-traits
// blob (UINT16 TotalSize, the provider name in UTF-8 with a NUL, then traits of
// {UINT16 TraitSize; UINT8 TraitType; data}). Not modelled: the balanced tree node.
// Immutable apart from the reference count.
type Traits struct {
	Blob   []byte
	Name   string
	Traits []Trait
	refs   int // ReferenceCount; protected by the owning TraitsTable's lock
}

// Group returns the group GUID of an EtwProviderTraitTypeGroup trait, if the blob has one.
func (t *Traits) Group() (guid.GUID, bool) {
	for _, tr := range t.Traits {
		if tr.Type == TraitTypeGroup && len(tr.Data) == 16 {
			return guid.FromBytes(tr.Data), true
		}
	}
	return guid.Null, false
}

// ParseTraits checks a provider-traits blob and splits it. A malformed blob gives
// ERROR_INVALID_PARAMETER with the offset of the fault.
func ParseTraits(blob []byte) (*Traits, error) {
	if len(blob) < 3 {
		return nil, winerr.New(winerr.ErrInvalidParameter, "provider traits of %d bytes: shorter than TotalSize and a name", len(blob))
	}
	total := int(binary.LittleEndian.Uint16(blob))
	if total != len(blob) {
		return nil, winerr.New(winerr.ErrInvalidParameter, "provider traits TotalSize %d, but the blob has %d bytes", total, len(blob))
	}
	nul := bytes.IndexByte(blob[2:], 0)
	if nul < 0 {
		return nil, winerr.New(winerr.ErrInvalidParameter, "provider traits name has no terminating NUL")
	}
	t := &Traits{Blob: append([]byte(nil), blob...), Name: string(blob[2 : 2+nul])}
	for off := 2 + nul + 1; off < len(blob); {
		if len(blob)-off < 3 {
			return nil, winerr.New(winerr.ErrInvalidParameter, "provider trait at offset %d is cut short", off)
		}
		size := int(binary.LittleEndian.Uint16(blob[off:]))
		if size < 3 || off+size > len(blob) {
			return nil, winerr.New(winerr.ErrInvalidParameter, "provider trait at offset %d has TraitSize %d", off, size)
		}
		tr := Trait{Type: blob[off+2], Data: t.Blob[off+3 : off+size]}
		if tr.Type == TraitTypeGroup && len(tr.Data) != 16 {
			return nil, winerr.New(winerr.ErrInvalidParameter, "group trait at offset %d carries %d bytes, not a 16-byte GUID", off, len(tr.Data))
		}
		t.Traits = append(t.Traits, tr)
		off += size
	}
	return t, nil
}

// EncodeTraits makes a provider-traits blob from a name and traits, the inverse of
// ParseTraits: ParseTraits of the blob gives back name and traits. What the blob cannot
// say gives ERROR_INVALID_PARAMETER: a name that holds a NUL (the NUL would end it, and
// the bytes after it would read as traits), a trait over 65,532 bytes or a group trait
// that is not a 16-byte GUID, or a blob over 65,535 bytes (TotalSize and TraitSize are
// 16-bit counts).
func EncodeTraits(name string, traits ...Trait) ([]byte, error) {
	if i := strings.IndexByte(name, 0); i >= 0 {
		return nil, winerr.New(winerr.ErrInvalidParameter, "provider name of %d bytes holds a NUL at byte %d, where the provider traits would end it", len(name), i)
	}
	size := 2 + len(name) + 1
	for i, tr := range traits {
		if len(tr.Data) > 0xFFFF-3 {
			return nil, winerr.New(winerr.ErrInvalidParameter, "provider trait %d carries %d bytes: its TraitSize, a 16-bit count, holds at most 65,532", i, len(tr.Data))
		}
		if tr.Type == TraitTypeGroup && len(tr.Data) != 16 {
			return nil, winerr.New(winerr.ErrInvalidParameter, "group trait %d carries %d bytes, not a 16-byte GUID", i, len(tr.Data))
		}
		size += 3 + len(tr.Data)
	}
	if size > 0xFFFF {
		return nil, winerr.New(winerr.ErrInvalidParameter, "provider traits of %d bytes (a name of %d bytes and %d traits): TotalSize, a 16-bit count, holds at most 65,535", size, len(name), len(traits))
	}
	b := make([]byte, 2, size)
	b = append(append(b, name...), 0)
	for _, tr := range traits {
		var h [3]byte
		binary.LittleEndian.PutUint16(h[:], uint16(3+len(tr.Data)))
		h[2] = tr.Type
		b = append(append(b, h[:]...), tr.Data...)
	}
	binary.LittleEndian.PutUint16(b, uint16(len(b)))
	return b, nil
}

// BuildTraits is EncodeTraits for a name and traits known to fit, as in tests and
// scripts: for what EncodeTraits refuses it returns nil, which ParseTraits (and so
// EventSetInformation) refuses in turn with ERROR_INVALID_PARAMETER, rather than a blob
// that wrapped its sizes or ended the name early.
func BuildTraits(name string, traits ...Trait) []byte {
	b, err := EncodeTraits(name, traits...)
	if err != nil {
		return nil
	}
	return b
}

// GroupTrait is the trait that puts a provider into group g.
func GroupTrait(g guid.GUID) Trait {
	b := g.Bytes()
	return Trait{Type: TraitTypeGroup, Data: b[:]}
}

// TraitsTable deduplicates traits blobs: registrations with equal blobs share one *Traits.
type TraitsTable struct {
	mu    sync.Mutex
	blobs map[string]*Traits // protected by mu
}

// Acquire returns the shared Traits for blob, parsing it on first use, and takes a
// reference.
func (tt *TraitsTable) Acquire(blob []byte) (*Traits, error) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if t, ok := tt.blobs[string(blob)]; ok {
		t.refs++
		return t, nil
	}
	t, err := ParseTraits(blob)
	if err != nil {
		return nil, err
	}
	if tt.blobs == nil {
		tt.blobs = map[string]*Traits{}
	}
	t.refs = 1
	tt.blobs[string(blob)] = t
	return t, nil
}

// Release drops a reference; the blob is forgotten with its last reference.
func (tt *TraitsTable) Release(t *Traits) {
	if t == nil {
		return
	}
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if t.refs--; t.refs == 0 {
		delete(tt.blobs, string(t.Blob))
	}
}

// Len returns the number of distinct blobs held.
func (tt *TraitsTable) Len() int {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return len(tt.blobs)
}

// Refs returns t's reference count.
func (tt *TraitsTable) Refs(t *Traits) int {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return t.refs
}
