#include "textflag.h"

// func rdpmcInsn(counter uint32) uint64
TEXT ·rdpmcInsn(SB), NOSPLIT, $0-16
	MOVL counter+0(FP), CX
	RDPMC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, ret+8(FP)
	RET
