#include "textflag.h"
#include "neon_arm64.h"

// func f32Rows4Asm(out *[4]float32, w0, w1, w2, w3, x *float32, n int)
TEXT ·f32Rows4Asm(SB), NOSPLIT, $0-56
	ROWS4ARGS
f32rows4loop:
	VLD1.P 32(R5), [V16.S4, V17.S4]
	VLD1.P 32(R1), [V18.S4, V19.S4]
	VLD1.P 32(R2), [V20.S4, V21.S4]
	VLD1.P 32(R3), [V22.S4, V23.S4]
	VLD1.P 32(R4), [V24.S4, V25.S4]
	ROWS4STEP
	SUBS $1, R6, R6
	BNE f32rows4loop
	ROWS4END

// TILE4X3STEP loads 4 lanes of the three tokens' x (V24-V26) and of the
// four rows (V27-V30) and adds their twelve products (each in V31) into
// the accumulators V(a) .. V(a+11), token-major.
#define TILE4X3STEP(a) \
	VLD1.P 16(R5), [V24.S4]; \
	VLD1.P 16(R6), [V25.S4]; \
	VLD1.P 16(R7), [V26.S4]; \
	VLD1.P 16(R1), [V27.S4]; \
	VLD1.P 16(R2), [V28.S4]; \
	VLD1.P 16(R3), [V29.S4]; \
	VLD1.P 16(R4), [V30.S4]; \
	FMUL4S(31, 27, 24); FADD4S(a, a, 31); \
	FMUL4S(31, 28, 24); FADD4S((a)+1, (a)+1, 31); \
	FMUL4S(31, 29, 24); FADD4S((a)+2, (a)+2, 31); \
	FMUL4S(31, 30, 24); FADD4S((a)+3, (a)+3, 31); \
	FMUL4S(31, 27, 25); FADD4S((a)+4, (a)+4, 31); \
	FMUL4S(31, 28, 25); FADD4S((a)+5, (a)+5, 31); \
	FMUL4S(31, 29, 25); FADD4S((a)+6, (a)+6, 31); \
	FMUL4S(31, 30, 25); FADD4S((a)+7, (a)+7, 31); \
	FMUL4S(31, 27, 26); FADD4S((a)+8, (a)+8, 31); \
	FMUL4S(31, 28, 26); FADD4S((a)+9, (a)+9, 31); \
	FMUL4S(31, 29, 26); FADD4S((a)+10, (a)+10, 31); \
	FMUL4S(31, 30, 26); FADD4S((a)+11, (a)+11, 31)

// TILE4X3OUT stores four outputs whose lanes 0-3 are in V(a) .. V(a+3)
// and lanes 4-7 in V(a+12) .. V(a+15), advancing R0.
#define TILE4X3OUT(a) \
	REDUCE4(a, (a)+12, (a)+1, (a)+13, (a)+2, (a)+14, (a)+3, (a)+15, 24); \
	VST1.P [V30.S4], 16(R0)

// func f32Tile4x3Asm(out *[12]float32, w0, w1, w2, w3, x0, x1, x2 *float32, n int)
// Lanes 0-3 of all twelve outputs, then lanes 4-7: 24 accumulators, the
// three tokens' x in V24-V26, the rows in V27-V30, products in V31.
TEXT ·f32Tile4x3Asm(SB), NOSPLIT, $0-72
	MOVD w0+8(FP), R1
	MOVD w1+16(FP), R2
	MOVD w2+24(FP), R3
	MOVD w3+32(FP), R4
	MOVD x0+40(FP), R5
	MOVD x1+48(FP), R6
	MOVD x2+56(FP), R7
	MOVD n+64(FP), R8
	LSR $3, R8, R8
	VZERO0TO7
	VZERO(V8); VZERO(V9); VZERO(V10); VZERO(V11); VZERO(V12); VZERO(V13); VZERO(V14); VZERO(V15)
	VZERO(V16); VZERO(V17); VZERO(V18); VZERO(V19); VZERO(V20); VZERO(V21); VZERO(V22); VZERO(V23)
f32tileloop:
	TILE4X3STEP(0)
	TILE4X3STEP(12)
	SUBS $1, R8, R8
	BNE f32tileloop
	MOVD out+0(FP), R0
	TILE4X3OUT(0)
	TILE4X3OUT(4)
	TILE4X3OUT(8)
	RET
