package llm

import (
	"context"
	"fmt"
	"math"
	"sort"
)

// route returns, for each of the B rows of in, the ExpertsUsed experts the
// router picks (most probable first, lower index on ties) and their weights:
// the softmax over all experts, renormalised over the chosen ones.
func (s *Sequence) route(layer *Layer, in []float32, B int) ([][]int, [][]float32) {
	E, k := s.m.Cfg.Experts, s.m.Cfg.ExpertsUsed
	logits := s.buf("router", B*E)
	matmul(s.threads, logits, layer.Router, in, B)
	ids := make([][]int, B)
	wts := make([][]float32, B)
	p := make([]float64, E)
	for b := 0; b < B; b++ {
		row := logits[b*E : (b+1)*E]
		m := row[0]
		for _, v := range row {
			m = max(m, v)
		}
		for e, v := range row {
			p[e] = expDet(float64(v - m))
		}
		order := make([]int, E)
		for e := range order {
			order[e] = e
		}
		sort.SliceStable(order, func(i, j int) bool { return row[order[i]] > row[order[j]] })
		ids[b] = order[:k]
		var sum float64
		for _, e := range ids[b] {
			sum += p[e]
		}
		wts[b] = make([]float32, k)
		for i, e := range ids[b] {
			wts[b][i] = float32(p[e] / sum)
		}
	}
	return ids, wts
}

// moe runs a mixture-of-experts feed-forward block: each expert runs once
// over the batch of rows routed to it, and each row sums its experts'
// outputs in rank order.
func (s *Sequence) moe(ctx context.Context, l int, in, out []float32, B int) error {
	layer := &s.m.Layers[l]
	dim := s.m.Cfg.Dim
	ids, wts := s.route(layer, in, B)
	k := s.m.Cfg.ExpertsUsed
	results := make([][]float32, B*k) // [row*k+rank]
	var batches []ExpertBatch
	var slots [][]int // per batch: the result slot of each row
	for e := range layer.Experts {
		var rows [][]float32
		var sl, pos []int
		for b := 0; b < B; b++ {
			for r, id := range ids[b] {
				if id == e {
					rows = append(rows, in[b*dim:(b+1)*dim:(b+1)*dim])
					sl = append(sl, b*k+r)
					pos = append(pos, s.n+b)
				}
			}
		}
		if len(rows) > 0 {
			batches = append(batches, ExpertBatch{Expert: e, Positions: pos, Rows: rows})
			slots = append(slots, sl)
		}
	}
	res, err := s.runBatches(ctx, l, layer, batches)
	if err != nil {
		return err
	}
	for i, sl := range slots {
		for j, slot := range sl {
			results[slot] = res[i][j]
		}
	}
	clear(out[:B*dim])
	for b := 0; b < B; b++ {
		o := out[b*dim : (b+1)*dim]
		for r := 0; r < k; r++ {
			axpy(o, wts[b][r], results[b*k+r])
		}
	}
	return nil
}

// runBatches runs the expert batches of layer l: through the layer hook in
// one call, else expert by expert through the expert hook or locally.
func (s *Sequence) runBatches(ctx context.Context, l int, layer *Layer, batches []ExpertBatch) ([][][]float32, error) {
	dim := s.m.Cfg.Dim
	if s.layer != nil {
		res, err := s.layer(ctx, l, batches)
		if err == nil && len(res) != len(batches) {
			err = fmt.Errorf("expert hook returned %d results for %d batches", len(res), len(batches))
		}
		for i := 0; err == nil && i < len(res); i++ {
			if err = checkRows(res[i], len(batches[i].Rows), dim); err != nil {
				err = fmt.Errorf("expert %d: %w", batches[i].Expert, err)
			}
		}
		if err != nil {
			return nil, fmt.Errorf("llm: layer %d: %w", l, err)
		}
		return res, nil
	}
	res := make([][][]float32, len(batches))
	for i, b := range batches {
		if s.expert == nil {
			res[i] = s.runExpert(layer.Experts[b.Expert], b.Rows)
			continue
		}
		r, err := s.expert(ctx, l, b.Expert, b.Rows)
		if err == nil {
			err = checkRows(r, len(b.Rows), dim)
		}
		if err != nil {
			return nil, fmt.Errorf("llm: layer %d expert %d: %w", l, b.Expert, err)
		}
		res[i] = r
	}
	return res, nil
}

func checkRows(rows [][]float32, n, dim int) error {
	if len(rows) != n {
		return fmt.Errorf("expert returned %d rows for %d inputs", len(rows), n)
	}
	for i, r := range rows {
		if len(r) != dim {
			return fmt.Errorf("expert row %d has %d values, want %d", i, len(r), dim)
		}
		for _, v := range r {
			if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
				return fmt.Errorf("expert row %d is not finite", i)
			}
		}
	}
	return nil
}

func (s *Sequence) runExpert(f *FFN, batch [][]float32) [][]float32 {
	dim := s.m.Cfg.Dim
	n := len(batch)
	in := make([]float32, n*dim)
	for i, r := range batch {
		copy(in[i*dim:], r)
	}
	out := make([]float32, n*dim)
	s.ffn(f, in, out, n)
	res := make([][]float32, n)
	for i := range res {
		res[i] = out[i*dim : (i+1)*dim : (i+1)*dim]
	}
	return res
}

// ExpertForward runs expert e of layer l of an MoE model over a batch of
// input rows (each Dim values: the layer's normalised FFN input) on threads
// goroutines, returning one output row per input row. The result of a row
// does not depend on the other rows of the batch.
func (m *Model) ExpertForward(l, e int, rows [][]float32, threads int) ([][]float32, error) {
	if l < 0 || l >= len(m.Layers) || m.Layers[l].Experts == nil {
		return nil, fmt.Errorf("llm: layer %d has no experts", l)
	}
	if e < 0 || e >= len(m.Layers[l].Experts) {
		return nil, fmt.Errorf("llm: layer %d has no expert %d", l, e)
	}
	for i, r := range rows {
		if len(r) != m.Cfg.Dim {
			return nil, fmt.Errorf("llm: expert input row %d has %d values, want %d", i, len(r), m.Cfg.Dim)
		}
	}
	if len(rows) == 0 {
		return nil, nil
	}
	s := m.NewSequence(threads, 1, nil)
	return s.runExpert(m.Layers[l].Experts[e], rows), nil
}
