//go:build !chaosbroken

package main

import "github.com/tenzrod/tenzrod/node"

// chainView is the checker's view of the settled records: exactly what
// the chain answered.
func chainView(recs []node.PaymentView, _ map[*proc]string, _ []*faultRecord) []node.PaymentView {
	return recs
}

// brokenBuild says whether this is the deliberately broken build.
const brokenBuild = false
