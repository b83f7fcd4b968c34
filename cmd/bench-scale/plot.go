package main

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"math"
	"os"

	"github.com/tenzrod/tenzrod/node/nodetest/scale"
)

// series is one curve: a value per result, plotted relative to its value
// at the smallest size, so curves of different units share the axes and
// their slopes read as growth exponents against the linear reference.
type series struct {
	name  string
	color color.RGBA
	value func(scale.Result) float64
}

var curves = []series{
	{"gossip bytes/s per node", color.RGBA{0x1f, 0x77, 0xb4, 0xff}, func(r scale.Result) float64 {
		var b float64
		for _, x := range r.PerNode {
			b += x.Bytes
		}
		return b
	}},
	{"heartbeat validation cpu", color.RGBA{0xd6, 0x27, 0x28, 0xff}, func(r scale.Result) float64 {
		return r.PerNode["heartbeat"].Validated * r.Heartbeat.Seconds()
	}},
	{"quote+rank per request", color.RGBA{0x2c, 0xa0, 0x2c, 0xff}, func(r scale.Result) float64 { return float64(r.QuoteMean + r.RankMean) }},
	{"provider table memory", color.RGBA{0x94, 0x67, 0xbd, 0xff}, func(r scale.Result) float64 { return float64(r.TableBytes) }},
	{"newcomer time", color.RGBA{0xff, 0x7f, 0x0e, 0xff}, func(r scale.Result) float64 { return r.Newcomer.Seconds() }},
}

const (
	width, height = 960, 640
	left, right   = 90, 30
	top, bottom   = 40, 70
)

// plot draws every curve over the results' sizes as a log-log PNG.
func plot(path string, rs []scale.Result) error {
	var pts []scale.Result
	for _, r := range rs {
		// A size that did not converge still has its rates; its missing
		// figures (zero) are skipped curve by curve.
		if !r.LibraryQueues {
			pts = append(pts, r)
		}
	}
	if len(pts) < 2 {
		return errors.New("need at least two sizes to plot")
	}
	x0, x1 := float64(pts[0].Providers), float64(pts[len(pts)-1].Providers)
	if x1 <= x0 {
		return errors.New("sizes must increase to plot")
	}
	yMax := x1 / x0
	for _, s := range curves {
		base := s.value(pts[0])
		for _, r := range pts {
			if base > 0 {
				yMax = max(yMax, s.value(r)/base)
			}
		}
	}
	img := image.NewRGBA(image.Rect(0, 0, width, height))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	lx0, lx1 := math.Log10(x0), math.Log10(x1)
	ly0, ly1 := math.Log10(0.5), math.Log10(yMax*2)
	px := func(x float64) int {
		return left + int((math.Log10(x)-lx0)/(lx1-lx0)*float64(width-left-right))
	}
	py := func(y float64) int {
		return height - bottom - int((math.Log10(y)-ly0)/(ly1-ly0)*float64(height-top-bottom))
	}
	grey, black := color.RGBA{0xdd, 0xdd, 0xdd, 0xff}, color.RGBA{0, 0, 0, 0xff}
	for d := math.Pow(10, math.Ceil(lx0)); d <= x1*1.0001; d *= 10 {
		line(img, px(d), top, px(d), height-bottom, 1, grey)
	}
	for _, r := range pts {
		label := fmt.Sprint(r.Providers)
		text(img, px(float64(r.Providers))-len(label)*glyphW, height-bottom+10, 2, label, black)
	}
	for d := 1.0; d <= yMax*2; d *= 10 {
		line(img, left, py(d), width-right, py(d), 1, grey)
		label := fmt.Sprintf("%gx", d)
		text(img, left-10-len(label)*glyphW*2, py(d)-7, 2, label, black)
	}
	line(img, left, height-bottom, width-right, height-bottom, 2, black)
	line(img, left, top, left, height-bottom, 2, black)
	text(img, left, height-28, 2, "providers (log)       y: growth over the smallest size (log)", black)
	text(img, left, 10, 2, "tenzrod scale harness: cost growth per node", black)
	ref := color.RGBA{0x88, 0x88, 0x88, 0xff}
	dashed(img, px(x0), py(1), px(x1), py(x1/x0), ref)
	legend := append([]series{{name: "linear reference (n)", color: ref}}, curves...)
	for i, s := range legend {
		y := top + 12 + i*22
		line(img, left+20, y+7, left+50, y+7, 3, s.color)
		text(img, left+60, y, 2, s.name, black)
	}
	for _, s := range curves {
		base := s.value(pts[0])
		if base <= 0 {
			continue
		}
		for i := 1; i < len(pts); i++ {
			a, b := s.value(pts[i-1])/base, s.value(pts[i])/base
			if a <= 0 || b <= 0 {
				continue
			}
			line(img, px(float64(pts[i-1].Providers)), py(a), px(float64(pts[i].Providers)), py(b), 3, s.color)
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := png.Encode(f, img); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// line draws a w-pixel-wide segment (Bresenham).
func line(img *image.RGBA, x0, y0, x1, y1, w int, c color.Color) {
	dx, dy := abs(x1-x0), -abs(y1-y0)
	sx, sy := sign(x1-x0), sign(y1-y0)
	e := dx + dy
	for {
		for i := -w / 2; i <= w/2; i++ {
			for j := -w / 2; j <= w/2; j++ {
				img.Set(x0+i, y0+j, c)
			}
		}
		if x0 == x1 && y0 == y1 {
			return
		}
		e2 := 2 * e
		if e2 >= dy {
			e += dy
			x0 += sx
		}
		if e2 <= dx {
			e += dx
			y0 += sy
		}
	}
}

// dashed draws a thin dashed segment.
func dashed(img *image.RGBA, x0, y0, x1, y1 int, c color.Color) {
	n := max(abs(x1-x0), abs(y1-y0))
	for i := 0; i < n; i++ {
		if (i/8)%2 == 0 {
			img.Set(x0+(x1-x0)*i/n, y0+(y1-y0)*i/n, c)
		}
	}
}

func abs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

func sign(v int) int {
	switch {
	case v > 0:
		return 1
	case v < 0:
		return -1
	}
	return 0
}
