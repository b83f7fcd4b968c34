package commit

// Prime is the field modulus: the largest prime below 2^16, so every field
// element fits in two bytes.
const Prime = 65521

func mulmod(a, b uint32) uint32 { return a * b % Prime }

func addmod(a, b uint32) uint32 { return (a + b) % Prime }

func submod(a, b uint32) uint32 { return (a + Prime - b) % Prime }

func powmod(a, e uint32) uint32 {
	r := uint32(1)
	for a %= Prime; e > 0; e >>= 1 {
		if e&1 == 1 {
			r = mulmod(r, a)
		}
		a = mulmod(a, a)
	}
	return r
}

func invmod(a uint32) uint32 { return powmod(a, Prime-2) }

// interpolate returns the coefficients (lowest degree first) of the unique
// polynomial of degree < len(xs) through the points (xs[i], ys[i]); the xs
// must be distinct field elements.
func interpolate(xs, ys []uint32) []uint32 {
	n := len(xs)
	c := append([]uint32(nil), ys...)
	for j := 1; j < n; j++ {
		for i := n - 1; i >= j; i-- {
			c[i] = mulmod(submod(c[i], c[i-1]), invmod(submod(xs[i], xs[i-j])))
		}
	}
	// Newton form -> monomial basis (Horner on the nested form).
	coef := make([]uint32, n)
	coef[0] = c[n-1]
	deg := 0
	for k := n - 2; k >= 0; k-- {
		// coef = coef * (x - xs[k]) + c[k]
		deg++
		for d := deg; d >= 1; d-- {
			coef[d] = submod(coef[d-1], mulmod(coef[d], xs[k]))
		}
		coef[0] = addmod(submod(0, mulmod(coef[0], xs[k])), c[k])
	}
	return coef
}

// evaluate returns the polynomial's value at x.
func evaluate(coef []uint16, x uint32) uint32 {
	var y uint32
	for i := len(coef) - 1; i >= 0; i-- {
		y = addmod(mulmod(y, x), uint32(coef[i]))
	}
	return y
}
