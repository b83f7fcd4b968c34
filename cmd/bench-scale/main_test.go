package main

import (
	"bytes"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/node/nodetest/scale"
)

func TestBadFlagsAreClearErrors(t *testing.T) {
	for args, want := range map[string]string{
		"--providers 10,x":       `size "x": not a number`,
		"--providers 0":          "size 0 outside",
		"--links 9":              "links 9 outside",
		"--providers 10 surplus": "unexpected arguments",
	} {
		var out, errb bytes.Buffer
		err := run(strings.Fields(args), &out, &errb)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want it to say %q", args, err, want)
		}
	}
}

// TestPlotDrawsEveryCurve plots two synthetic sizes whose curves grow
// apart (so none hides another) and checks the PNG holds each colour.
func TestPlotDrawsEveryCurve(t *testing.T) {
	mk := func(n int, f float64) scale.Result {
		return scale.Result{Providers: n, PerNode: map[string]scale.Rate{"heartbeat": {Msgs: f, Bytes: 100 * math.Pow(f, 1.3), Validated: f}},
			Heartbeat: 100 * time.Microsecond, QuoteMean: time.Duration(f*f) * time.Microsecond, TableBytes: int64(1000 * math.Sqrt(f)),
			Newcomer: time.Duration(math.Cbrt(f)*1000) * time.Millisecond}
	}
	path := filepath.Join(t.TempDir(), "scale.png")
	if err := plot(path, []scale.Result{mk(10, 5), mk(1000, 500)}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != width || b.Dy() != height {
		t.Fatalf("image %v", b)
	}
	for _, s := range curves {
		found := 0
		for y := 0; y < height; y++ {
			for x := 0; x < width; x++ {
				r, g, b, _ := img.At(x, y).RGBA()
				if uint8(r>>8) == s.color.R && uint8(g>>8) == s.color.G && uint8(b>>8) == s.color.B {
					found++
				}
			}
		}
		// The legend swatch alone is about 90 pixels; a curve adds more.
		if found < 200 {
			t.Errorf("curve %q: %d pixels of its colour", s.name, found)
		}
	}
	if err := plot(path, []scale.Result{mk(10, 5)}); err == nil {
		t.Fatal("plotted a single size")
	}
}
