//go:build !amd64

package hw

func detect() {}

func rdtsc() int64      { return 0 }
func rdpid() uint32     { return 0 }
func rdtscpAux() uint32 { return 0 }
func segmentCPU() int   { return 0 }

func cpu() int { return cpuGo() }

func cpuTSC() (int, int64) { return cpuGo(), rdtsc() }
