package expert

import "slices"

// sample hands each batch of a verified exchange that the caller's
// Sampler picks to OnSample, in full. It runs only after the receipt
// verified, so the receipt bytes the decision hashes are the holder's
// final, signed word. The call's tally marks the receipt, so the record
// paying for the call can be bound to it.
func (c *Caller) sample(layer int, o outcome, wire []WireBatch, tally *Tally) {
	if c.cfg.Sampler == nil || c.cfg.OnSample == nil {
		return
	}
	for j, i := range o.group.idx {
		if !c.cfg.Sampler.Sampled(o.receipt, j) {
			continue
		}
		w := wire[i]
		c.stats.sampled()
		tally.sampled(o.group.holder, o.receipt)
		c.cfg.OnSample(&SampledBatch{Model: c.cfg.Model, Layer: uint32(layer), Dim: uint32(c.cfg.Dim), Expert: w.Expert,
			Positions: slices.Clone(w.Positions), Input: w.Rows, Output: o.outputs[j], Receipt: o.receipt,
			Index: uint32(j), Holder: []byte(o.group.holder.Peer), Machine: o.group.holder.Machine})
	}
}
