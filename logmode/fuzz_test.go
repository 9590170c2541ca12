package logmode

import (
	"reflect"
	"testing"

	"github.com/etwemu/etwemu/winver"
)

// FuzzDecide drives Decide with any (version, mode, properties): it never panics, the same
// input always gives the same decision, an accepted effective mode never holds a pair the
// table forbids, and feeding the effective properties back in is accepted unchanged.
func FuzzDecide(f *testing.F) {
	f.Add(uint8(winver.V6_2), uint32(Sequential|Circular), uint8(1), uint32(10), uint32(0), uint32(0))
	f.Add(uint8(winver.V6_2), uint32(Buffering|KDFilter|PagedMemory|RealTime), uint8(0), uint32(0), uint32(5), uint32(7))
	f.Add(uint8(winver.V6_0), uint32(NonStoppable|RealTime|DelayOpenFile), uint8(4), uint32(0), uint32(0), uint32(0))
	f.Add(uint8(winver.V1607), uint32(Compressed|Buffering|NonStoppable), uint8(4), uint32(0), uint32(1), uint32(1))
	f.Add(uint8(winver.V2004), uint32(PrivateLogger|PrivateInProc|Compressed|Blocking|PagedMemory), uint8(1), uint32(1), uint32(0), uint32(0))
	f.Add(uint8(winver.V5_2), uint32(NewFile|Append), uint8(3|8), uint32(1), uint32(0), uint32(0))
	f.Fuzz(func(t *testing.T, ver uint8, mode uint32, props uint8, maxSize, timer, threshold uint32) {
		q := Request{Version: winver.Version(ver), Mode: Mode(mode), MaximumFileSize: maxSize, FlushTimer: timer, FlushThreshold: threshold,
			AutoLogger: props&4 != 0}
		if props&1 != 0 {
			q.LogFileName = "trace.etl"
		}
		if props&2 != 0 {
			q.LogFileName = "trace%d.etl"
		}
		switch props >> 3 & 3 {
		case 1:
			q.GUID = SystemTraceControlGUID
		case 2:
			q.GUID = CKCLGUID
		case 3:
			q.Name = KernelLoggerName
		}
		d := Decide(q)
		again := Decide(q)
		if !reflect.DeepEqual(d.Fired, again.Fired) || d.Effective != again.Effective || (d.Err == nil) != (again.Err == nil) ||
			(d.Err != nil && d.Err.Error() != again.Err.Error()) {
			t.Fatalf("two decisions on %+v differ: %v / %v", q, d.Err, again.Err)
		}
		if !d.Accepted() {
			if len(d.Refusals()) == 0 && q.Version.Valid() {
				t.Fatalf("refused without a rule: %v", d.Err)
			}
			return
		}
		if r := Forbidden(q.Version, d.Kind, d.Effective); r != nil {
			t.Fatalf("%+v accepted as %v, which %s forbids", q, d.Effective, r.Describe())
		}
		if d.Effective&^d.Recognised&^d.Implied != 0 || d.Effective&d.Ignored != 0 {
			t.Fatalf("effective %v holds bits neither requested nor implied", d.Effective)
		}
		e := d.EffectiveRequest()
		back := Decide(e)
		if !back.Accepted() || back.Effective != d.Effective || back.FlushTimer != e.FlushTimer ||
			back.FlushThreshold != e.FlushThreshold || back.Implied != 0 || back.Overridden != 0 || back.Ignored != 0 {
			t.Fatalf("effective request %+v (mode %v) comes back as %v %v (implied %v, overridden %v)",
				e, e.Mode, back.Err, back.Effective, back.Implied, back.Overridden)
		}
	})
}
