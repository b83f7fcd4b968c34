package consensus_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"testing"

	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// recordRange queries payer's records at from..to in the latest state.
func (c *chain) recordRange(payer terms.AccountID, from, to int64) consensus.RecordRange {
	return queryRecords(c, "recordrange", payer, from, to)
}

// queryRecords asks route for owner's records at from..to in the latest
// state and decodes the answer, unverified.
func queryRecords[O consensus.RecordOwner](c *chain, route string, owner O, from, to int64) consensus.RecordSpan[O] {
	c.T.Helper()
	res, err := c.app.Query(context.Background(), &abci.QueryRequest{
		Path: route + "/" + owner.String() + "/" + itoa(from) + "/" + itoa(to)})
	if err != nil || res.Code != 0 {
		c.T.Fatalf("%s: %v %s", route, err, res.GetLog())
	}
	r, err := consensus.ParseRecordRange(owner, from, to, res.Height, res.Value, res.ProofOps.Ops)
	if err != nil {
		c.T.Fatal(err)
	}
	return r
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// TestRecordRangeProofs settles records of two payers over three blocks
// and checks that range proofs return exactly the payer's records in each
// span of heights, and that dropping, adding or altering entries, or
// asking about another span, fails verification.
func TestRecordRangeProofs(t *testing.T) {
	c, p, alice, bob, _ := newMarket(t)
	n := byte(0)
	settle := func(s *ledger.Signer, k int) []byte {
		recs := make([]receipt.PaymentRecord, k)
		for i := range recs {
			n++
			recs[i] = p.record(t, s, terms.Hash32{n}, uint64(n))
		}
		return c.sign(s, &ledger.Settlement{Records: recs})
	}
	c.mustApply(settle(alice, 2))
	h1 := c.app.Height()
	c.mustApply(settle(alice, 1), settle(bob, 1))
	h2 := c.app.Height()
	c.block()
	c.mustApply(settle(alice, 3))
	h4 := c.app.Height()
	root := c.app.AppHash()

	for _, tc := range []struct {
		from, to int64
		want     int
	}{{h1, h1, 2}, {h2, h2, 1}, {h1, h2, 3}, {h2 + 1, h2 + 1, 0}, {1, h1 - 1, 0}, {h1, h4, 6}, {h4, h4, 3}} {
		rr := c.recordRange(alice.Account(), tc.from, tc.to)
		if err := consensus.VerifyRecordRange(root, rr); err != nil {
			t.Fatalf("alice %d..%d: %v", tc.from, tc.to, err)
		}
		if len(rr.Records) != tc.want {
			t.Fatalf("alice %d..%d: %d records, want %d", tc.from, tc.to, len(rr.Records), tc.want)
		}
		for _, sr := range rr.Records {
			if sr.Record.Payer != alice.Account() || sr.Height < tc.from || sr.Height > tc.to {
				t.Fatalf("alice %d..%d: record %+v", tc.from, tc.to, sr)
			}
		}
	}
	if rr := c.recordRange(bob.Account(), 1, h4); len(rr.Records) != 1 || consensus.VerifyRecordRange(root, rr) != nil {
		t.Fatalf("bob: %d records, want 1", len(rr.Records))
	}

	// h1..h2 has a successor entry (alice's record at h4) after its range.
	rr := c.recordRange(alice.Account(), h1, h2)
	if len(rr.Proof.Keys) != 4 {
		t.Fatalf("range proof of 3 records lists %d keys, want 3 and the successor", len(rr.Proof.Keys))
	}
	cut := func(f func(*consensus.RecordRange)) consensus.RecordRange {
		cp := rr
		cp.Records = append([]ledger.SettledRecord(nil), rr.Records...)
		cp.Proof.Keys = append([][]byte(nil), rr.Proof.Keys...)
		cp.Proof.Values = append([][]byte(nil), rr.Proof.Values...)
		f(&cp)
		return cp
	}
	for name, bad := range map[string]consensus.RecordRange{
		"successor dropped": cut(func(r *consensus.RecordRange) { r.Proof.Keys, r.Proof.Values = r.Proof.Keys[:3], r.Proof.Values[:3] }),
		"entry dropped": cut(func(r *consensus.RecordRange) {
			r.Proof.Keys = append(r.Proof.Keys[:1:1], r.Proof.Keys[2:]...)
			r.Proof.Values = append(r.Proof.Values[:1:1], r.Proof.Values[2:]...)
			r.Records = r.Records[1:]
		}),
		"other span":     cut(func(r *consensus.RecordRange) { r.From = h1 + 1 }),
		"other payer":    cut(func(r *consensus.RecordRange) { r.Owner = bob.Account() }),
		"record dropped": cut(func(r *consensus.RecordRange) { r.Records = r.Records[:2] }),
		"price changed":  cut(func(r *consensus.RecordRange) { r.Records[0].Record.Price++ }),
		"value changed":  cut(func(r *consensus.RecordRange) { r.Proof.Values[1] = bytes.Repeat([]byte{1}, 32) }),
	} {
		if err := consensus.VerifyRecordRange(root, bad); err == nil {
			t.Errorf("%s: verified", name)
		}
	}
	if err := consensus.VerifyRecordRange(root, cut(func(r *consensus.RecordRange) { r.Records[1].Record.Price++ })); !errors.Is(err, consensus.ErrRecordMismatch) {
		t.Errorf("altered record: %v, want ErrRecordMismatch", err)
	}
}
