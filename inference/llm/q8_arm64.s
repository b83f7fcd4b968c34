#include "textflag.h"
#include "neon_arm64.h"

// Q8WIDEN8 widens the eight quants V26.8H (already 16 bits) to floats in
// V28-V29 (SXTL, SXTL2 to 32 bits, SCVTF: exact), multiplies them by x in
// V(x), V(x+1) and adds the products into the accumulator pair V(lo), V(lo+1).
#define Q8WIDEN8(x, lo) \
	SXTL4S(28, 26); SXTL2_4S(29, 26); SCVTF4S(28, 28); SCVTF4S(29, 29); \
	FMUL4S(28, 28, x); FMUL4S(29, 29, (x)+1); FADD4S(lo, lo, 28); FADD4S((lo)+1, (lo)+1, 29)

// Q8ROW adds one row's block of 32 quants at q, eight at a time, into the
// accumulator pair V(lo), V(lo+1).
#define Q8ROW(q, lo) \
	VLD1.P 32(q), [V24.B16, V25.B16]; \
	SXTL8H(26, 24); Q8WIDEN8(16, lo); \
	SXTL2_8H(26, 24); Q8WIDEN8(18, lo); \
	SXTL8H(26, 25); Q8WIDEN8(20, lo); \
	SXTL2_8H(26, 25); Q8WIDEN8(22, lo)

// func q8Rows4Asm(out *[4]float32, q0, q1, q2, q3 *int8, d0, d1, d2, d3 *float32, x *float32, nb int)
// Per block: x in V16-V23; each row's 32 quants widened (SXTL, SXTL2 to
// 16 then 32 bits, SCVTF: exact) eight at a time into its accumulator
// pair; the four block sums [V30] times the scales [V24], added to V15.
TEXT ·q8Rows4Asm(SB), NOSPLIT, $0-88
	MOVD q0+8(FP), R1
	MOVD q1+16(FP), R2
	MOVD q2+24(FP), R3
	MOVD q3+32(FP), R4
	MOVD d0+40(FP), R7
	MOVD d1+48(FP), R8
	MOVD d2+56(FP), R9
	MOVD d3+64(FP), R10
	MOVD x+72(FP), R5
	MOVD nb+80(FP), R6
	VZERO(V15)
q8rows4block:
	VZERO0TO7
	VLD1.P 64(R5), [V16.S4, V17.S4, V18.S4, V19.S4]
	VLD1.P 64(R5), [V20.S4, V21.S4, V22.S4, V23.S4]
	Q8ROW(R1, 0)
	Q8ROW(R2, 2)
	Q8ROW(R3, 4)
	Q8ROW(R4, 6)
	REDUCE4(0, 1, 2, 3, 4, 5, 6, 7, 24)
	FMOVS.P 4(R7), F24
	FMOVS.P 4(R8), F25
	FMOVS.P 4(R9), F26
	FMOVS.P 4(R10), F27
	INSS(24, 1, 25); INSS(24, 2, 26); INSS(24, 3, 27)
	FMUL4S(30, 30, 24)
	FADD4S(15, 15, 30)
	SUBS $1, R6, R6
	BNE q8rows4block
	MOVD out+0(FP), R0
	VST1 [V15.S4], (R0)
	RET

// Q8TILESTEP is one step of 8 weights: the four tokens' x in V16-V23, the
// two rows' quants widened into V25-V26 and V28-V29, and the eight
// products of each row with each token (V30-V31) added into V0-V15.
#define Q8TILESTEP \
	VLD1.P 32(R5), [V16.S4, V17.S4]; \
	VLD1.P 32(R6), [V18.S4, V19.S4]; \
	VLD1.P 32(R7), [V20.S4, V21.S4]; \
	VLD1.P 32(R8), [V22.S4, V23.S4]; \
	VLD1.P 8(R1), [V24.B8]; \
	SXTL8H(24, 24); SXTL4S(25, 24); SXTL2_4S(26, 24); SCVTF4S(25, 25); SCVTF4S(26, 26); \
	VLD1.P 8(R2), [V27.B8]; \
	SXTL8H(27, 27); SXTL4S(28, 27); SXTL2_4S(29, 27); SCVTF4S(28, 28); SCVTF4S(29, 29); \
	Q8TILEMAC(25, 16, 0); Q8TILEMAC(25, 18, 2); Q8TILEMAC(25, 20, 4); Q8TILEMAC(25, 22, 6); \
	Q8TILEMAC(28, 16, 8); Q8TILEMAC(28, 18, 10); Q8TILEMAC(28, 20, 12); Q8TILEMAC(28, 22, 14)

// Q8TILEMAC adds the products of the row in V(w), V(w+1) and the token in
// V(x), V(x+1) into the accumulator pair V(lo), V(lo+1).
#define Q8TILEMAC(w, x, lo) \
	FMUL4S(30, w, x); FMUL4S(31, (w)+1, (x)+1); FADD4S(lo, lo, 30); FADD4S((lo)+1, (lo)+1, 31)

// Q8TILESCALE reduces the four outputs of accumulators V(a) .. V(a+7)
// and scales them by the row's scale at d, into V22.
#define Q8TILESCALE(a, d) \
	REDUCE4(a, (a)+1, (a)+2, (a)+3, (a)+4, (a)+5, (a)+6, (a)+7, 16); \
	FMOVS.P 4(d), F23; \
	DUP4S(23, 23); \
	FMUL4S(22, 22, 23)

// Q8TILEADD adds V22 to the four floats at p.
#define Q8TILEADD(p) \
	VLD1 (p), [V24.S4]; \
	FADD4S(24, 24, 22); \
	VST1 [V24.S4], (p)

// func q8Tile2x4Asm(out *[8]float32, q0, q1 *int8, d0, d1 *float32, x0, x1, x2, x3 *float32, nb int)
// Per step of 8 weights: the four tokens' x in V16-V23, the two rows'
// widened quants in V25-V26 and V28-V29, products in V30-V31, the 16
// accumulators in V0-V15. The row totals live in out (no register is left).
TEXT ·q8Tile2x4Asm(SB), NOSPLIT, $0-80
	MOVD out+0(FP), R0
	MOVD q0+8(FP), R1
	MOVD q1+16(FP), R2
	MOVD d0+24(FP), R3
	MOVD d1+32(FP), R4
	MOVD x0+40(FP), R5
	MOVD x1+48(FP), R6
	MOVD x2+56(FP), R7
	MOVD x3+64(FP), R8
	MOVD nb+72(FP), R9
	VZERO(V16)
	VZERO(V17)
	VST1 [V16.S4, V17.S4], (R0)
q8tileblock:
	VZERO0TO7
	VZERO(V8); VZERO(V9); VZERO(V10); VZERO(V11); VZERO(V12); VZERO(V13); VZERO(V14); VZERO(V15)
	Q8TILESTEP
	Q8TILESTEP
	Q8TILESTEP
	Q8TILESTEP
	Q8TILESCALE(0, R3)
	Q8TILEADD(R0)
	Q8TILESCALE(8, R4)
	ADD $16, R0, R10
	Q8TILEADD(R10)
	SUBS $1, R9, R9
	BNE q8tileblock
	RET
