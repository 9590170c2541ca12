package logmode

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/etwemu/etwemu/fuzz/oracle"
	"github.com/etwemu/etwemu/winver"
)

// FuzzDecide drives Decide with any (version, mode, properties) and compares its answer
// with package oracle's, a separate transcription of the published rules that shares no
// code with this package: both accept or both refuse, with the same effective mode,
// FlushTimer and FlushThreshold. Besides, Decide never panics, the same input always
// gives the same decision, an accepted effective mode never holds a pair the table
// forbids, and feeding the effective properties back in is accepted unchanged.
func FuzzDecide(f *testing.F) {
	f.Add(uint8(winver.V6_2), uint32(Sequential|Circular), uint8(1), uint32(10), uint32(0), uint32(0))
	f.Add(uint8(winver.V6_2), uint32(Buffering|KDFilter|PagedMemory|RealTime), uint8(0), uint32(0), uint32(5), uint32(7))
	f.Add(uint8(winver.V6_0), uint32(NonStoppable|RealTime|DelayOpenFile), uint8(4), uint32(0), uint32(0), uint32(0))
	f.Add(uint8(winver.V1607), uint32(Compressed|Buffering|NonStoppable), uint8(4), uint32(0), uint32(1), uint32(1))
	f.Add(uint8(winver.V2004), uint32(PrivateLogger|PrivateInProc|Compressed|Blocking|PagedMemory), uint8(1), uint32(1), uint32(0), uint32(0))
	f.Add(uint8(winver.V5_2), uint32(NewFile|Append), uint8(3|8), uint32(1), uint32(0), uint32(0))
	f.Fuzz(func(t *testing.T, ver uint8, mode uint32, props uint8, maxSize, timer, threshold uint32) {
		// Versions 1 to 17 are the emulated ones; the byte is folded so that most inputs
		// name one (0 and 18 stay invalid).
		q := Request{Version: winver.Version(ver % 19), Mode: Mode(mode), MaximumFileSize: maxSize, FlushTimer: timer, FlushThreshold: threshold,
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
		if err := agree(q, d); err != "" {
			t.Fatal(err)
		}
		// A random mode sets a dozen bits, which some rule nearly always refuses: every
		// flag alone with the destination the mode's low bits pick (none, REAL_TIME or
		// BUFFERING) is a request that reaches the recognition column and the rules of
		// that one flag at this version.
		one := q
		for b := 0; b < 32; b++ {
			one.Mode = 1<<b | [...]Mode{0, RealTime, Buffering, RealTime}[mode&3]
			if err := agree(one, Decide(one)); err != "" {
				t.Fatal(err)
			}
		}
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

// agree compares Decide's decision d on q with the oracle's answer, and returns what
// differs ("" when nothing does).
func agree(q Request, d Decision) string {
	a := oracle.Decide(oracle.Request{Version: q.Version, Mode: uint32(q.Mode), Name: q.Name, GUID: q.GUID,
		LogFileName: q.LogFileName != "", MaximumFileSize: q.MaximumFileSize != 0, AutoLogger: q.AutoLogger,
		FlushTimer: q.FlushTimer, FlushThreshold: q.FlushThreshold})
	if a.Accepted == d.Accepted() && (!a.Accepted || (uint32(d.Effective) == a.Effective &&
		d.FlushTimer == a.FlushTimer && d.FlushThreshold == a.FlushThreshold)) {
		return ""
	}
	got := "refused: " + fmt.Sprint(d.Err)
	if d.Accepted() {
		got = fmt.Sprintf("accepted as %#08x %v (FlushTimer %d, FlushThreshold %d)", uint32(d.Effective), d.Effective, d.FlushTimer, d.FlushThreshold)
	}
	return fmt.Sprintf("%v, mode %#08x %v, LogFileName %q, MaximumFileSize %d, AutoLogger %v, GUID %v, name %q:\n  logmode: %s\n  oracle:  %v",
		q.Version, uint32(q.Mode), q.Mode, q.LogFileName, q.MaximumFileSize, q.AutoLogger, q.GUID, q.Name, got, a)
}

// Every version, every single flag and every pair of flags, with each combination of
// the properties the rules name: Decide and the oracle agree.
func TestDecideAgreesWithOracle(t *testing.T) {
	n, bad := 0, 0
	for _, v := range winver.All() {
		for i := -1; i < 32; i++ {
			for j := i; j < 32; j++ {
				var m Mode
				if i >= 0 {
					m |= 1 << i
				}
				if j >= 0 {
					m |= 1 << j
				}
				for _, extra := range []Mode{0, RealTime, PrivateLogger, NonStoppable | Circular} {
					for props := 0; props < 8; props++ {
						// FlushTimer and FlushThreshold ride on the LogFileName bit.
						q := Request{Version: v, Mode: m | extra, AutoLogger: props&4 != 0, FlushTimer: uint32(props & 1), FlushThreshold: uint32(props & 1)}
						if props&1 != 0 {
							q.LogFileName = "t.etl"
						}
						if props&2 != 0 {
							q.MaximumFileSize = 1
						}
						n++
						if err := agree(q, Decide(q)); err != "" {
							bad++
							if bad <= 10 {
								t.Error(err)
							}
						}
					}
				}
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d requests differ", bad, n)
	}
}
