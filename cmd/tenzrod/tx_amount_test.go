package main

import (
	"strconv"
	"strings"
	"testing"
)

func TestParseMicroUnits(t *testing.T) {
	good := map[string]uint64{
		"1": 1, "250000": 250_000, "1_000_000": 1_000_000, "18446744073709551615": 1<<64 - 1, "007": 7,
	}
	for in, want := range good {
		if got, err := parseMicroUnits(in); err != nil || got != want {
			t.Errorf("parseMicroUnits(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	bad := map[string]string{
		"":                      "empty",
		"0":                     "zero",
		"0_0":                   "zero",
		"-5":                    "negative",
		"1.5":                   "not an integer",
		"1e6":                   "not an integer",
		"1,000":                 "not an integer",
		"+5":                    "not a digit",
		" 5":                    "not a digit",
		"0x10":                  "not a digit",
		"_1":                    "underscore",
		"1_":                    "underscore",
		"1__0":                  "underscore",
		"18446744073709551616":  "exceeds",
		strings.Repeat("9", 65): "characters long",
	}
	for in, want := range bad {
		_, err := parseMicroUnits(in)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("parseMicroUnits(%q) error %v, want one saying %q", in, err, want)
		}
	}
}

// FuzzParseMicroUnits: whatever the text, an accepted amount is > 0 and
// is exactly the integer its digits spell.
func FuzzParseMicroUnits(f *testing.F) {
	for _, s := range []string{"1", "1_000", "-1", "1.5", "18446744073709551615", "18446744073709551616", "", "_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseMicroUnits(s)
		if err != nil {
			return
		}
		if v == 0 {
			t.Fatalf("%q accepted as 0", s)
		}
		want, perr := strconv.ParseUint(strings.ReplaceAll(s, "_", ""), 10, 64)
		if perr != nil || want != v {
			t.Fatalf("%q parsed to %d; strconv says %d, %v", s, v, want, perr)
		}
	})
}
