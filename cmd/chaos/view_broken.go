//go:build chaosbroken

package main

import (
	"github.com/tenzrod/tenzrod/consensus/chainapi"
)

// chainView is exactly what the chain answered, in this build too: the
// break is in the node (settle's broken_on.go: a restarted gateway's
// outbox forgets the first record it signs), and the checker must find
// it from the outside.
func chainView(recs []chainapi.PaymentView, _ map[*proc]string, _ []*faultRecord) []chainapi.PaymentView {
	return recs
}

// brokenBuild says whether this is the deliberately broken build: the
// tenzrod it runs is built with -tags chaosbroken.
const brokenBuild = true
