// NEON kernels, in the order of dot and dotQ8 (ops.go, q8.go): the 8-lane
// accumulator of one output is a pair of 4-lane registers (lanes 0-3, 4-7);
// products and sums are separate FMUL and FADD (never FMLA); the reduction
// ((s0+s1)+(s2+s3))+((s4+s5)+(s6+s7)) is three rounds of FADDP:
// faddp(lo, hi) = [s0+s1, s2+s3, s4+s5, s6+s7], and pairing two such
// results twice more gives [o0, o1, o2, o3] for four outputs. Go's arm64
// assembler has no mnemonics for these vector floating-point instructions,
// so they are WORD encodings; the macros below build each from its register
// numbers (d destination, n and m sources), so that an encoding is written
// once and the kernels read as the instructions they are.
// Lengths: n is a positive multiple of 8, nb a positive count of
// 32-weight blocks (the Go wrappers check).

// FADD Vd.4S, Vn.4S, Vm.4S
#define FADD4S(d, n, m) WORD $(0x4e20d400 | ((m)<<16) | ((n)<<5) | (d))
// FMUL Vd.4S, Vn.4S, Vm.4S
#define FMUL4S(d, n, m) WORD $(0x6e20dc00 | ((m)<<16) | ((n)<<5) | (d))
// FADDP Vd.4S, Vn.4S, Vm.4S
#define FADDP4S(d, n, m) WORD $(0x6e20d400 | ((m)<<16) | ((n)<<5) | (d))
// SCVTF Vd.4S, Vn.4S
#define SCVTF4S(d, n) WORD $(0x4e21d800 | ((n)<<5) | (d))
// SXTL Vd.8H, Vn.8B and SXTL2 Vd.8H, Vn.16B
#define SXTL8H(d, n) WORD $(0x0f08a400 | ((n)<<5) | (d))
#define SXTL2_8H(d, n) WORD $(0x4f08a400 | ((n)<<5) | (d))
// SXTL Vd.4S, Vn.4H and SXTL2 Vd.4S, Vn.8H
#define SXTL4S(d, n) WORD $(0x0f10a400 | ((n)<<5) | (d))
#define SXTL2_4S(d, n) WORD $(0x4f10a400 | ((n)<<5) | (d))
// FCVTL Vd.4S, Vn.4H and FCVTL2 Vd.4S, Vn.8H
#define FCVTL4S(d, n) WORD $(0x0e217800 | ((n)<<5) | (d))
#define FCVTL2_4S(d, n) WORD $(0x4e217800 | ((n)<<5) | (d))
// DUP Vd.4S, Vn.S[0]
#define DUP4S(d, n) WORD $(0x4e040400 | ((n)<<5) | (d))
// INS Vd.S[i], Vn.S[0]
#define INSS(d, i, n) WORD $(0x6e000400 | ((((i)<<3)|4)<<16) | ((n)<<5) | (d))

#define VZERO(r) VEOR r.B16, r.B16, r.B16
#define VZERO0TO7 VZERO(V0); VZERO(V1); VZERO(V2); VZERO(V3); VZERO(V4); VZERO(V5); VZERO(V6); VZERO(V7)

// REDUCE4 folds four outputs' accumulator pairs (a0,a1) .. (a6,a7) into
// [o0, o1, o2, o3] in V(t+6), using V(t) .. V(t+5) for the rounds between.
#define REDUCE4(a0, a1, a2, a3, a4, a5, a6, a7, t) \
	FADDP4S(t, a0, a1); FADDP4S((t)+1, a2, a3); FADDP4S((t)+2, a4, a5); FADDP4S((t)+3, a6, a7); \
	FADDP4S((t)+4, t, (t)+1); FADDP4S((t)+5, (t)+2, (t)+3); FADDP4S((t)+6, (t)+4, (t)+5)

// ROWS4ARGS loads the arguments of a rows4 kernel (out, w0-w3, x, n):
// rows in R1-R4, x in R5, the count of 8-weight steps in R6, and clears
// the accumulators V0-V7.
#define ROWS4ARGS \
	MOVD w0+8(FP), R1; \
	MOVD w1+16(FP), R2; \
	MOVD w2+24(FP), R3; \
	MOVD w3+32(FP), R4; \
	MOVD x+40(FP), R5; \
	MOVD n+48(FP), R6; \
	LSR $3, R6, R6; \
	VZERO0TO7

// ROWS4STEP multiplies four rows' 8 widened weights in V18-V25 by x in
// V16-V17 and adds the products into the accumulator pairs V0-V7.
#define ROWS4STEP \
	FMUL4S(18, 18, 16); FMUL4S(19, 19, 17); FMUL4S(20, 20, 16); FMUL4S(21, 21, 17); \
	FMUL4S(22, 22, 16); FMUL4S(23, 23, 17); FMUL4S(24, 24, 16); FMUL4S(25, 25, 17); \
	FADD4S(0, 0, 18); FADD4S(1, 1, 19); FADD4S(2, 2, 20); FADD4S(3, 3, 21); \
	FADD4S(4, 4, 22); FADD4S(5, 5, 23); FADD4S(6, 6, 24); FADD4S(7, 7, 25)

// ROWS4END stores the four outputs of the accumulators V0-V7 at out.
#define ROWS4END \
	REDUCE4(0, 1, 2, 3, 4, 5, 6, 7, 8); \
	MOVD out+0(FP), R0; \
	VST1 [V14.S4], (R0); \
	RET
