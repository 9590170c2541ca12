package pmc

import (
	"encoding/binary"

	"github.com/etwemu/etwemu/winver"
)

// Layout is where ETW_PMC_SUPPORT keeps its members in one range of versions (seed 003,
// from symbol files). Offsets and sizes are given for x86 and x64 (index 0 and 1); a size
// counts one ProcessorCtrs element, the ANYSIZE_ARRAY of the declaration.
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

// layouts is seed 003's table. Before 6.2 there is no PMC support (the zero row).
var layouts = winver.Steps[Layout]{
	{Since: winver.Oldest},
	{Since: winver.V6_2, Value: Layout{
		Versions: winver.Between(winver.V6_2, winver.V1607), SourceSlots: 4,
		Size: [2]uint32{0x24, 0x28}, HookIDCount: [2]uint32{0x10, 0x10}, HookID: [2]uint32{0x14, 0x14},
		CountersCount: [2]uint32{0x1C, 0x1C}, ProcessorCtrs: [2]uint32{0x20, 0x20},
	}},
	{Since: winver.V1703, Value: Layout{
		Versions: winver.Between(winver.V1703, winver.V1809), SourceSlots: 8,
		Size: [2]uint32{0x34, 0x38}, HookIDCount: [2]uint32{0x20, 0x20}, HookID: [2]uint32{0x24, 0x24},
		CountersCount: [2]uint32{0x2C, 0x2C}, ProcessorCtrs: [2]uint32{0x30, 0x30},
	}},
	{Since: winver.V1903, Value: Layout{
		Versions: winver.Since(winver.V1903), SourceSlots: 0,
		Size: [2]uint32{0x18, 0x20}, HookIDCount: [2]uint32{0x04, 0x08}, HookID: [2]uint32{0x08, 0x0C},
		CountersCount: [2]uint32{0x10, 0x14}, ProcessorCtrs: [2]uint32{0x14, 0x18},
	}},
}

// LayoutFor returns the layout of ETW_PMC_SUPPORT in version v, and false before 6.2,
// which has no PMC support.
func LayoutFor(v winver.Version) (Layout, bool) {
	l := layouts.At(v)
	return l, l.Size[X64] != 0
}

// PointerSize is the size of a pointer on the architecture (4 or 8).
func PointerSize(arch int) uint32 { return 4 << arch }

// SizeFor is the size of the structure for n processors: the fixed part plus n
// ProcessorCtrs pointers.
func (l Layout) SizeFor(arch, processors int) uint32 {
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
