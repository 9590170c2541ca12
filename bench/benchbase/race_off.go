//go:build !race

package benchbase

// raceEnabled reports that the race detector is on; see slab.put.
const raceEnabled = false
