package pmc

// rdpmcInsn executes RDPMC for counter and returns EDX:EAX. Only readSelf calls it, and
// only after the mapped page said user-space RDPMC is allowed: where the kernel forbids
// it (CR4.PCE clear) the instruction faults.
func rdpmcInsn(counter uint32) uint64

// hasRDPMC reports whether this architecture has the RDPMC instruction.
const hasRDPMC = true
