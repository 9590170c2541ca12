//go:build !amd64 || race

package hw

import "sync/atomic"

// StoreRelease stores v at *p after every store the caller made before the call; see the
// amd64 version. Here it is atomic.StoreUint32, which the race detector sees as the
// release it is.
func StoreRelease(p *uint32, v uint32) { atomic.StoreUint32(p, v) }
