package scenario

import (
	"errors"
	"io"
	"math"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/etl"
)

// Provider names a registration a program made, for the views of an attached machine.
type Provider struct {
	Name string
	Reg  *emu.Registration
}

// errAttached is the error of a command that needs the machine's own kernel.
var errAttached = errors.New("the machine is attached to a program's kernel, whose clock is not manual and whose configuration is the program's")

// Attach returns a machine whose views (strdump, logger, bufdump, guids, regs, files,
// guid, reg, check) and control commands act on k, a kernel a program created: a live
// one, whose sessions have logger goroutines (bufdump then lists the buffers' headers
// without counting their records). fs is k's in-memory file system, nil if it has none;
// provs name the program's registrations. The commands kernel and advance are refused.
// Like any machine it is not safe for concurrent use, and Close leaves k to its owner.
// Its output, walks and writes have no bound (Limits.Output, Walk, Writes): no `kernel`
// line could start a new count, and its program gives it one command at a time and
// bounds what each prints, as the web page's live mode does.
func Attach(out io.Writer, k *emu.Kernel, fs *etl.MemFS, provs ...Provider) *Machine {
	m := New(out)
	m.k, m.fs, m.attached = k, fs, true
	m.limits.Output, m.limits.Walk, m.limits.Writes = math.MaxInt64, math.MaxInt64, math.MaxUint64
	m.version, m.procs = k.Version(), k.Processors()
	for _, p := range provs {
		e := m.named(p.Name)
		e.reg = p.Reg
		if p.Reg != nil {
			e.g = p.Reg.Provider()
		}
	}
	return m
}

// Version is the Windows version the machine's kernel emulates (or will, before its
// first command).
func (m *Machine) Version() string { return m.version.String() }

// Processors is the number of processors of the machine's kernel.
func (m *Machine) Processors() int { return m.procs }
