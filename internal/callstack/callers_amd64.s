#include "textflag.h"

// WALK(fp, limit, pcs, n, len) stores the return addresses of the frame-pointer chain
// that starts at frame fp into pcs from index n, up to len; R8 holds the frame below fp.
// Each frame holds its caller's frame pointer at 0 and its return address at 8. A
// goroutine's frames lie above one another on its stack, the first with a saved frame
// pointer of 0; the walk stops at the first pointer that is not above the frame before
// it or reaches limit: there the chain has left the goroutine's stack, as in a Go
// function called from C, whose caller's saved frame pointer is whatever the C code kept
// in BP. Clobbers DX and R8.
#define WALK(fp, limit, pcs, n, len) \
loop: \
	CMPQ n, len; \
	JGE  done; \
	CMPQ fp, R8; \
	JLS  done; \
	CMPQ fp, limit; \
	JCC  done; \
	MOVQ 8(fp), DX; \
	MOVQ DX, (pcs)(n*8); \
	MOVQ fp, R8; \
	MOVQ 0(fp), fp; \
	INCQ n; \
	JMP  loop; \
done:

// STACK_HI(reg) loads the top of the running goroutine's stack into reg: g.stack.hi, the
// second word of the g that the thread-local slot holds. The runtime's C code for cgo
// relies on that layout (runtime/runtime2.go: g's first field, stack, has its "offset
// known to runtime/cgo"), and TestStackHi checks it.
#define STACK_HI(reg) \
	MOVQ (TLS), reg; \
	MOVQ 8(reg), reg

// func callers(pcs []uintptr) int
//
// Go on amd64 saves the caller's BP below the return address in the frame of every
// function that calls another, except NOFRAME assembly; a frame without one is skipped,
// never misread. callers has no frame of its own, so BP is Callers'. The walk's limit
// keeps both words of a frame below the goroutine's stack top: in a Go function called
// from C the chain leaves the goroutine's stack for the thread's, and then for whatever
// the C code kept in BP, which may lie anywhere above (a C thread's stack placed near
// Go's heap), so no fixed distance from SP bounds it.
TEXT ·callers(SB), NOSPLIT|NOFRAME, $0-32
	MOVQ pcs_base+0(FP), DI
	MOVQ pcs_len+8(FP), CX
	XORQ AX, AX
	MOVQ BP, R8
	STACK_HI(R9)
	SUBQ $15, R9   // a frame at R9-1 ends its return address at the top's last byte
	MOVQ 0(BP), SI // the frame of Callers' caller: 8(SI) returns into its caller
	WALK(SI, R9, DI, AX, CX)
	MOVQ AX, ret+24(FP)
	RET

// func walk(fp, limit uintptr, pcs []uintptr) int
TEXT ·walk(SB), NOSPLIT|NOFRAME, $0-48
	MOVQ fp+0(FP), SI
	MOVQ limit+8(FP), R9
	MOVQ pcs_base+16(FP), DI
	MOVQ pcs_len+24(FP), CX
	XORQ AX, AX
	XORQ R8, R8
	WALK(SI, R9, DI, AX, CX)
	MOVQ AX, ret+40(FP)
	RET

// func stackHi() uintptr
TEXT ·stackHi(SB), NOSPLIT|NOFRAME, $0-8
	STACK_HI(AX)
	MOVQ AX, ret+0(FP)
	RET
