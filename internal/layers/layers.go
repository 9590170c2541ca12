// Package layers names etwemu's layers in one place and its test holds every package's
// imports to them. Dependencies flow one way, down:
//
//	programs     cmd/etwemu, examples/..., fuzz/mutate
//	on the kernel etw, consumer, decode, scenario, web, fuzz, fuzz/replay, bench,
//	             bench/benchsuite, internal/tltest
//	the kernel   emu: the only way to change kernel state (StartTrace, EnableTraceEx2, ...)
//	its parts    session, regentry, guidtable, pmc
//	leaves       abi, clock, etl, guid, layout, logmode, tracelogging, winerr, winver,
//	             internal/hw, internal/fault, internal/quote, internal/callstack, internal/goid,
//	             bench/benchbase, examples (the lessons' files), fuzz/oracle (the fuzz model's own reading of the rules)
//
// A package imports packages of its own layer or of the layers below it, never above:
// nothing below emu imports it, and no leaf imports a part of the kernel. The folders say
// a package's kind: internal/ holds what only this module may import, bench/ the
// benchmarks and what they share (bench/benchbase, the baselines, is a leaf: it touches
// no kernel), tools/ the scripts that check etwemu's files with outside parsers and
// build outside programs against etwemu, which are never dependencies. bench/peers is a
// module of its own, so that zerolog and zap never reach a user's build.
package layers

// Layer is a package's place in the order above: the higher, the closer to the user.
type Layer int

// The layers, from the bottom.
const (
	Leaf Layer = iota
	KernelPart
	Kernel
	OnKernel
	Program
)

// Of maps every package of the module, by its path inside the module, to its layer. A
// new package must be added here: the test fails for a package it does not know.
var Of = map[string]Layer{
	"abi":                     Leaf,
	"clock":                   Leaf,
	"etl":                     Leaf,
	"guid":                    Leaf,
	"layout":                  Leaf,
	"layout/internal/cells":   Leaf,
	"layout/internal/seedgen": Leaf,
	"logmode":                 Leaf,
	"tracelogging":            Leaf,
	"winerr":                  Leaf,
	"winver":                  Leaf,
	"internal/hw":             Leaf,
	"internal/fault":          Leaf,
	"internal/quote":          Leaf,
	"internal/callstack":      Leaf,
	"internal/goid":           Leaf,
	"internal/layers":         Leaf,
	"bench/benchbase":         Leaf,
	"examples":                Leaf, // the lessons' files, embedded
	"fuzz/oracle":             Leaf, // imports no part of the emulator: the fuzz model's independent rules

	"session":   KernelPart,
	"regentry":  KernelPart,
	"guidtable": KernelPart,
	"pmc":       KernelPart,

	"emu": Kernel,

	"etw":              OnKernel,
	"consumer":         OnKernel,
	"decode":           OnKernel, // reads records with the kernel's names (regentry traits, pmc classes)
	"scenario":         OnKernel,
	"fuzz":             OnKernel,
	"fuzz/replay":      OnKernel, // its test replays fuzz programs on the scenario machine
	"bench":            OnKernel,
	"bench/benchsuite": OnKernel,
	"internal/tltest":  OnKernel,
	"web":              OnKernel,

	"cmd/etwemu":            Program,
	"examples/tracelogging": Program,
	"fuzz/mutate":           Program,
}

// String names the layer as the package doc does.
func (l Layer) String() string {
	switch l {
	case Leaf:
		return "leaves"
	case KernelPart:
		return "the kernel's parts"
	case Kernel:
		return "the kernel"
	case OnKernel:
		return "on the kernel"
	case Program:
		return "programs"
	}
	return "unknown layer"
}
