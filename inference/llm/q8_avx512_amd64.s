#include "textflag.h"
#include "avx_amd64.h"

// The Q8_0 prefill tile (2 rows x 4 tokens) with AVX-512: one Z register
// holds both rows' 8-lane accumulators for a token (row 0 in lanes 0-7,
// row 1 in lanes 8-15), so each multiply and add serves two outputs. The
// arithmetic per lane is that of q8Tile2x4Asm and dotQ8: widened quants
// times x, VMULPS then VADDPS (no FMA), the block reduced as
// ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)) (pairs by VSHUFPS even/odd + VADDPS,
// then the two 128-bit halves of each row), scaled, added to the total.

// ZSTEP adds the products of both rows' quants at offset off with the four
// tokens' x at 4*off into Z0..Z3.
#define ZSTEP(off) \
	VMOVQ       off(R8)(AX*1), X4; \
	VPINSRQ     $1, off(R9)(AX*1), X4, X4; \
	VPMOVSXBD   X4, Z4; \
	VCVTDQ2PS   Z4, Z4; \
	VBROADCASTF32X8 (4*off)(SI)(AX*4), Z5; \
	VMULPS      Z5, Z4, Z6; \
	VADDPS      Z6, Z0, Z0; \
	VBROADCASTF32X8 (4*off)(DX)(AX*4), Z5; \
	VMULPS      Z5, Z4, Z6; \
	VADDPS      Z6, Z1, Z1; \
	VBROADCASTF32X8 (4*off)(BX)(AX*4), Z5; \
	VMULPS      Z5, Z4, Z6; \
	VADDPS      Z6, Z2, Z2; \
	VBROADCASTF32X8 (4*off)(R12)(AX*4), Z5; \
	VMULPS      Z5, Z4, Z6; \
	VADDPS      Z6, Z3, Z3

// ZHADD sets d to the neighbour sums of a and b within each 128-bit lane:
// [a0+a1, a2+a3, b0+b1, b2+b3] (VHADDPS has no 512-bit form).
#define ZHADD(a, b, d, t) \
	VSHUFPS $0x88, b, a, d; \
	VSHUFPS $0xDD, b, a, t; \
	VADDPS  t, d, d

// func q8Tile2x4AVX512Asm(out *[8]float32, q0, q1 *int8, d0, d1 *float32, x0, x1, x2, x3 *float32, nb int)
TEXT ·q8Tile2x4AVX512Asm(SB), NOSPLIT, $0-80
	Q8TILEARGS
	MOVL $0xff00, R13
	KMOVW R13, K1
	VPXORD Z13, Z13, Z13

zblock:
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	ZSTEP(0)
	ZSTEP(8)
	ZSTEP(16)
	ZSTEP(24)
	ZHADD(Z0, Z1, Z6, Z7)
	ZHADD(Z2, Z3, Z8, Z7)
	ZHADD(Z6, Z8, Z9, Z7)
	// 128-bit lanes of Z9: row 0 (s0-3 sums, s4-7 sums), row 1 (likewise),
	// each [t0, t1, t2, t3]; swap neighbours and add: lanes 0 and 2 hold
	// the block sums of row 0 and row 1.
	VSHUFF32X4 $0xb1, Z9, Z9, Z10
	VADDPS     Z10, Z9, Z9
	VBROADCASTSS (R10)(DI*1), Z11
	VBROADCASTSS (R11)(DI*1), K1, Z11
	VMULPS     Z11, Z9, Z9
	VADDPS     Z9, Z13, Z13
	ADDQ       $32, AX
	ADDQ       $4, DI
	CMPQ       AX, CX
	JLT        zblock

	MOVQ    out+0(FP), DI
	VMOVUPS X13, (DI)
	VEXTRACTF32X4 $2, Z13, X14
	VMOVUPS X14, 16(DI)
	VZEROUPPER
	RET
