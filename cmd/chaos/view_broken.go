//go:build chaosbroken

package main

import "github.com/tenzrod/tenzrod/node"

// chainView, in the deliberately broken build, loses the first record
// settled to the first killed provider after its restart, as a provider
// whose collector dropped a record on restart would: the record never
// reaches the chain the checker reads. The checker must catch it.
func chainView(recs []node.PaymentView, machine map[*proc]string, faults []*faultRecord) []node.PaymentView {
	for _, f := range faults {
		if f.Kind != faultProviderKill || f.Err != "" {
			continue
		}
		var victim string
		for p, m := range machine {
			if p.name == f.Target {
				victim = m
			}
		}
		drop := -1
		for i, r := range recs {
			if r.Provider == victim && r.Height > f.Height && (drop < 0 || r.Height < recs[drop].Height) {
				drop = i
			}
		}
		if drop < 0 {
			return recs
		}
		out := append([]node.PaymentView(nil), recs[:drop]...)
		return append(out, recs[drop+1:]...)
	}
	return recs
}

// brokenBuild says whether this is the deliberately broken build.
const brokenBuild = true
