package gateway

import (
	"testing"

	"github.com/tenzrod/tenzrod/p2p/infer"
)

// TestServedBySaysWhatHappened: the second turn of a session says who
// served it on every path: the primary; the successor when the primary
// failed; a replacement when both failed; continued when the primary's
// stream broke mid-answer and another provider finished it (the primary
// keeps the session).
func TestServedBySaysWhatHappened(t *testing.T) {
	fail := script{first: ms, fail: &infer.ErrorFrame{Status: 503, Code: "engine"}}
	ok := script{first: ms, gap: ms, tokens: []string{"a", "b", "c"}}
	// on is a script that answers ok except at the calls listed.
	on := func(at map[int]script) func(int, *infer.Request) script {
		return func(n int, _ *infer.Request) script {
			if sc, hit := at[n]; hit {
				return sc
			}
			return ok
		}
	}
	broken := script{first: ms, gap: ms, tokens: []string{"a", "b", "c"}, cutAt: 1}
	for _, tc := range []struct {
		name      string
		scripts   []func(int, *infer.Request) script // providers 0 (primary), 1 (successor), 2
		want      string
		by        int // the provider the session names as primary after the turn
		continued bool
	}{
		{"primary", []func(int, *infer.Request) script{on(nil)}, ServedByPrimary, 0, false},
		{"successor", []func(int, *infer.Request) script{on(map[int]script{1: fail}), on(nil)}, ServedBySuccessor, 1, false},
		{"replacement", []func(int, *infer.Request) script{on(map[int]script{1: fail}), on(map[int]script{0: fail}), on(nil)}, ServedByReplacement, 2, false},
		{"continued", []func(int, *infer.Request) script{on(map[int]script{1: broken}), on(nil)}, ServedByContinued, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inBubble(t, func(t *testing.T, st *bubbleLedger) {
				sm := newStandbyMarket(t, st, tc.scripts...)
				s := &SessionRequest{Continuity: ContinuityOn}
				first := sm.mustTurn(t, s)
				if first.ServedBy != ServedByPrimary || first.Primary.Peer != sm.provs[0].id.String() {
					t.Fatalf("first turn %+v", first)
				}
				s.ID = first.ID
				res, err := sm.turn(t, s)
				if err != nil {
					t.Fatal(err)
				}
				if res.Session.ServedBy != tc.want || res.Session.Primary.Peer != sm.provs[tc.by].id.String() || res.Continued != tc.continued {
					t.Fatalf("second turn %+v (continued %v), want served_by %s with primary %d", res.Session, res.Continued, tc.want, tc.by)
				}
			})
		})
	}
}
