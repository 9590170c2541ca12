package pmc

import (
	"sync/atomic"
	"unsafe"
)

// mmapPage is the head of struct perf_event_mmap_page (include/uapi/linux/perf_event.h),
// the first page of a mapped perf event: what a thread needs to read its counter itself.
// TestMmapPageLayout checks it against golang.org/x/sys/unix.PerfEventMmapPage.
type mmapPage struct {
	version       uint32
	compatVersion uint32
	lock          uint32 // seqlock: the kernel increments it before and after an update
	index         uint32 // hardware counter + 1; 0 when RDPMC must not be used
	offset        int64  // add to the counter's value
	timeEnabled   uint64
	timeRunning   uint64
	capabilities  uint64 // bit 2: cap_user_rdpmc
	pmcWidth      uint16 // bits the counter has
	timeShift     uint16
	timeMult      uint32
}

// capUserRDPMC is cap_user_rdpmc in capabilities: user space may execute RDPMC.
const capUserRDPMC = 1 << 2

// maxSeqRetries bounds the seqlock loop: a page whose lock stays odd (an update that
// never finishes) sends the reader to read(2) instead of spinning forever.
const maxSeqRetries = 1000

// readSelf reads the counter behind page pg as perf_event_open(2) describes
// self-monitoring (libperf's perf_mmap__read_self): under the page's seqlock, take index,
// offset, capabilities and pmc_width; if the page allows RDPMC, read hardware counter
// index-1 with rdpmc, sign-extend it from pmc_width bits and add offset; retry if the lock
// moved. It returns false, having executed nothing, when the page does not allow RDPMC
// (cap_user_rdpmc clear, index 0, width 0) or the lock never settles; the caller then
// reads with read(2). Events are opened pinned, so time_enabled equals time_running and no
// scaling is needed.
func readSelf(pg *mmapPage, rdpmc func(counter uint32) uint64) (uint64, bool) {
	widthWord := (*uint64)(unsafe.Pointer(&pg.pmcWidth)) // pmc_width, time_shift, time_mult
	for try := 0; try < maxSeqRetries; try++ {
		seq := atomic.LoadUint32(&pg.lock)
		if seq&1 != 0 {
			continue // the kernel is updating the page
		}
		idx := atomic.LoadUint32(&pg.index)
		caps := atomic.LoadUint64(&pg.capabilities)
		width := uint(atomic.LoadUint64(widthWord) & 0xFFFF)
		off := atomic.LoadInt64(&pg.offset)
		allowed := caps&capUserRDPMC != 0 && idx != 0 && width > 0 && width <= 64
		var cnt int64
		if allowed {
			raw := rdpmc(idx - 1)
			cnt = int64(raw<<(64-width)) >> (64 - width) // sign-extend from width bits
		}
		if atomic.LoadUint32(&pg.lock) != seq {
			continue
		}
		if !allowed {
			return 0, false
		}
		return uint64(off + cnt), true
	}
	return 0, false
}
