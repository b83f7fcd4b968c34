#include "textflag.h"
#include "avx_amd64.h"

// F32 dot products with AVX2, in the order of dot (ops.go): each output is
// one 8-lane accumulator reduced by REDUCE4 (avx_amd64.h). n is a
// positive multiple of 8.

// func f32Rows4Asm(out *[4]float32, w0, w1, w2, w3, x *float32, n int)
TEXT ·f32Rows4Asm(SB), NOSPLIT, $0-56
	ROWS4ARGS(2)
	ZERO4Y

rows4loop:
	DOT4STEP
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
	TILE4X3ARGS
	ZERO4Y
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
