package main

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/spf13/pflag"
)

// maxAmountText bounds the text of an amount: 2^64-1 has 20 digits, and
// underscores may separate digit groups.
const maxAmountText = 64

// parseMicroUnits parses an amount of integer micro-units > 0. Underscores
// may group digits ("1_000_000"); anything else that is not a digit (a
// sign, a decimal point, an exponent, spaces) is refused, because a
// silently rounded or truncated amount is money sent that nobody meant.
func parseMicroUnits(s string) (uint64, error) {
	switch {
	case s == "":
		return 0, errors.New("empty; want an integer number of micro-units > 0")
	case len(s) > maxAmountText:
		return 0, fmt.Errorf("%d characters long; want an integer number of micro-units below 2^64", len(s))
	case strings.HasPrefix(s, "-"):
		return 0, fmt.Errorf("%q is negative; want an integer number of micro-units > 0", s)
	case strings.ContainsAny(s, ".,eE"):
		return 0, fmt.Errorf("%q is not an integer; amounts are whole micro-units (no decimals or exponents)", s)
	}
	var v uint64
	prevDigit := false
	for i, r := range s {
		if r == '_' {
			if !prevDigit || i == len(s)-1 {
				return 0, fmt.Errorf("%q: an underscore may only stand between digits", s)
			}
			prevDigit = false
			continue
		}
		if r < '0' || r > '9' {
			return 0, fmt.Errorf("%q: %q is not a digit; want an integer number of micro-units > 0", s, r)
		}
		d := uint64(r - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, fmt.Errorf("%q exceeds the largest amount, %d micro-units", s, uint64(math.MaxUint64))
		}
		v = v*10 + d
		prevDigit = true
	}
	if v == 0 {
		return 0, fmt.Errorf("%q is zero; want an amount > 0", s)
	}
	return v, nil
}

// amountFlag is a pflag.Value of micro-units: pflag reports a parse error
// as `invalid argument "1.5" for "--amount" flag: …`, naming the flag.
type amountFlag struct {
	v   uint64
	set bool
}

var _ pflag.Value = (*amountFlag)(nil)

func (a *amountFlag) String() string {
	if !a.set {
		return ""
	}
	return fmt.Sprint(a.v)
}

func (a *amountFlag) Set(s string) error {
	v, err := parseMicroUnits(s)
	if err != nil {
		return err
	}
	a.v, a.set = v, true
	return nil
}

func (a *amountFlag) Type() string { return "micro-units" }

// required returns the amount, or an error naming the flag when it was not
// given.
func (a *amountFlag) required(flag string) (uint64, error) {
	if !a.set {
		return 0, fmt.Errorf("--%s is required (an integer number of micro-units > 0)", flag)
	}
	return a.v, nil
}
