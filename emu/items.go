package emu

import (
	"encoding/binary"
	"sync"

	"github.com/etwemu/etwemu/internal/callstack"
	"github.com/etwemu/etwemu/session"
)

// The values of the extended items an enablement's EVENT_ENABLE_PROPERTY_* bits ask for
// (session.PropItems), for the one process the kernel emulates.
//
// [emulator choice] The emulated process runs as LocalSystem (S-1-5-18) in terminal
// session 1, and its PROCESS_START_KEY is Windows' form, the boot number in the high
// 16 bits (1: the emulator boots once) above a process sequence number, here the
// emulated process id.
//
// [UNCERTAIN] That the SID item holds the bare SID: the documentation of
// EVENT_HEADER_EXT_TYPE_SID says its data is a SID; no real file with one was at hand.
var localSystemSID = []byte{1, 1, 0, 0, 0, 0, 0, 5, 18, 0, 0, 0} // S-1-5-18, binary

const (
	emulatedTerminalSession = 1
	startKeyBoot            = uint64(1) << 48
)

// itemValues fills x with the values of the extended items an enable property may ask
// for an event, once per event: the SID, the terminal session and the process start key
// of the emulated process, and a new EVENT_KEY. Each session's properties then pick among
// them (EventExtra.Props). The stack, dearer than the rest together (a seventh of a
// FuzzInterplay worker's time went to it when every item was made for every such
// event), waits for a session that asks for it (stackItem).
func (k *Kernel) itemValues(x *session.EventExtra) {
	x.SID, x.TSID = localSystemSID, emulatedTerminalSession
	x.ProcessStartKey = startKeyBoot | uint64(k.pid)
	x.EventKey = k.eventKeys.Add(1)
}

// stackItem sets x.Stack to the writing goroutine's stack as an
// EVENT_EXTENDED_ITEM_STACK_TRACE64: MatchId 0 (the stack is not keyed), then the return
// addresses of the calls that led here, from the innermost, the emulator's own frames
// included as Windows' stacks include ntdll's. Only an event a session asks a stack of
// comes here. The bytes come from stackBytes; stackItem leaves them in *hold too, and the
// writer gives them back (releaseStack) once every session has copied them. hold is a
// local of the writer's of its own: given to the pool through extra, the pointer would
// make everything extra points at (the activity ids, TraceLogging's metadata) escape,
// and EventWriteTransfer and EventWriteEx allocate. Never inlined, so that the stack
// starts at its caller whatever the compiler's inlining budget.
//
//go:noinline
func (k *Kernel) stackItem(x *session.EventExtra, hold **stackItemBytes) {
	var pcs [callstack.Frames]uintptr
	n := callstack.Callers(pcs[:]) // from the caller of stackItem
	b := stackBytes.Get().(*stackItemBytes)
	*hold = b
	stack := b[:8+8*n]
	binary.LittleEndian.PutUint64(stack, 0) // MatchId
	for i, pc := range pcs[:n] {
		binary.LittleEndian.PutUint64(stack[8+8*i:], uint64(pc))
	}
	x.Stack = stack
}

// stackItemBytes holds the largest STACK_TRACE64 item stackItem makes: MatchId and
// callstack.Frames addresses.
type stackItemBytes [8 + 8*callstack.Frames]byte

// stackBytes keeps the bytes of STACK_TRACE items between events: an event's item is
// copied into each session's buffer as Write reserves its record, and nothing holds it
// after the write returns. An item made fresh for each event was one allocation an event
// and, with the collection it drove, nearly half of its time (BenchmarkStackItem).
var stackBytes = sync.Pool{New: func() any { return new(stackItemBytes) }}

// releaseStack gives the bytes of an event's stack item (stackItem's hold), if it has
// one, back to stackBytes: the write calls it once every session has taken the event.
func releaseStack(hold *stackItemBytes) {
	if hold != nil {
		stackBytes.Put(hold)
	}
}
