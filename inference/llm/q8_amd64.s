#include "textflag.h"
#include "avx_amd64.h"

// Q8_0 dot products with AVX2, in the order of dotQ8 (q8.go): per block of
// 32, each row's 8-lane accumulator sums the products of the widened quants
// (VPMOVSXBD, VCVTDQ2PS: exact) and x, is reduced as
// ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)), scaled by the block's scale and
// added to the row's total. Multiplies and adds stay separate (no FMA).
// AX is the quant offset of the block (x is at 4*AX), DI the scale offset.

// ROWS4STEP adds the products of quants at offset off and x at 4*off for
// the four rows into Y0..Y3.
#define ROWS4STEP(off) \
	VMOVUPS   (4*off)(SI)(AX*4), Y4; \
	VPMOVSXBD off(R8)(AX*1), Y5; \
	VCVTDQ2PS Y5, Y5; \
	VMULPS    Y4, Y5, Y5; \
	VADDPS    Y5, Y0, Y0; \
	VPMOVSXBD off(R9)(AX*1), Y6; \
	VCVTDQ2PS Y6, Y6; \
	VMULPS    Y4, Y6, Y6; \
	VADDPS    Y6, Y1, Y1; \
	VPMOVSXBD off(R10)(AX*1), Y7; \
	VCVTDQ2PS Y7, Y7; \
	VMULPS    Y4, Y7, Y7; \
	VADDPS    Y7, Y2, Y2; \
	VPMOVSXBD off(R11)(AX*1), Y8; \
	VCVTDQ2PS Y8, Y8; \
	VMULPS    Y4, Y8, Y8; \
	VADDPS    Y8, Y3, Y3

// func q8Rows4Asm(out *[4]float32, q0, q1, q2, q3 *int8, d0, d1, d2, d3 *float32, x *float32, nb int)
TEXT ·q8Rows4Asm(SB), NOSPLIT, $0-88
	MOVQ q0+8(FP), R8
	MOVQ q1+16(FP), R9
	MOVQ q2+24(FP), R10
	MOVQ q3+32(FP), R11
	MOVQ d0+40(FP), R12
	MOVQ d1+48(FP), R13
	MOVQ d2+56(FP), BX
	MOVQ d3+64(FP), DX
	MOVQ x+72(FP), SI
	MOVQ nb+80(FP), CX
	SHLQ $5, CX
	XORQ AX, AX
	XORQ DI, DI
	VXORPS X9, X9, X9
	// Rows are short (a row of 768 weights is 12 cache lines) and the
	// hardware prefetcher does not follow four at once well: fetch the
	// memory after row 3, the next four rows of a matrix, two lines per
	// block, and their scales.
	LEAQ (R11)(CX*1), R14
	MOVQ CX, R15
	SHRQ $3, R15
	ADDQ DX, R15

q8rows4block:
	PREFETCHT0 (R14)(AX*4)
	PREFETCHT0 64(R14)(AX*4)
	PREFETCHT0 (R15)(DI*4)
	ZERO4Y
	ROWS4STEP(0)
	ROWS4STEP(8)
	ROWS4STEP(16)
	ROWS4STEP(24)
	REDUCE4(Y0, Y1, Y2, Y3, X0, X1)
	VMOVSS    (R12)(DI*1), X2
	VINSERTPS $0x10, (R13)(DI*1), X2, X2
	VINSERTPS $0x20, (BX)(DI*1), X2, X2
	VINSERTPS $0x30, (DX)(DI*1), X2, X2
	VMULPS    X2, X0, X0
	VADDPS    X0, X9, X9
	ADDQ      $32, AX
	ADDQ      $4, DI
	CMPQ      AX, CX
	JLT       q8rows4block

	MOVQ    out+0(FP), DI
	VMOVUPS X9, (DI)
	VZEROUPPER
	RET

// TILESTEP adds the products of the two rows' quants at offset off with
// the four tokens' x at 4*off: row 0 into Y0..Y3, row 1 into Y4..Y7.
#define TILESTEP(off) \
	VPMOVSXBD off(R8)(AX*1), Y8; \
	VCVTDQ2PS Y8, Y8; \
	VPMOVSXBD off(R9)(AX*1), Y9; \
	VCVTDQ2PS Y9, Y9; \
	VMOVUPS   (4*off)(SI)(AX*4), Y10; \
	VMULPS    Y10, Y8, Y11; \
	VADDPS    Y11, Y0, Y0; \
	VMULPS    Y10, Y9, Y12; \
	VADDPS    Y12, Y4, Y4; \
	VMOVUPS   (4*off)(DX)(AX*4), Y10; \
	VMULPS    Y10, Y8, Y11; \
	VADDPS    Y11, Y1, Y1; \
	VMULPS    Y10, Y9, Y12; \
	VADDPS    Y12, Y5, Y5; \
	VMOVUPS   (4*off)(BX)(AX*4), Y10; \
	VMULPS    Y10, Y8, Y11; \
	VADDPS    Y11, Y2, Y2; \
	VMULPS    Y10, Y9, Y12; \
	VADDPS    Y12, Y6, Y6; \
	VMOVUPS   (4*off)(R12)(AX*4), Y10; \
	VMULPS    Y10, Y8, Y11; \
	VADDPS    Y11, Y3, Y3; \
	VMULPS    Y10, Y9, Y12; \
	VADDPS    Y12, Y7, Y7

// func q8Tile2x4Asm(out *[8]float32, q0, q1 *int8, d0, d1 *float32, x0, x1, x2, x3 *float32, nb int)
// Each block's quants are widened once and used for four tokens.
TEXT ·q8Tile2x4Asm(SB), NOSPLIT, $0-80
	Q8TILEARGS
	VXORPS X13, X13, X13
	VXORPS X14, X14, X14

q8tileblock:
	ZERO4Y
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	TILESTEP(0)
	TILESTEP(8)
	TILESTEP(16)
	TILESTEP(24)
	REDUCE4(Y0, Y1, Y2, Y3, X0, X15)
	REDUCE4(Y4, Y5, Y6, Y7, X4, X15)
	VBROADCASTSS (R10)(DI*1), X15
	VMULPS       X15, X0, X0
	VADDPS       X0, X13, X13
	VBROADCASTSS (R11)(DI*1), X15
	VMULPS       X15, X4, X4
	VADDPS       X4, X14, X14
	ADDQ         $32, AX
	ADDQ         $4, DI
	CMPQ         AX, CX
	JLT          q8tileblock

	MOVQ    out+0(FP), DI
	VMOVUPS X13, (DI)
	VMOVUPS X14, 16(DI)
	VZEROUPPER
	RET
