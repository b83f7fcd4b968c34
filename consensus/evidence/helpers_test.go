package evidence_test

import (
	"context"
	"crypto/ed25519"
	"testing"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// seedKey is the deterministic key of the test's party name.
func seedKey(name string) ed25519.PrivateKey { return ledgertest.SeedKey("evidence-"+name, 0) }

func account(name string) terms.AccountID {
	return ledger.NewSigner(seedKey(name), "").Account()
}

// sender signs with nonces it tracks and submits through one node.
type sender struct {
	node   *consensus.Node
	nonces *ledgertest.Nonces
}

// submit signs each payload as name's next transaction, broadcasts them
// all, waits for each to commit with code 0 and returns the heights.
func (s *sender) submit(ctx context.Context, t *testing.T, name string, payloads ...any) []int64 {
	t.Helper()
	var hashes [][32]byte
	for _, p := range payloads {
		raw := s.nonces.Sign(t, seedKey(name), p)
		h, err := s.node.BroadcastTx(ctx, raw)
		if err != nil {
			t.Fatalf("broadcast %T: %v", p, err)
		}
		hashes = append(hashes, h)
	}
	var heights []int64
	for _, h := range hashes {
		r, err := s.node.WaitTx(ctx, h)
		if err != nil {
			t.Fatal(err)
		}
		if r.Code != 0 {
			t.Fatalf("tx %x: %v: %s", h[:6], r.Code, r.Log)
		}
		heights = append(heights, r.Height)
	}
	return heights
}

// records builds n payment records of payer to provider, request digests
// starting at tag.
func records(payer terms.AccountID, provider receipt.PaymentRecord, tag uint32, n int) []receipt.PaymentRecord {
	out := make([]receipt.PaymentRecord, n)
	for i := range out {
		r := provider
		r.Payer = payer
		v := tag + uint32(i)
		r.RequestDigest = terms.Hash32{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
		r.Price = uint64(10 + i)
		out[i] = r
	}
	return out
}
