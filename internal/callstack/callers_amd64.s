#include "textflag.h"

// func callers(pcs []uintptr) int
//
// Go on amd64 keeps a frame pointer in every frame of a function that calls another
// (the assembler saves BP below the return address: 0(BP) is the caller's BP, 8(BP) the
// return address into the caller), except frameless NOSPLIT functions; the chain ends
// with 0 at a goroutine's first frame. callers has no frame of its own, so BP is
// Callers'.
TEXT ·callers(SB), NOSPLIT|NOFRAME, $0-32
	MOVQ pcs_base+0(FP), DI
	MOVQ pcs_len+8(FP), CX
	XORQ AX, AX
	MOVQ 0(BP), SI // the frame of Callers' caller: 8(SI) returns into its caller
loop:
	CMPQ AX, CX
	JGE  done
	TESTQ SI, SI
	JZ   done
	MOVQ 8(SI), DX
	MOVQ DX, (DI)(AX*8)
	MOVQ 0(SI), SI
	INCQ AX
	JMP  loop
done:
	MOVQ AX, ret+24(FP)
	RET
