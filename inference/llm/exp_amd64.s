#include "textflag.h"

// expDet (detmath.go) on four float64 lanes with AVX2, every step the same
// IEEE operation in the same order (VMULPD and VADDPD kept apart, never
// fused; VDIVPD and the truncating VCVTTPD2DQ are exact as in Go), so each
// lane gives expDet's bits. Only the main path: the Go wrapper recomputes
// lanes whose input is outside nearZero <= |x| <= 690 (where expDet
// branches) with the scalar code. c points at expConsts.

// func expDet4Asm(dst, src *float64, n int, c *[16]float64)
TEXT ·expDet4Asm(SB), NOSPLIT, $0-32
	MOVQ dst+0(FP), DI
	MOVQ src+8(FP), SI
	MOVQ n+16(FP), CX
	MOVQ c+24(FP), DX
	VBROADCASTSD 0(DX), Y8    // log2e
	VBROADCASTSD 8(DX), Y9    // ln2Hi
	VBROADCASTSD 16(DX), Y10  // ln2Lo
	VBROADCASTSD 64(DX), Y11  // sign mask
	VBROADCASTSD 72(DX), Y12  // 0.5
	VBROADCASTSD 80(DX), Y13  // 2
	VBROADCASTSD 88(DX), Y14  // 1
	VPBROADCASTQ 96(DX), Y15  // int64 1023
	XORQ AX, AX

exploop:
	VMOVUPD (SI)(AX*8), Y0            // x
	VMULPD  Y8, Y0, Y1                // log2e*x
	VANDPD  Y11, Y0, Y2
	VORPD   Y12, Y2, Y2               // ±0.5 with x's sign
	VADDPD  Y2, Y1, Y1
	VCVTTPD2DQY Y1, X3                // k, truncated
	VCVTDQ2PD X3, Y4                  // float64(k)
	VMULPD  Y9, Y4, Y5
	VSUBPD  Y5, Y0, Y5                // hi = x - k*ln2Hi
	VMULPD  Y10, Y4, Y6               // lo = k*ln2Lo
	VSUBPD  Y6, Y5, Y7                // r = hi - lo
	VMULPD  Y7, Y7, Y1                // t = r*r
	VBROADCASTSD 56(DX), Y2           // p5
	VMULPD  Y2, Y1, Y2                // t*p5
	VBROADCASTSD 48(DX), Y4
	VADDPD  Y2, Y4, Y2                // p4 + .
	VMULPD  Y2, Y1, Y2                // t*.
	VBROADCASTSD 40(DX), Y4
	VADDPD  Y2, Y4, Y2                // p3 + .
	VMULPD  Y2, Y1, Y2
	VBROADCASTSD 32(DX), Y4
	VADDPD  Y2, Y4, Y2                // p2 + .
	VMULPD  Y2, Y1, Y2
	VBROADCASTSD 24(DX), Y4
	VADDPD  Y2, Y4, Y2                // p1 + .
	VMULPD  Y2, Y1, Y2                // t*.
	VSUBPD  Y2, Y7, Y2                // c = r - .
	VMULPD  Y2, Y7, Y1                // r*c
	VSUBPD  Y2, Y13, Y4               // 2 - c
	VDIVPD  Y4, Y1, Y1                // r*c/(2-c)
	VSUBPD  Y1, Y6, Y1                // lo - .
	VSUBPD  Y5, Y1, Y1                // . - hi
	VSUBPD  Y1, Y14, Y1               // y = 1 - .
	VPMOVSXDQ X3, Y3                  // k as int64
	VPADDQ  Y15, Y3, Y3
	VPSLLQ  $52, Y3, Y3               // 2**k
	VMULPD  Y3, Y1, Y1
	VMOVUPD Y1, (DI)(AX*8)
	ADDQ    $4, AX
	CMPQ    AX, CX
	JLT     exploop
	VZEROUPPER
	RET
