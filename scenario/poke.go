package scenario

import (
	"fmt"
	"strings"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/internal/quote"
)

// poke writes a modelled field of a tracing structure behind the kernel's back (see
// emu.PokeEnableMask and emu.PokeSlot): what a driver or a debugger writing kernel memory
// does. It prints TAMPERED and the field's old and new values, so that a lesson's output
// never passes a poke off as something the kernel did.
//
//	poke reg R mask=0xNN [group=0xNN]   ETW_REG_ENTRY.EnableMask (GroupEnableMask)
//	poke guid P slot=N [group=1]        zero ETW_GUID_ENTRY.EnableInfo[N]
func cmdPoke(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	what, name := strings.ToLower(a.pos[0]), a.pos[1]
	p := m.named(name)
	switch what {
	case "reg":
		_, hasMask := a.opts["mask"]
		_, hasGroup := a.opts["group"]
		if _, ok := a.opts["slot"]; ok || !hasMask && !hasGroup {
			return fmt.Errorf("poke reg takes mask=0xNN and/or group=0xNN")
		}
		if p.reg == nil || p.closed {
			return fmt.Errorf("%s has no open registration to poke", p.shown)
		}
		for _, f := range []struct {
			key, field string
			group      bool
			old        uint8
		}{{"mask", "EnableMask", false, p.reg.EnableMask()}, {"group", "GroupEnableMask", true, p.reg.GroupEnableMask()}} {
			if _, ok := a.opts[f.key]; !ok {
				continue
			}
			v, err := a.num(f.key, 0, 0xFF)
			if err != nil {
				return err
			}
			if err := k.PokeEnableMask(p.reg, f.group, uint8(v)); err != nil {
				return err
			}
			fmt.Fprintf(m.out, "TAMPERED: %s's ETW_REG_ENTRY.%s 0x%02X -> 0x%02X, written behind the kernel's back (its GUID entry's slots are unchanged)\n",
				p.shown, f.field, f.old, v)
		}
		return nil
	case "guid":
		if _, ok := a.opts["mask"]; ok {
			return fmt.Errorf("poke guid takes slot=N [group=1]")
		}
		if _, ok := a.opts["slot"]; !ok {
			return fmt.Errorf("poke guid takes slot=N [group=1]")
		}
		slot, err := a.num("slot", 0, 7)
		if err != nil {
			return err
		}
		g, err := a.choice("group", "1", "0")
		if err != nil {
			return err
		}
		group := g == "1"
		e, ok := k.LookupGuidEntry(p.g, group)
		if !ok {
			return fmt.Errorf("no GUID entry for %s %s", p.shown, p.g)
		}
		old, _ := e.Slot(int(slot))
		if err := k.PokeSlot(p.g, group, int(slot)); err != nil {
			return err
		}
		fmt.Fprintf(m.out, "TAMPERED: %s's ETW_GUID_ENTRY.EnableInfo[%d] (LoggerId %d) zeroed behind the kernel's back (the registrations' EnableMask is unchanged)\n",
			p.shown, slot, old.LoggerID)
		return nil
	}
	return fmt.Errorf("poke %s: poke reg R mask=0xNN or poke guid P slot=N; only these modelled fields can be written", quote.Shown(a.pos[0]))
}

// cmdCheck walks the kernel's structures with emu's invariant checker and prints every
// disagreement, such as a registration's EnableMask that is not its GUID entry's used
// slots: how a poke is found. It does not fail: it is a view.
func cmdCheck(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	m.walked += int64(len(m.order) + k.GuidEntryCount()) // Limits.Walk
	for _, s := range k.Sessions() {
		m.walked += s.Stats().NumberOfBuffers
	}
	vs := emu.NewChecker(k).Check()
	if len(vs) == 0 {
		fmt.Fprintln(m.out, "check: the GUID entries, registrations and loggers agree")
		return nil
	}
	fmt.Fprintf(m.out, "check: %s\n", quote.Count(len(vs), "disagreement"))
	for _, v := range vs {
		fmt.Fprintf(m.out, "  %s\n", v)
	}
	return nil
}
