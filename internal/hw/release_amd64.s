//go:build !race

#include "textflag.h"

// func StoreRelease(p *uint32, v uint32)
TEXT ·StoreRelease(SB), NOSPLIT, $0-12
	MOVQ p+0(FP), AX
	MOVL v+8(FP), BX
	MOVL BX, (AX)
	RET

// EDGES copies CX bytes from SI to DI, for W <= CX <= 2*W, as two W-byte moves with MOV
// that may overlap: the first W bytes and the last W.
#define EDGES(MOV, W) \
	MOV (SI), AX; \
	MOV -W(SI)(CX*1), BX; \
	MOV AX, (DI); \
	MOV BX, -W(DI)(CX*1)

// func CopyRelease(dst, src []byte, p *uint32)
// Sizes of 16 bytes or more move as 16-byte words, the last one overlapping the one
// before it; below 16, as two overlapping moves of the largest width that fits.
TEXT ·CopyRelease(SB), NOSPLIT, $0-56
	MOVQ dst_base+0(FP), DI
	MOVQ dst_len+8(FP), CX
	MOVQ src_base+24(FP), SI
	MOVQ src_len+32(FP), BX
	CMPQ BX, CX
	CMOVQLT BX, CX          // CX = min(len(dst), len(src))
	CMPQ CX, $16
	JB   small
	MOVOU -16(SI)(CX*1), X1 // the last 16 bytes
	LEAQ  -16(DI)(CX*1), R8
words:
	MOVOU (SI), X0
	MOVOU X0, (DI)
	ADDQ  $16, SI
	ADDQ  $16, DI
	SUBQ  $16, CX
	CMPQ  CX, $16
	JA    words
	MOVOU X1, (R8)
	JMP   release

small:
	CMPQ CX, $8
	JB   lt8
	EDGES(MOVQ, 8)
	JMP  release

lt8:
	CMPQ CX, $4
	JB   lt4
	EDGES(MOVL, 4)
	JMP  release

lt4:
	CMPQ CX, $2
	JB   lt2
	EDGES(MOVW, 2)
	JMP  release

lt2:
	TESTQ CX, CX
	JE    release
	MOVB  (SI), AX
	MOVB  AX, (DI)

release:
	MOVQ p+48(FP), AX
	MOVL $1, (AX)
	RET
