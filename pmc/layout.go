package pmc

import (
	"encoding/binary"
	"fmt"
	"sync"

	"github.com/etwemu/etwemu/layout"
	"github.com/etwemu/etwemu/winver"
)

// Layout is where ETW_PMC_SUPPORT keeps its members in one range of versions, as the
// write path and `etwemu pmc` use them; LayoutFor reads it from the catalogue. Offsets
// and sizes are given for x86 and x64 (index 0 and 1); a size counts one ProcessorCtrs
// element, the ANYSIZE_ARRAY of the declaration.
type Layout struct {
	Versions winver.Range
	// SourceSlots is the length of the inline KPROFILE_SOURCE array, or 0 when the
	// structure holds a pointer to the sources (1903 and later).
	SourceSlots   int
	Size          [2]uint32
	HookIDCount   [2]uint32 // ULONG volatile HookIdCount
	HookID        [2]uint32 // USHORT HookId[4]
	CountersCount [2]uint32 // ULONG volatile CountersCount
	ProcessorCtrs [2]uint32 // HAL_PMC_COUNTERS *ProcessorCtrs[ANYSIZE_ARRAY] (PMC_HANDLE)
}

// Architectures, the index into a Layout's offsets.
const (
	X86 = 0
	X64 = 1
)

// MaxHookIDs is the length of HookId: the most events one logger collects counters on
// (ETW_MAX_PMC_EVENTS in the 1511 WDK's NTWMI.H).
const MaxHookIDs = 4

// LayoutFor returns the layout of ETW_PMC_SUPPORT in version v, read from the catalogue
// (layout.PMCSupport, after Geoff Chappell, "ETW_PMC_SUPPORT"), and false before 6.2, which
// has no PMC support.
func LayoutFor(v winver.Version) (Layout, bool) {
	if !v.Valid() {
		return Layout{}, false // no Windows version: no structure
	}
	c := &layouts[v]
	c.once.Do(func() { c.l, c.ok = layoutFor(v) })
	return c.l, c.ok
}

// layouts holds LayoutFor's answer per version, worked out once from the catalogue: a
// session start asks for it, and a fuzz run starts thousands.
var layouts [winver.Newest + 1]struct {
	once sync.Once
	l    Layout
	ok   bool
}

func layoutFor(v winver.Version) (Layout, bool) {
	w := [2]layout.View{layout.PMCSupport.At(v, layout.X86), layout.PMCSupport.At(v, layout.X64)}
	if !w[X64].Exists {
		return Layout{}, false
	}
	off := func(name string) [2]uint32 {
		return [2]uint32{uint32(w[X86].Offset(name)), uint32(w[X64].Offset(name))}
	}
	src, _ := w[X64].Member("Source")
	l := Layout{
		Versions: src.Versions, Size: [2]uint32{uint32(w[X86].Size), uint32(w[X64].Size)},
		HookIDCount: off("HookIdCount"), HookID: off("HookId"), CountersCount: off("CountersCount"),
		ProcessorCtrs: off("ProcessorCtrs"),
	}
	fmt.Sscanf(src.Type, "KPROFILE_SOURCE [%d]", &l.SourceSlots) // 0 for the pointer of 1903 on
	return l, true
}

// PointerSize is the size of a pointer on the architecture (4 for 0, x86; 8 for 1, x64;
// 0 for any other value).
func PointerSize(arch int) uint32 {
	if arch != 0 && arch != 1 {
		return 0
	}
	return 4 << arch
}

// SizeFor is the size of the structure for n processors: the fixed part plus n
// ProcessorCtrs pointers; 0 for an architecture other than 0 (x86) and 1 (x64), or a
// negative n.
func (l Layout) SizeFor(arch, processors int) uint32 {
	if PointerSize(arch) == 0 || processors < 0 {
		return 0
	}
	return l.ProcessorCtrs[arch] + uint32(processors)*PointerSize(arch)
}

// Emulated kernel addresses written into the image for the members that are pointers:
// the separately allocated source array and each processor's HAL_PMC_COUNTERS. They
// identify, they do not point anywhere.
const (
	sourcesAddress  = 0xFFFF_A000_0000_1000
	countersAddress = 0xFFFF_A000_0001_0000 // + 0x100 per processor
)

// image writes the structure as version l keeps it on arch: sources inline or behind a
// pointer, hook ids, counts and one PMC_HANDLE per processor.
func (l Layout) image(arch int, sources []ProfileSource, hooks []uint16, processors int) []byte {
	b := make([]byte, l.SizeFor(arch, processors))
	le := binary.LittleEndian
	ptr := func(off uint32, v uint64) {
		if arch == X64 {
			le.PutUint64(b[off:], v)
		} else {
			le.PutUint32(b[off:], uint32(v))
		}
	}
	if l.SourceSlots > 0 {
		for i, s := range sources {
			le.PutUint32(b[4*i:], uint32(s))
		}
	} else if len(sources) > 0 {
		ptr(0, sourcesAddress)
	}
	le.PutUint32(b[l.HookIDCount[arch]:], uint32(len(hooks)))
	for i, h := range hooks {
		le.PutUint16(b[l.HookID[arch]+uint32(2*i):], h)
	}
	le.PutUint32(b[l.CountersCount[arch]:], uint32(len(sources)))
	for p := 0; p < processors; p++ {
		ptr(l.ProcessorCtrs[arch]+uint32(p)*PointerSize(arch), countersAddress+0x100*uint64(p))
	}
	return b
}
