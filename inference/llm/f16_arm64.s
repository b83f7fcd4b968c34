#include "textflag.h"
#include "neon_arm64.h"

// func f16Rows4Asm(out *[4]float32, w0, w1, w2, w3 *uint16, x *float32, n int)
// FCVTL/FCVTL2 widen the halves exactly.
TEXT ·f16Rows4Asm(SB), NOSPLIT, $0-56
	ROWS4ARGS
f16rows4loop:
	VLD1.P 32(R5), [V16.S4, V17.S4]
	VLD1.P 16(R1), [V26.H8]
	VLD1.P 16(R2), [V27.H8]
	VLD1.P 16(R3), [V28.H8]
	VLD1.P 16(R4), [V29.H8]
	FCVTL4S(18, 26); FCVTL2_4S(19, 26)
	FCVTL4S(20, 27); FCVTL2_4S(21, 27)
	FCVTL4S(22, 28); FCVTL2_4S(23, 28)
	FCVTL4S(24, 29); FCVTL2_4S(25, 29)
	ROWS4STEP
	SUBS $1, R6, R6
	BNE f16rows4loop
	ROWS4END
