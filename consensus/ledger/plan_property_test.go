package ledger_test

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// memKV is a map as state: the property test runs transactions through
// Exec without a trie, so it can afford 10^5 plans.
type memKV map[string][]byte

func (m memKV) Get(k []byte) ([]byte, error) { return m[string(k)], nil }
func (m memKV) Set(k, v []byte)              { m[string(k)] = v }
func (m memKV) Del(k []byte)                 { delete(m, string(k)) }

// wantPayouts is the split computed with big integers: ⌊total × bps /
// 10000⌋ per leg and the remainder to the first.
func wantPayouts(total uint64, legs []ledger.PlanLeg) []uint64 {
	out := make([]uint64, len(legs))
	rest := new(big.Int).SetUint64(total)
	for i, l := range legs {
		q := new(big.Int).Mul(new(big.Int).SetUint64(total), new(big.Int).SetUint64(l.BPS))
		q.Quo(q, big.NewInt(ledger.BasisPoints))
		out[i] = q.Uint64()
		rest.Sub(rest, q)
	}
	if rest.Sign() < 0 || !rest.IsUint64() {
		panic("oracle: payouts exceed the total")
	}
	out[0] += rest.Uint64()
	return out
}

// randomLegs splits 10000 basis points into 1..64 legs at random cut
// points (few legs most of the time) to fresh random payees.
func randomLegs(rng *rand.Rand) []ledger.PlanLeg {
	n := 1 + rng.IntN(4)
	if rng.IntN(16) == 0 {
		n = 1 + rng.IntN(ledger.MaxPlanLegs)
	}
	seen := map[uint64]bool{ledger.BasisPoints: true}
	cuts := []uint64{ledger.BasisPoints}
	for len(cuts) < n {
		if c := 1 + rng.Uint64N(ledger.BasisPoints-1); !seen[c] {
			seen[c] = true
			cuts = append(cuts, c)
		}
	}
	slices.Sort(cuts)
	legs := make([]ledger.PlanLeg, 0, n)
	prev := uint64(0)
	for _, c := range cuts {
		var payee terms.AccountID
		for i := range payee {
			payee[i] = byte(rng.Uint32())
		}
		legs = append(legs, ledger.PlanLeg{Payee: payee, BPS: c - prev})
		prev = c
	}
	return legs
}

func randomTotal(rng *rand.Rand) uint64 {
	switch rng.IntN(4) {
	case 0:
		return 1 + rng.Uint64N(100)
	case 1:
		return 1 + rng.Uint64N(1_000_000_000)
	case 2:
		return 1 + rng.Uint64N(1<<62)
	}
	return ^uint64(0) - rng.Uint64N(1000)
}

