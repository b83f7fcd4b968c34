#include "textflag.h"
#include "avx_amd64.h"

// Attention inner loops with AVX2, whole rows of positions per call (one
// call per position cost more than the arithmetic at head sizes of 32-128).
// Same operations as the per-position kernels: scores are dot's 8-lane
// accumulation and reduction (avx_amd64.h), the weighted sum of values is
// axpy's product-then-sum per element, positions in order.

// func scoresAsm(out, q, k *float32, stride, np, n int)
// out[p] = dot(q[:n], k[p*stride:][:n]) for p < np; np%4 == 0, n%8 == 0,
// stride in elements.
TEXT ·scoresAsm(SB), NOSPLIT, $0-48
	MOVQ out+0(FP), DI
	MOVQ q+8(FP), SI
	MOVQ k+16(FP), R8
	MOVQ stride+24(FP), DX
	SHLQ $2, DX
	MOVQ np+32(FP), BX
	MOVQ n+40(FP), CX
	SHLQ $2, CX

scoregroup:
	LEAQ (R8)(DX*1), R9
	LEAQ (R8)(DX*2), R10
	LEAQ (R9)(DX*2), R11
	XORQ AX, AX
	ZERO4Y

scoreloop:
	DOT4STEP
	ADDQ    $32, AX
	CMPQ    AX, CX
	JLT     scoreloop

	REDUCE4(Y0, Y1, Y2, Y3, X0, X4)
	VMOVUPS X0, (DI)
	ADDQ    $16, DI
	LEAQ    (R10)(DX*2), R8
	SUBQ    $4, BX
	JGT     scoregroup
	VZEROUPPER
	RET

// func wsum32Asm(o, w, v *float32, stride, np int)
// o[:32] = sum over p < np, in order, of w[p]*v[p*stride:][:32], starting
// from zero; np > 0, stride in elements.
TEXT ·wsum32Asm(SB), NOSPLIT, $0-40
	MOVQ o+0(FP), DI
	MOVQ w+8(FP), SI
	MOVQ v+16(FP), R8
	MOVQ stride+24(FP), DX
	SHLQ $2, DX
	MOVQ np+32(FP), CX
	XORQ AX, AX
	ZERO4Y

wsumloop:
	VBROADCASTSS (SI)(AX*4), Y4
	VMULPS  (R8), Y4, Y5
	VADDPS  Y5, Y0, Y0
	VMULPS  32(R8), Y4, Y6
	VADDPS  Y6, Y1, Y1
	VMULPS  64(R8), Y4, Y7
	VADDPS  Y7, Y2, Y2
	VMULPS  96(R8), Y4, Y8
	VADDPS  Y8, Y3, Y3
	ADDQ    DX, R8
	INCQ    AX
	CMPQ    AX, CX
	JLT     wsumloop

	VMOVUPS Y0, (DI)
	VMOVUPS Y1, 32(DI)
	VMOVUPS Y2, 64(DI)
	VMOVUPS Y3, 96(DI)
	VZEROUPPER
	RET
