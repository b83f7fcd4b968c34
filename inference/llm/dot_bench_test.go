package llm

import "testing"

func BenchmarkDot(b *testing.B) {
	for _, n := range []int{192, 768} {
		x, y := make([]float32, n), make([]float32, n)
		for i := range x {
			x[i], y[i] = float32(i), float32(n-i)
		}
		b.Run(itoa(n), func(b *testing.B) {
			var s float32
			for b.Loop() {
				s += dot(x, y)
			}
			b.ReportMetric(float64(2*n)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GFLOP/s")
			_ = s
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}
