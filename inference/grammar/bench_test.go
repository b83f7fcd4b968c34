package grammar

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkMaskLargeVocab walks one answer under a schema with a
// 128k-token vocabulary of random ASCII pieces: the cost of a mask per
// step (memo hits inside strings, trie walks elsewhere).
func BenchmarkMaskLargeVocab(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = `abcdefghijklmnopqrstuvwxyz ABC0123456789{}[]":,.-`
	pieces := make([][]byte, 0, 128_001)
	for c := range 256 {
		pieces = append(pieces, []byte{byte(c)})
	}
	for len(pieces) < 128_000 {
		p := make([]byte, 1+rng.IntN(8))
		for i := range p {
			p[i] = alphabet[rng.IntN(len(alphabet))]
		}
		pieces = append(pieces, p)
	}
	pieces = append(pieces, nil)
	end := len(pieces) - 1
	v := NewVocab(pieces, []int{end})
	g, err := CompileSchema([]byte(schemas[0]))
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	steps := 0
	for i := range b.N {
		c := v.NewConstraint(g)
		r := rand.New(rand.NewPCG(uint64(i), 3))
		for left := 60; left > 0; left-- {
			ids, err := c.Allowed(left)
			if err != nil {
				b.Fatal(err)
			}
			id := ids[r.IntN(len(ids))]
			steps++
			if id == end || !c.Accept(id, pieces[id]) {
				break
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(steps)/1e6, "ms/step")
}
