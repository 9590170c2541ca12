#include "textflag.h"

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
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
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
	// The same hash as stackCPU: stack address >> 13, folded, low 12 bits.
	MOVQ SP, AX
	SHRQ $13, AX
	MOVQ AX, BX
	SHRQ $7, BX
	XORQ BX, AX
	ANDQ $0xFFF, AX
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
	RDTSC
	SHLQ    $32, DX
	ORQ     DX, AX
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
	// The same hash as stackCPU: stack address >> 13, folded, low 12 bits.
	MOVQ SP, BX
	SHRQ $13, BX
	MOVQ BX, CX
	SHRQ $7, CX
	XORQ CX, BX
	ANDQ $0xFFF, BX
	MOVQ BX, cpu+0(FP)
	RDTSC
	SHLQ $32, DX
	ORQ  DX, AX
	MOVQ AX, tsc+8(FP)
	RET
