package session

import "github.com/etwemu/etwemu/pmc"

// SetPMC stores the logger's PMC configuration (WMI_LOGGER_CONTEXT.PmcData). The kernel
// calls it once, under its control lock, after the counters are set; writers pick it up
// on their next event.
func (l *Logger) SetPMC(s *pmc.Support) { l.pmcData.Store(s) }

// PMC returns the logger's PMC configuration, nil if none.
func (l *Logger) PMC() *pmc.Support { return l.pmcData.Load() }
