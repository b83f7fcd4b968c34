#include "textflag.h"

// NEON kernels, in the order of dot and dotQ8 (ops.go, q8.go): the 8-lane
// accumulator of one output is a pair of 4-lane registers (lanes 0-3, 4-7);
// products and sums are separate FMUL and FADD (never FMLA); the reduction
// ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)) is three rounds of FADDP:
// faddp(lo, hi) = [s0+s1, s2+s3, s4+s5, s6+s7], and pairing two such
// results twice more gives [o0, o1, o2, o3] for four outputs. Go's arm64
// assembler has no mnemonics for these vector floating-point instructions,
// so they are WORD encodings, each with its instruction in a comment.
// Lengths: n is a positive multiple of 8, nb a positive count of
// 32-weight blocks (the Go wrappers check).

// func f16Rows4Asm(out *[4]float32, w0, w1, w2, w3 *uint16, x *float32, n int)
// FCVTL/FCVTL2 widen the halves exactly.
TEXT ·f16Rows4Asm(SB), NOSPLIT, $0-56
	MOVD w0+8(FP), R1
	MOVD w1+16(FP), R2
	MOVD w2+24(FP), R3
	MOVD w3+32(FP), R4
	MOVD x+40(FP), R5
	MOVD n+48(FP), R6
	LSR $3, R6, R6
	VEOR V0.B16, V0.B16, V0.B16
	VEOR V1.B16, V1.B16, V1.B16
	VEOR V2.B16, V2.B16, V2.B16
	VEOR V3.B16, V3.B16, V3.B16
	VEOR V4.B16, V4.B16, V4.B16
	VEOR V5.B16, V5.B16, V5.B16
	VEOR V6.B16, V6.B16, V6.B16
	VEOR V7.B16, V7.B16, V7.B16
f16rows4loop:
	VLD1.P 32(R5), [V16.S4, V17.S4]
	VLD1.P 16(R1), [V26.H8]
	VLD1.P 16(R2), [V27.H8]
	VLD1.P 16(R3), [V28.H8]
	VLD1.P 16(R4), [V29.H8]
	WORD $0x0e217b52 // FCVTL V18.4S, V26.4H
	WORD $0x4e217b53 // FCVTL2 V19.4S, V26.8H
	WORD $0x0e217b74 // FCVTL V20.4S, V27.4H
	WORD $0x4e217b75 // FCVTL2 V21.4S, V27.8H
	WORD $0x0e217b96 // FCVTL V22.4S, V28.4H
	WORD $0x4e217b97 // FCVTL2 V23.4S, V28.8H
	WORD $0x0e217bb8 // FCVTL V24.4S, V29.4H
	WORD $0x4e217bb9 // FCVTL2 V25.4S, V29.8H
	WORD $0x6e30de52 // FMUL V18.4S, V18.4S, V16.4S
	WORD $0x6e31de73 // FMUL V19.4S, V19.4S, V17.4S
	WORD $0x6e30de94 // FMUL V20.4S, V20.4S, V16.4S
	WORD $0x6e31deb5 // FMUL V21.4S, V21.4S, V17.4S
	WORD $0x6e30ded6 // FMUL V22.4S, V22.4S, V16.4S
	WORD $0x6e31def7 // FMUL V23.4S, V23.4S, V17.4S
	WORD $0x6e30df18 // FMUL V24.4S, V24.4S, V16.4S
	WORD $0x6e31df39 // FMUL V25.4S, V25.4S, V17.4S
	WORD $0x4e32d400 // FADD V0.4S, V0.4S, V18.4S
	WORD $0x4e33d421 // FADD V1.4S, V1.4S, V19.4S
	WORD $0x4e34d442 // FADD V2.4S, V2.4S, V20.4S
	WORD $0x4e35d463 // FADD V3.4S, V3.4S, V21.4S
	WORD $0x4e36d484 // FADD V4.4S, V4.4S, V22.4S
	WORD $0x4e37d4a5 // FADD V5.4S, V5.4S, V23.4S
	WORD $0x4e38d4c6 // FADD V6.4S, V6.4S, V24.4S
	WORD $0x4e39d4e7 // FADD V7.4S, V7.4S, V25.4S
	SUBS $1, R6, R6
	BNE f16rows4loop
	WORD $0x6e21d408 // FADDP V8.4S, V0.4S, V1.4S
	WORD $0x6e23d449 // FADDP V9.4S, V2.4S, V3.4S
	WORD $0x6e25d48a // FADDP V10.4S, V4.4S, V5.4S
	WORD $0x6e27d4cb // FADDP V11.4S, V6.4S, V7.4S
	WORD $0x6e29d50c // FADDP V12.4S, V8.4S, V9.4S
	WORD $0x6e2bd54d // FADDP V13.4S, V10.4S, V11.4S
	WORD $0x6e2dd58e // FADDP V14.4S, V12.4S, V13.4S
	MOVD out+0(FP), R0
	VST1 [V14.S4], (R0)
	RET
