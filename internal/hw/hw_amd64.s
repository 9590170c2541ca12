#include "textflag.h"

// TSC_AX leaves the 64-bit time-stamp counter in AX (clobbers DX).
#define TSC_AX \
	RDTSC; \
	SHLQ $32, DX; \
	ORQ  DX, AX

// STACK_CPU leaves stackCPU's hash in r (stack address >> 13, folded, low 12 bits),
// using t as scratch.
#define STACK_CPU(r, t) \
	MOVQ SP, r; \
	SHRQ $13, r; \
	MOVQ r, t; \
	SHRQ $7, t; \
	XORQ t, r; \
	ANDQ $0xFFF, r

// func cpuid(eaxArg, ecxArg uint32) (eax, ebx, ecx, edx uint32)
TEXT ·cpuid(SB), NOSPLIT, $0-24
	MOVL eaxArg+0(FP), AX
	MOVL ecxArg+4(FP), CX
	CPUID
	MOVL AX, eax+8(FP)
	MOVL BX, ebx+12(FP)
	MOVL CX, ecx+16(FP)
	MOVL DX, edx+20(FP)
	RET

// func rdtsc() int64
TEXT ·rdtsc(SB), NOSPLIT, $0-8
	TSC_AX
	MOVQ AX, ret+0(FP)
	RET

// func rdpid() uint32
TEXT ·rdpid(SB), NOSPLIT, $0-4
	RDPID AX
	MOVL  AX, ret+0(FP)
	RET

// func rdtscpAux() uint32
TEXT ·rdtscpAux(SB), NOSPLIT, $0-4
	RDTSCP
	MOVL CX, ret+0(FP)
	RET

// func cpu() int
// cpuMethod: 0 stack hash, 1 RDPID, 2 RDTSCP (CPUMethod constants).
TEXT ·cpu(SB), NOSPLIT, $0-8
	MOVBLZX ·cpuMethod(SB), AX
	CMPL    AX, $1
	JNE     notrdpid
	RDPID   AX
	ANDQ    $0xFFF, AX
	MOVQ    AX, ret+0(FP)
	RET

notrdpid:
	CMPL   AX, $2
	JNE    stack
	RDTSCP
	MOVL   CX, AX
	ANDQ   $0xFFF, AX
	MOVQ   AX, ret+0(FP)
	RET

stack:
	STACK_CPU(AX, BX)
	MOVQ AX, ret+0(FP)
	RET

// func cpuTSC() (cpu int, tsc int64)
// cpu and rdtsc in one call: RDPID then RDTSC, or RDTSCP alone, or the stack hash then
// RDTSC. Only called when HasTSC reports true.
TEXT ·cpuTSC(SB), NOSPLIT, $0-16
	MOVBLZX ·cpuMethod(SB), AX
	CMPL    AX, $1
	JNE     notrdpid
	RDPID   BX
	ANDQ    $0xFFF, BX
	MOVQ    BX, cpu+0(FP)
	TSC_AX
	MOVQ    AX, tsc+8(FP)
	RET

notrdpid:
	CMPL AX, $2
	JNE  stack
	RDTSCP
	ANDQ $0xFFF, CX
	MOVQ CX, cpu+0(FP)
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, tsc+8(FP)
	RET

stack:
	STACK_CPU(BX, CX)
	MOVQ BX, cpu+0(FP)
	TSC_AX
	MOVQ AX, tsc+8(FP)
	RET
