package fuzz

import (
	"slices"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etw"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/winerr"
)

// registerTL does an OpRegister with TL: a TraceLogging provider of package etw for the
// operation's provider, which registers and then sets its traits (its name). The model
// predicts both calls: before 6.0 the registration fails; before Windows 10 the traits
// do, and the provider gives its registration back.
func (h *harness) registerTL(o Op) error {
	k, m := h.k, h.m
	g := providers[o.Provider]
	idx := len(h.regs)
	h.calls = append(h.calls, nil) // the callback may run before the provider is made
	cb := func(_ guid.GUID, state etw.ProviderState, level etw.Level, any, all uint64, _ uintptr) {
		h.calls[idx] = append(h.calls[idx], mCall{uint32(state), uint8(level), any, all})
	}
	p, err := etw.NewProviderWithOptions(providerNames[o.Provider], etw.WithKernel(k), etw.WithID(g), etw.WithCallback(cb))
	h.results = append(h.results, err)
	var werr error
	f := m.facts
	switch {
	case !f.eventRegister:
		werr = winerr.ErrNotSupported
	case !f.groups: // no provider traits before Windows 10
		r := m.register(g)
		m.regs = m.regs[:len(m.regs)-1]
		m.unregister(r)
		werr = winerr.ErrNotSupported
	}
	if err != nil {
		h.calls = h.calls[:idx]
	}
	if e := h.sameErr(o, err, werr); e != nil || err != nil {
		return e
	}
	h.regs, h.tl = append(h.regs, p.Registration()), append(h.tl, p)
	m.traits(m.register(g), g, false)
	return nil
}

// The TraceLogging event a TL registration writes: named tlEvent, its fields a byte array
// "pad" (a u16 count, then the bytes) and the write's serial "serial" (a u64), so that
// the serial ends the record as the other writes' do.
const (
	tlEvent = "tl"
	// tlSchemaSize is the event's EVENT_SCHEMA_TL blob (TraceLoggingProvider.h's
	// layout): its u16 size, the tags (one byte, 0), the name and its NUL, then each
	// field's name, NUL and in-type byte (UInt8 with the variable-count flag, UInt64).
	tlSchemaSize = 2 + 1 + len(tlEvent) + 1 + len("pad") + 1 + 1 + len("serial") + 1 + 1
	tlCountSize  = 2 // the pad array's u16 count
)

// tlItem is the size of an extended item carrying n bytes (the model's own reading of
// evntcons.h, not abi.ExtItemSize, so that a wrong size there is caught): its 8-byte head and the data,
// padded to 8.
func tlItem(n int) int { return 8 + (n+7)&^7 }

// tlPad returns zeros: the pad field's bytes.
var tlPad = make([]byte, 0x10000)

// writeTL does an OpWrite on a TL registration: WriteEvent with the operation's level
// and keyword, and a pad that makes the user data the operation's payload size (at least
// the count and the serial), on the processor the goroutine is pinned to. The model
// predicts the provider's own filter (the state its last enable or disable callback
// left) and then the kernel's write of a record carrying two extended items, the
// provider's traits and the event's schema.
func (h *harness) writeTL(o Op) error {
	k, m := h.k, h.m
	p := h.tl[o.Reg%len(h.tl)]
	_, mr := h.reg(o.Reg)
	h.writes++
	h.serial++
	serial := h.serial
	n := max(o.Payload-tlCountSize-8, 0)
	var err error
	call := func() {
		h.deepen(func() {
			err = p.WriteEvent(tlEvent, etw.WithEventOpts(etw.WithLevel(etw.Level(o.Level)), etw.WithKeyword(o.Any)),
				etw.WithFields(etw.Uint8Array("pad", tlPad[:n]), etw.Uint64Field("serial", serial)))
		})
	}
	h.stats(&h.before)
	proc := 0
	if m.nproc > 1 {
		var ok bool
		if proc, ok = h.pin.on(k.CurrentProcessor, call); !ok {
			h.results = append(h.results, nil) // the processor cannot be known: nothing is written
			return nil
		}
	} else {
		call()
	}
	h.results = append(h.results, err)
	h.proc = proc
	want, werr := outcomes(nil), error(nil)
	if mr.tlPasses(o.Level, o.Any) {
		ev := rec{hook: 0, level: o.Level, keyword: o.Any, pid: processID, tail: serial, provider: mr.provider.g}
		extra := tlItem(len(providerNames[slices.Index(providers, mr.provider.g)])+3) + tlItem(tlSchemaSize)
		want, werr = m.write(mr, o.Level, o.Any, tlCountSize+n+8, extra, proc, ev)
	}
	if e := h.sameErr(o, err, werr); e != nil {
		return e
	}
	h.cov.TraceLogging++
	h.tally = emu.Tally{}
	h.tallyOf(&h.tally, want, nil)
	if err := h.compareTally("WriteEvent", proc, 0, &h.tally, want); err != nil {
		return err
	}
	return h.compareOverwritten()
}

// tlPasses is package etw's filter (Provider.IsEnabledForLevelAndKeywords) by the state
// the registration's last enable or disable callback left: disabled, or enabled with a
// level and keywords, tested as a slot tests them (mSlot.passes).
func (r *mReg) tlPasses(level uint8, kw uint64) bool {
	last := lastState(r.calls)
	return last != nil && last.code == 1 && (&mSlot{level: last.level, any: last.matchAny, all: last.match}).passes(level, kw)
}
