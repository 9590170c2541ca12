//go:build !amd64

package pmc

// rdpmcInsn is never called where RDPMC does not exist: hasRDPMC is false.
func rdpmcInsn(counter uint32) uint64 { panic("pmc: RDPMC is an x86 instruction") }

const hasRDPMC = false
