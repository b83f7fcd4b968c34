package gateway

import (
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// optimisticReceipt returns proofs of len(ids) decode steps and a receipt
// signing their hash and the tokens hash of signed.
func optimisticReceipt(t *testing.T, steps int, signed []uint32) (*receipt.Receipt, []byte) {
	t.Helper()
	var tops [][]inference.LogProb
	for s := range steps {
		tops = append(tops, []inference.LogProb{{ID: s % 8, LogProb: -1}, {ID: 8, LogProb: -2}, {ID: 9, LogProb: -3}, {ID: 10, LogProb: -4}})
	}
	ps, err := commit.Build(tops, 16)
	if err != nil {
		t.Fatal(err)
	}
	ch, th := commit.Hash(ps), receipt.TokensHash(signed)
	return &receipt.Receipt{CommitmentHash: ch[:], TokensHash: th[:]}, commit.Encode(ps)
}

// TestCheckCommitmentBindsTokens: an optimistic answer is paid only if
// its receipt signs exactly the token IDs the gateway received, one proof
// step each, since only such an answer can be disputed; a buyer that left
// checks only that the receipt binds tokens at all.
func TestCheckCommitmentBindsTokens(t *testing.T) {
	got := []int{5, 0xfffd, 7}
	ok, proofs := optimisticReceipt(t, 3, []uint32{5, 0xfffd, 7})
	if err := checkCommitment(terms.VerifyOptimistic, ok, proofs, got, false); err != nil {
		t.Fatalf("the signed tokens: %v", err)
	}
	other, _ := optimisticReceipt(t, 3, []uint32{5, 0xfffd, 8})
	long, longProofs := optimisticReceipt(t, 4, []uint32{5, 0xfffd, 7})
	unbound := *ok
	unbound.TokensHash = nil
	for name, tc := range map[string]struct {
		r      *receipt.Receipt
		proofs []byte
		ids    []int
		gone   bool
		want   string
	}{
		"other tokens signed":    {other, proofs, got, false, "token IDs received hash"},
		"a token more received":  {ok, proofs, append(got[:3:3], 2), false, "token IDs received hash"},
		"proofs of another size": {long, longProofs, got, false, "decode steps"},
		"no tokens hash":         {&unbound, proofs, got, false, "signs no token IDs"},
		"no tokens hash, gone":   {&unbound, proofs, got, true, "signs no token IDs"},
		"negative token ID":      {ok, proofs, []int{-1}, false, "out of range"},
	} {
		err := checkCommitment(terms.VerifyOptimistic, tc.r, tc.proofs, tc.ids, tc.gone)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error saying %q", name, err, tc.want)
		}
	}
	if err := checkCommitment(terms.VerifyOptimistic, other, proofs, got, true); err != nil {
		t.Fatalf("a buyer that left: the received IDs may be fewer, yet %v", err)
	}
	if err := checkCommitment(terms.VerifyReceipt, &unbound, nil, nil, false); err != nil {
		t.Fatalf("a receipt-level answer binds no tokens: %v", err)
	}
}
