package emu_test

import (
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/etwemu/etwemu/emu"
	"github.com/etwemu/etwemu/guid"
	"github.com/etwemu/etwemu/regentry"
)

// Many goroutines drive the kernel through its public API only, each with its own
// registrations and all sharing four session names and three providers: starts, stops,
// enables, disables, traits that join and leave groups, registrations closed while
// others write through them, and writes. Whatever interleaving the scheduler picks, the
// checker finds every invariant held after each of ten rounds (Check wants no write in
// progress, so the goroutines join between rounds, keeping their registrations).
func TestPublicAPIStress(t *testing.T) {
	k, err := emu.New(emu.Config{Processors: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	names := []string{"a", "b", "c", "d"}
	provs := []guid.GUID{guid.FromName("stress-1"), guid.FromName("stress-2"), guid.FromName("stress-3")}
	group := guid.FromName("stress-group")
	var mu sync.Mutex // guards handles: the goroutines share session handles
	handles := map[string]emu.TraceHandle{}
	handle := func(n string) emu.TraceHandle {
		mu.Lock()
		defer mu.Unlock()
		return handles[n]
	}
	ops := 4000
	if testing.Short() {
		ops = 1000
	}
	const workers, rounds = 8, 10
	regsOf := make([][]*emu.Registration, workers)
	rngs := make([]*rand.Rand, workers)
	for w := range rngs {
		rngs[w] = rand.New(rand.NewPCG(uint64(w), 7))
	}
	c := emu.NewChecker(k)
	var enabledWrites atomic.Int64
	for round := range rounds {
		var wg sync.WaitGroup
		for w := range workers {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				rng := rngs[w]
				regs := regsOf[w]
				defer func() { regsOf[w] = regs }()
				for range ops / rounds {
					n := names[rng.IntN(len(names))]
					p := provs[rng.IntN(len(provs))]
					switch rng.IntN(10) {
					case 0:
						mode := []uint32{emu.RealTimeMode, emu.BufferingMode}[rng.IntN(2)]
						if h, err := k.StartTrace(n, &emu.Properties{LogFileMode: mode, BufferSize: 4, MaximumBuffers: 8}); err == nil {
							mu.Lock()
							handles[n] = h
							mu.Unlock()
						}
					case 1:
						if rng.IntN(8) == 0 { // sessions live a while, so enables and writes meet them
							k.StopTrace(handle(n), "", nil)
						}
					case 2:
						k.EnableTraceEx2(handle(n), p, emu.EnableProvider, uint8(rng.IntN(6)), 0, 0, nil)
					case 3:
						k.EnableTraceEx2(handle(n), p, emu.DisableProvider, 0, 0, 0, nil)
					case 4:
						if r, err := k.EventRegister(p, func(guid.GUID, emu.EventControlCode, uint8, uint64, uint64, []byte, any) {}, nil); err == nil {
							regs = append(regs, r)
						}
					case 5:
						if len(regs) > 0 {
							k.EventUnregister(regs[rng.IntN(len(regs))]) // a second close is refused, not fatal
						}
					case 6:
						if len(regs) > 0 {
							traits := regentry.BuildTraits("stress")
							if rng.IntN(2) == 0 {
								traits = regentry.BuildTraits("stress", regentry.GroupTrait(group))
							}
							k.EventSetInformation(regs[rng.IntN(len(regs))], emu.EventProviderSetTraits, traits)
						}
					case 7:
						k.EnableTraceEx2(handle(n), group, emu.EnableProvider, 5, 0, 0, &emu.EnableParameters{EnableProperty: 4}) // EVENT_ENABLE_PROPERTY_PROVIDER_GROUP
					default:
						if len(regs) > 0 {
							r := regs[rng.IntN(len(regs))]
							if r.EnableMask() != 0 {
								enabledWrites.Add(1)
							}
							k.EventWrite(r, &emu.EventDescriptor{ID: 1, Level: uint8(rng.IntN(6))}, make([]byte, rng.IntN(300)))
						}
					}
				}
			}(w)
		}
		wg.Wait()
		for _, v := range c.Check() {
			t.Errorf("round %d: %s: %s", round, v.Rule, v.Detail)
		}
	}
	running := 0
	for _, s := range k.Sessions() {
		running++
		_ = fmt.Sprint(s.Stats())
	}
	if enabledWrites.Load() == 0 {
		t.Error("no write found its provider enabled")
	}
	t.Logf("%d writes to enabled providers; %d sessions running, %d GUID entries at the end", enabledWrites.Load(), running, len(k.GuidEntries()))
}
