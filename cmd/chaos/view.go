//go:build !chaosbroken

package main

import (
	"github.com/tenzrod/tenzrod/consensus/chainapi"
)

// chainView is the checker's view of the settled records: exactly what
// the chain answered.
func chainView(recs []chainapi.PaymentView, _ map[*proc]string, _ []*faultRecord) []chainapi.PaymentView {
	return recs
}

// brokenBuild says whether this is the deliberately broken build.
const brokenBuild = false
