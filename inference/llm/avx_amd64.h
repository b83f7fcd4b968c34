// Pieces the AVX2 and AVX-512 kernels share. Every kernel follows dot's
// order (ops.go): each output is one 8-lane accumulator (VMULPS then
// VADDPS, never fused) reduced as ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)).

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

#define ZERO4Y \
	VXORPS Y0, Y0, Y0; \
	VXORPS Y1, Y1, Y1; \
	VXORPS Y2, Y2, Y2; \
	VXORPS Y3, Y3, Y3

// DOT4STEP adds the products of 8 floats of x at SI and of the rows at
// R8-R11, all at byte offset AX, into Y0-Y3.
#define DOT4STEP \
	VMOVUPS (SI)(AX*1), Y4; \
	VMULPS  (R8)(AX*1), Y4, Y5; \
	VADDPS  Y5, Y0, Y0; \
	VMULPS  (R9)(AX*1), Y4, Y6; \
	VADDPS  Y6, Y1, Y1; \
	VMULPS  (R10)(AX*1), Y4, Y7; \
	VADDPS  Y7, Y2, Y2; \
	VMULPS  (R11)(AX*1), Y4, Y8; \
	VADDPS  Y8, Y3, Y3

// ROWS4ARGS loads the arguments of a rows4 kernel (out, w0-w3, x, n):
// rows in R8-R11, x in SI, the byte length of a row (n << shift) in CX
// and offset 0 in AX.
#define ROWS4ARGS(shift) \
	MOVQ w0+8(FP), R8; \
	MOVQ w1+16(FP), R9; \
	MOVQ w2+24(FP), R10; \
	MOVQ w3+32(FP), R11; \
	MOVQ x+40(FP), SI; \
	MOVQ n+48(FP), CX; \
	SHLQ $shift, CX; \
	XORQ AX, AX

// TILE4X3ARGS loads the arguments of an f32 4x3 tile kernel: rows in
// R8-R11, tokens in SI, DX, BX, the byte length in CX, offset 0 in AX.
#define TILE4X3ARGS \
	MOVQ w0+8(FP), R8; \
	MOVQ w1+16(FP), R9; \
	MOVQ w2+24(FP), R10; \
	MOVQ w3+32(FP), R11; \
	MOVQ x0+40(FP), SI; \
	MOVQ x1+48(FP), DX; \
	MOVQ x2+56(FP), BX; \
	MOVQ n+64(FP), CX; \
	SHLQ $2, CX; \
	XORQ AX, AX

// Q8TILEARGS loads the arguments of a Q8_0 2x4 tile kernel: quants in
// R8-R9, scales in R10-R11, tokens in SI, DX, BX, R12, the quant length in
// CX, quant offset 0 in AX and scale offset 0 in DI.
#define Q8TILEARGS \
	MOVQ q0+8(FP), R8; \
	MOVQ q1+16(FP), R9; \
	MOVQ d0+24(FP), R10; \
	MOVQ d1+32(FP), R11; \
	MOVQ x0+40(FP), SI; \
	MOVQ x1+48(FP), DX; \
	MOVQ x2+56(FP), BX; \
	MOVQ x3+64(FP), R12; \
	MOVQ nb+72(FP), CX; \
	SHLQ $5, CX; \
	XORQ AX, AX; \
	XORQ DI, DI
