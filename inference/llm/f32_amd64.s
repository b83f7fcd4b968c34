#include "textflag.h"

// F32 dot products with AVX2, in the order of dot (ops.go): each output is
// one 8-lane accumulator (VMULPS then VADDPS, never fused) reduced as
// ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)). n is a positive multiple of 8.

// REDUCE4 turns the accumulators a, b, c, d (Y registers) into the four
// totals [a, b, c, d] in the X register of a. VHADDPS adds neighbours:
// hadd(a, b) = [a0+a1, a2+a3, b0+b1, b2+b3 | a4+a5, a6+a7, b4+b5, b6+b7],
// so two rounds give each total's two halves in the low and high 128 bits,
// which the last add joins. t is a scratch X register.
#define REDUCE4(a, b, c, d, ax, t) \
	VHADDPS b, a, a; \
	VHADDPS d, c, c; \
	VHADDPS c, a, a; \
	VEXTRACTF128 $1, a, t; \
	VADDPS t, ax, ax

// func f32Rows4Asm(out *[4]float32, w0, w1, w2, w3, x *float32, n int)
TEXT ·f32Rows4Asm(SB), NOSPLIT, $0-56
	MOVQ w0+8(FP), R8
	MOVQ w1+16(FP), R9
	MOVQ w2+24(FP), R10
	MOVQ w3+32(FP), R11
	MOVQ x+40(FP), SI
	MOVQ n+48(FP), CX
	SHLQ $2, CX
	XORQ AX, AX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3

rows4loop:
	VMOVUPS (SI)(AX*1), Y4
	VMULPS  (R8)(AX*1), Y4, Y5
	VADDPS  Y5, Y0, Y0
	VMULPS  (R9)(AX*1), Y4, Y6
	VADDPS  Y6, Y1, Y1
	VMULPS  (R10)(AX*1), Y4, Y7
	VADDPS  Y7, Y2, Y2
	VMULPS  (R11)(AX*1), Y4, Y8
	VADDPS  Y8, Y3, Y3
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     rows4loop

	REDUCE4(Y0, Y1, Y2, Y3, X0, X4)
	MOVQ    out+0(FP), DI
	VMOVUPS X0, (DI)
	VZEROUPPER
	RET

// func f32Tile4x3Asm(out *[12]float32, w0, w1, w2, w3, x0, x1, x2 *float32, n int)
// Accumulator Y(4t+r) holds row r times token t; each weight load feeds
// three tokens.
TEXT ·f32Tile4x3Asm(SB), NOSPLIT, $0-72
	MOVQ w0+8(FP), R8
	MOVQ w1+16(FP), R9
	MOVQ w2+24(FP), R10
	MOVQ w3+32(FP), R11
	MOVQ x0+40(FP), SI
	MOVQ x1+48(FP), DX
	MOVQ x2+56(FP), BX
	MOVQ n+64(FP), CX
	SHLQ $2, CX
	XORQ AX, AX
	VXORPS Y0, Y0, Y0
	VXORPS Y1, Y1, Y1
	VXORPS Y2, Y2, Y2
	VXORPS Y3, Y3, Y3
	VXORPS Y4, Y4, Y4
	VXORPS Y5, Y5, Y5
	VXORPS Y6, Y6, Y6
	VXORPS Y7, Y7, Y7
	VXORPS Y8, Y8, Y8
	VXORPS Y9, Y9, Y9
	VXORPS Y10, Y10, Y10
	VXORPS Y11, Y11, Y11

tileloop:
	VMOVUPS (SI)(AX*1), Y12
	VMOVUPS (DX)(AX*1), Y13
	VMOVUPS (BX)(AX*1), Y14
	VMULPS  (R8)(AX*1), Y12, Y15
	VADDPS  Y15, Y0, Y0
	VMULPS  (R9)(AX*1), Y12, Y15
	VADDPS  Y15, Y1, Y1
	VMULPS  (R10)(AX*1), Y12, Y15
	VADDPS  Y15, Y2, Y2
	VMULPS  (R11)(AX*1), Y12, Y15
	VADDPS  Y15, Y3, Y3
	VMULPS  (R8)(AX*1), Y13, Y15
	VADDPS  Y15, Y4, Y4
	VMULPS  (R9)(AX*1), Y13, Y15
	VADDPS  Y15, Y5, Y5
	VMULPS  (R10)(AX*1), Y13, Y15
	VADDPS  Y15, Y6, Y6
	VMULPS  (R11)(AX*1), Y13, Y15
	VADDPS  Y15, Y7, Y7
	VMULPS  (R8)(AX*1), Y14, Y15
	VADDPS  Y15, Y8, Y8
	VMULPS  (R9)(AX*1), Y14, Y15
	VADDPS  Y15, Y9, Y9
	VMULPS  (R10)(AX*1), Y14, Y15
	VADDPS  Y15, Y10, Y10
	VMULPS  (R11)(AX*1), Y14, Y15
	VADDPS  Y15, Y11, Y11
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     tileloop

	MOVQ    out+0(FP), DI
	REDUCE4(Y0, Y1, Y2, Y3, X0, X15)
	VMOVUPS X0, (DI)
	REDUCE4(Y4, Y5, Y6, Y7, X4, X15)
	VMOVUPS X4, 16(DI)
	REDUCE4(Y8, Y9, Y10, Y11, X8, X15)
	VMOVUPS X8, 32(DI)
	VZEROUPPER
	RET

// func axpyAsm(y *float32, a float32, x *float32, n int)
// y[i] += a*x[i]: a product then a sum per element (no FMA), as axpy.
TEXT ·axpyAsm(SB), NOSPLIT, $0-32
	MOVQ y+0(FP), DI
	VBROADCASTSS a+8(FP), Y0
	MOVQ x+16(FP), SI
	MOVQ n+24(FP), CX
	SHLQ $2, CX
	XORQ AX, AX

axpyloop:
	VMULPS  (SI)(AX*1), Y0, Y1
	VADDPS  (DI)(AX*1), Y1, Y1
	VMOVUPS Y1, (DI)(AX*1)
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     axpyloop
	VZEROUPPER
	RET
