package commit

// f16Parts splits half-precision bits into exponent and mantissa.
func f16Parts(h uint16) (exp, mant int) { return int(h>>10) & 0x1f, int(h & 0x3ff) }
