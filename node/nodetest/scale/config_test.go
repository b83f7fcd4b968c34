package scale

import (
	"strings"
	"testing"
)

func TestParseSizes(t *testing.T) {
	got, err := ParseSizes(" 10,100 ,1000")
	if err != nil || len(got) != 3 || got[0] != 10 || got[2] != 1000 {
		t.Fatalf("ParseSizes = %v, %v", got, err)
	}
	for in, want := range map[string]string{"": "not a number", "10,,20": "not a number", "5,-1": "outside", "30000": "outside"} {
		if _, err := ParseSizes(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSizes(%q): %v, want %q", in, err, want)
		}
	}
}

func TestValidateNamesTheField(t *testing.T) {
	c := Defaults(10)
	c.Links = 0
	c.Gateways = 0
	err := c.Validate()
	if err == nil || !strings.Contains(err.Error(), "links 0") || !strings.Contains(err.Error(), "0 gateways") {
		t.Fatalf("Validate: %v", err)
	}
	if err := Defaults(1000).Validate(); err != nil {
		t.Fatalf("defaults invalid: %v", err)
	}
}

// FuzzParseSizes: any input either parses to sizes in range, one per
// comma-separated field, or is refused with an error.
func FuzzParseSizes(f *testing.F) {
	for _, s := range []string{"10,100,1000", "1", "", ",", "20001", " 7 ,8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := ParseSizes(s)
		if err != nil {
			return
		}
		if len(got) != strings.Count(s, ",")+1 {
			t.Fatalf("%q: %d sizes", s, len(got))
		}
		for _, n := range got {
			if n < 1 || n > 20000 {
				t.Fatalf("%q: size %d out of range", s, n)
			}
		}
	})
}
