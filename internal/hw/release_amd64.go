//go:build !race

package hw

// StoreRelease stores v at *p after every store the caller made before the call: a
// release store, which is what a writer needs to publish a record it has finished for a
// reader that loads *p with sync/atomic.
//
// On amd64 it is one plain MOV. x86 keeps stores in program order (x86-TSO), so the
// processor publishes nothing early, and the call is opaque to the compiler, which moves
// no store across it. sync/atomic's Store compiles to XCHG, a locked instruction that
// also waits for the store buffer to drain: about 5 ns on this project's development VM,
// against about 1 ns for this call (bench/RESULTS.md). Under the race detector, which
// cannot see assembly's stores, and on other architectures it is atomic.StoreUint32.
//
//go:noescape
func StoreRelease(p *uint32, v uint32)

// WideLoads reports whether flags stored with StoreRelease may be read as aligned 8-byte
// words, two flags a load. They may here: under x86-TSO every load is an acquire, of
// any width.
const WideLoads = true

// CopyRelease copies src into dst, as copy does (min(len(dst), len(src)) bytes; the two
// must not overlap), then stores 1 at *p with StoreRelease's ordering: a writer's last
// two steps, the payload and the flag that publishes its record, in one call. As two
// calls, to runtime.memmove and StoreRelease, the second cost about 0.6 ns an event in
// BenchmarkWrite (bench/RESULTS.md). It moves 16 bytes at a time, which suits blocks up
// to CopyReleaseMax; REP MOVSB in its place above 256 bytes made 512-byte events 8 ns
// slower. Under the race detector, and on other architectures, it is copy and
// atomic.StoreUint32.
//
//go:noescape
func CopyRelease(dst, src []byte, p *uint32)
