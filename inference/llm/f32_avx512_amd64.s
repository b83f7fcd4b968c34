#include "textflag.h"
#include "avx_amd64.h"

// The F32 prefill tile (4 rows x 3 tokens) with AVX-512: a Z register holds
// two rows' 8-lane accumulators for one token (rows 0|1 or 2|3 in its two
// halves), so each multiply and add serves two outputs. Per lane the
// operations are dot's: VMULPS then VADDPS (no FMA), in element order; the
// halves are then reduced by REDUCE4 (avx_amd64.h).

// func f32Tile4x3AVX512Asm(out *[12]float32, w0, w1, w2, w3, x0, x1, x2 *float32, n int)
// Z(2t) accumulates rows 0|1 times token t, Z(2t+1) rows 2|3.
TEXT ·f32Tile4x3AVX512Asm(SB), NOSPLIT, $0-72
	TILE4X3ARGS
	VPXORD Z0, Z0, Z0
	VPXORD Z1, Z1, Z1
	VPXORD Z2, Z2, Z2
	VPXORD Z3, Z3, Z3
	VPXORD Z4, Z4, Z4
	VPXORD Z5, Z5, Z5

ztileloop:
	VMOVUPS         (R8)(AX*1), Y6
	VINSERTF32X8    $1, (R9)(AX*1), Z6, Z6
	VMOVUPS         (R10)(AX*1), Y7
	VINSERTF32X8    $1, (R11)(AX*1), Z7, Z7
	VBROADCASTF32X8 (SI)(AX*1), Z8
	VBROADCASTF32X8 (DX)(AX*1), Z9
	VBROADCASTF32X8 (BX)(AX*1), Z10
	VMULPS          Z8, Z6, Z11
	VADDPS          Z11, Z0, Z0
	VMULPS          Z8, Z7, Z12
	VADDPS          Z12, Z1, Z1
	VMULPS          Z9, Z6, Z13
	VADDPS          Z13, Z2, Z2
	VMULPS          Z9, Z7, Z14
	VADDPS          Z14, Z3, Z3
	VMULPS          Z10, Z6, Z15
	VADDPS          Z15, Z4, Z4
	VMULPS          Z10, Z7, Z16
	VADDPS          Z16, Z5, Z5
	ADDQ            $32, AX
	CMPQ            AX, CX
	JLT             ztileloop

	MOVQ          out+0(FP), DI
	VEXTRACTF32X8 $1, Z0, Y12
	VEXTRACTF32X8 $1, Z1, Y13
	REDUCE4(Y0, Y12, Y1, Y13, X0, X14)
	VMOVUPS       X0, (DI)
	VEXTRACTF32X8 $1, Z2, Y12
	VEXTRACTF32X8 $1, Z3, Y13
	REDUCE4(Y2, Y12, Y3, Y13, X2, X14)
	VMOVUPS       X2, 16(DI)
	VEXTRACTF32X8 $1, Z4, Y12
	VEXTRACTF32X8 $1, Z5, Y13
	REDUCE4(Y4, Y12, Y5, Y13, X4, X14)
	VMOVUPS       X4, 32(DI)
	VZEROUPPER
	RET
