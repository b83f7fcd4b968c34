#include "textflag.h"
#include "avx_amd64.h"

// F16 dot products with AVX2 and F16C: VCVTPH2PS widens eight halves
// exactly, then the products and sums follow dot's order (see
// f32_amd64.s). n is a positive multiple of 8.

// func f16Rows4Asm(out *[4]float32, w0, w1, w2, w3 *uint16, x *float32, n int)
TEXT ·f16Rows4Asm(SB), NOSPLIT, $0-56
	ROWS4ARGS(1)
	ZERO4Y
	// The next four rows follow row 3: fetch them ahead, a line per step.
	LEAQ (R11)(CX*1), R12

f16loop:
	PREFETCHT0 (R12)(AX*4)
	VMOVUPS   (SI)(AX*2), Y4
	VCVTPH2PS (R8)(AX*1), Y5
	VMULPS    Y4, Y5, Y5
	VADDPS    Y5, Y0, Y0
	VCVTPH2PS (R9)(AX*1), Y6
	VMULPS    Y4, Y6, Y6
	VADDPS    Y6, Y1, Y1
	VCVTPH2PS (R10)(AX*1), Y7
	VMULPS    Y4, Y7, Y7
	VADDPS    Y7, Y2, Y2
	VCVTPH2PS (R11)(AX*1), Y8
	VMULPS    Y4, Y8, Y8
	VADDPS    Y8, Y3, Y3
	ADDQ      $16, AX
	CMPQ      AX, CX
	JLT       f16loop

	REDUCE4(Y0, Y1, Y2, Y3, X0, X4)
	MOVQ    out+0(FP), DI
	VMOVUPS X0, (DI)
	VZEROUPPER
	RET