// TestPlanProperty opens planProperties (10^5; 10^4 under the race
// detector, which makes the CBOR codec ~15× slower) random plans (1..64 legs, any bps split
// summing to 10000, totals up to 2^64−1) through Exec, half with a leg on
// another chain then committed or aborted, and checks in every case that
// the payouts sum exactly to the total and match the big-integer split,
// that commit pays every leg in the one transaction that commits (the
// open, for a plan all on this chain) and abort pays none and makes the
// escrow whole, and that a second decision is refused and moves nothing.
func TestPlanProperty(t *testing.T) {
	const plans = planProperties
	buyer, _ := ledgertest.Signer(testChain, "plan-buyer", 0)
	me := buyer.Account()
	st := memKV{}
	params := ledgertest.Params()
	for _, kv := range []struct {
		key []byte
		v   any
	}{
		{ledger.KeyMeta(), ledger.ChainMeta{ChainID: testChain, Height: 1}},
		{ledger.KeyParams(), params},
		{ledger.KeyAccount(me), ledger.Account{Balance: 1}},
	} {
		if err := ledger.Save(st, kv.key, kv.v); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(14, 4))
	var nonce uint64
	exec := func(h int64, p any) (ledger.Effects, error) {
		tx := &ledger.Tx{Body: ledger.TxBody{Signer: me, Nonce: nonce}, Payload: p}
		nonce++
		return ledger.Exec(st, ledger.Block{Height: h, Time: h}, tx)
	}
	balance := func(a terms.AccountID) uint64 {
		var acct ledger.Account
		if _, err := ledger.Load(st, ledger.KeyAccount(a), &acct); err != nil {
			t.Fatal(err)
		}
		return acct.Balance
	}
	escrow := func() uint64 {
		var e ledger.Escrow
		if _, err := ledger.Load(st, ledger.KeyEscrow(me, me), &e); err != nil {
			t.Fatal(err)
		}
		return e.Balance
	}
	paid := func(legs []ledger.PlanLeg) []uint64 {
		out := make([]uint64, len(legs))
		for i, l := range legs {
			out[i] = balance(l.Payee)
		}
		return out
	}
	sumOf := func(xs []uint64) *big.Int {
		s := new(big.Int)
		for _, x := range xs {
			s.Add(s, new(big.Int).SetUint64(x))
		}
		return s
	}
	var local, committed, aborted, refused int
	for i := range plans {
		h := int64(2 + i)
		legs, total := randomLegs(rng), randomTotal(rng)
		foreign := rng.IntN(2) == 0
		if foreign {
			legs[rng.IntN(len(legs))].Chain = "another-chain"
		}
		extra := rng.Uint64N(1000)
		if total > ^uint64(0)-extra {
			extra = 0
		}
		if err := ledger.Save(st, ledger.KeyEscrow(me, me), ledger.Escrow{Balance: total + extra, Settler: me}); err != nil {
			t.Fatal(err)
		}
		want := wantPayouts(total, legs)
		if got := ledger.PlanPayouts(total, legs); len(got) != len(want) {
			t.Fatalf("plan %d: %d payouts for %d legs", i, len(got), len(legs))
		} else {
			for j := range got {
				if got[j] != want[j] || got[j] > total {
					t.Fatalf("plan %d (total %d, legs %+v): payouts %v, want %v", i, total, legs, got, want)
				}
			}
		}
		if s := sumOf(want); s.Cmp(new(big.Int).SetUint64(total)) != 0 {
			t.Fatalf("plan %d: payouts sum to %s, total %d", i, s, total)
		}
		id := ledger.PlanID(me, nonce)
		eff, err := exec(h, &ledger.PlanOpen{Legs: legs, Total: total})
		if err != nil {
			t.Fatalf("plan %d: open: %v", i, err)
		}
		if string(eff.Data) != string(id[:]) {
			t.Fatalf("plan %d: open's data %x, want %s", i, eff.Data, id)
		}
		if escrow() != extra {
			t.Fatalf("plan %d: escrow %d after the open, want %d", i, escrow(), extra)
		}
		commit := !foreign
		if foreign {
			if got := paid(legs); sumOf(got).Sign() != 0 {
				t.Fatalf("plan %d: an undecided plan paid %v", i, got)
			}
			commit = rng.IntN(2) == 0
			if _, err := exec(h, &ledger.PlanDecide{ID: id, Commit: commit}); err != nil {
				t.Fatalf("plan %d: decide: %v", i, err)
			}
		} else {
			local++
		}
		got := paid(legs)
		if commit {
			committed++
			for j := range got {
				if got[j] != want[j] {
					t.Fatalf("plan %d: commit paid %v, want %v", i, got, want)
				}
			}
			if escrow() != extra {
				t.Fatalf("plan %d: escrow %d after the commit, want %d", i, escrow(), extra)
			}
		} else {
			aborted++
			if sumOf(got).Sign() != 0 || escrow() != total+extra {
				t.Fatalf("plan %d: abort paid %v, escrow %d (want %d whole)", i, got, escrow(), total+extra)
			}
		}
		if i%10 == 0 {
			_, err := exec(h, &ledger.PlanDecide{ID: id, Commit: rng.IntN(2) == 0})
			if ledger.CodeOf(err) != ledger.CodePlanDecided {
				t.Fatalf("plan %d: second decision: %v, want %v", i, err, ledger.CodePlanDecided)
			}
			nonce-- // a refused Exec consumes nothing
			again := paid(legs)
			for j := range again {
				if again[j] != got[j] {
					t.Fatalf("plan %d: a refused second decision moved money: %v then %v", i, got, again)
				}
			}
			refused++
		}
		for _, l := range legs { // fresh payees each plan: keep the map small
			st.Del(ledger.KeyAccount(l.Payee))
		}
		st.Del(ledger.KeyPlan(id))
	}
	t.Logf("%d plans: %d all on this chain, %d committed, %d aborted, %d second decisions refused", plans, local, committed, aborted, refused)
	if local < plans/3 || aborted < plans/5 || committed-local < plans/5 {
		t.Fatalf("sequence too thin: %d local, %d committed, %d aborted", local, committed, aborted)
	}
}
