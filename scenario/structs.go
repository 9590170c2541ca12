package scenario

import (
	"fmt"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/guidtable"
	"github.com/etwemu/etwemu/internal/quote"
	"github.com/etwemu/etwemu/layout"
)

// The dt views of a GUID entry and a registration: the modelled members of
// ETW_GUID_ENTRY and ETW_REG_ENTRY with their live values, placed as the layout
// catalogue has them for the machine's version, as the logger view places
// WMI_LOGGER_CONTEXT's.

// slotText is one TRACE_ENABLE_INFO as the dt views print it.
func slotText(s emu.EnableSlot, ok bool) string {
	if !ok {
		return "IsEnabled 0 (free)"
	}
	enabled := 0
	if s.IsEnabled {
		enabled = 1
	}
	return fmt.Sprintf("IsEnabled %d, Level %d, LoggerId %d, EnableProperty 0x%x, MatchAnyKeyword 0x%x, MatchAllKeyword 0x%x",
		enabled, s.Level, s.LoggerID, s.EnableProperty, s.MatchAnyKeyword, s.MatchAllKeyword)
}

func viewGuid(m *Machine, a args) error {
	k, err := m.kernel()
	if err != nil {
		return err
	}
	p := m.named(a.pos[0])
	g, err := a.choice("group", "1", "0")
	if err != nil {
		return err
	}
	group := g == "1"
	e, ok := k.LookupGuidEntry(p.g, group)
	if !ok && group {
		return fmt.Errorf("no group GUID entry %s for %s (a group's entry exists once a provider registers with traits naming the group, or a session enables the group)", p.g, p.shown)
	}
	if !ok {
		return fmt.Errorf("no GUID entry for %s %s (an entry exists once the provider registers or a session enables it)", p.shown, p.g)
	}
	view := layout.GuidEntry.At(m.version, layout.X64)
	off := func(n string) int {
		if !view.Exists {
			return -1
		}
		return view.Offset(n)
	}
	fields := []field{
		{off("RefCount"), "RefCount", fmt.Sprint(e.RefCount())},
		{off("Guid"), "Guid", e.GUID().String()},
		{off("RegListHead"), "RegListHead", quote.Count(e.Registrations(), "registration")},
		{off("ProviderEnableInfo"), "ProviderEnableInfo", slotText(e.Provider(), true)},
	}
	base := off("EnableInfo")
	for i := range guidtable.Slots {
		o := -1
		if base >= 0 {
			o = base + i*guidtable.EnableInfoSize
		}
		s, ok := e.Slot(i)
		fields = append(fields, field{o, fmt.Sprintf("EnableInfo[%d]", i), slotText(s, ok)})
	}
	return m.showStruct(a, &layout.GuidEntry, fmt.Sprintf("of %s (%s, %v)", p.shown, p.g, e.Type()), fields)
}

func viewReg(m *Machine, a args) error {
	if _, err := m.kernel(); err != nil {
		return err
	}
	p := m.named(a.pos[0])
	r := p.reg
	if r == nil {
		return fmt.Errorf("%s is not registered: register %s first", p.shown, p.shown)
	}
	view := layout.RegEntry.At(m.version, layout.X64)
	off := func(n string) int {
		if !view.Exists {
			return -1
		}
		return view.Offset(n)
	}
	group := "NULL"
	if g, ok := r.Group(); ok {
		group = "the entry of group " + g.String()
	}
	traits := "NULL"
	if t := r.TraitsName(); t != "" {
		traits = fmt.Sprintf("provider name %q", t)
	}
	fields := []field{
		{off("GuidEntry"), "GuidEntry", "the entry of " + r.Provider().String()},
		{off("GroupEntry"), "GroupEntry", group},
		{off("Index"), "Index", fmt.Sprint(r.Index())},
		{off("Flags"), "Flags", r.Flags().String()},
		{off("EnableMask"), "EnableMask", fmt.Sprintf("0x%02x (0b%08b)", r.EnableMask(), r.EnableMask())},
		{off("GroupEnableMask"), "GroupEnableMask", fmt.Sprintf("0x%02x (0b%08b)", r.GroupEnableMask(), r.GroupEnableMask())},
		{off("Traits"), "Traits", traits},
	}
	if !view.Exists || off("HostEnableMask") >= 0 { // the silo masks of 2004
		fields = append(fields, field{off("HostEnableMask"), "HostEnableMask", fmt.Sprintf("0x%02x", r.HostEnableMask())},
			field{off("HostGroupEnableMask"), "HostGroupEnableMask", fmt.Sprintf("0x%02x", r.HostGroupEnableMask())})
	}
	if r.Closed() {
		fields = append(fields, field{-1, "(closed)", "EventUnregister closed this registration"})
	}
	return m.showStruct(a, &layout.RegEntry, fmt.Sprintf("of %s", p.shown), fields)
}
