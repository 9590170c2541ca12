//go:build !amd64 || race

package hw

import "sync/atomic"

// StoreRelease stores v at *p after every store the caller made before the call; see the
// amd64 version. Here it is atomic.StoreUint32, which the race detector sees as the
// release it is.
func StoreRelease(p *uint32, v uint32) { atomic.StoreUint32(p, v) }

// WideLoads is false here: the race detector pairs a release only with loads of the same
// address, and the project does not rely on other architectures' ordering of
// mixed-size accesses.
const WideLoads = false

// CopyRelease copies src into dst, as copy does, then stores 1 at *p: StoreRelease after
// the copy; see the amd64 version.
func CopyRelease(dst, src []byte, p *uint32) {
	copy(dst, src)
	atomic.StoreUint32(p, 1)
}
