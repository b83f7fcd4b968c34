package consensus_test

import (
	"bytes"
	"testing"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// FuzzDecodeTx: any input either decodes to a transaction whose envelope
// re-encodes to exactly the input, or is refused with a stateless code.
func FuzzDecodeTx(f *testing.F) {
	alice, _ := signer("alice", 0)
	bob, _ := signer("bob", 0)
	seeds := []any{
		&consensus.Transfer{To: bob.Account(), Amount: 1},
		&consensus.Settlement{Records: []consensus.PaymentRecord{{Payer: alice.Account(), Price: 3}}},
		&consensus.ParamProposal{Params: consensus.DefaultParams()},
		&consensus.SLAVerdict{Hour: 3, Available: true},
		&consensus.EscrowFund{Amount: 9, Settler: bob.Account()},
	}
	for i, p := range seeds {
		raw, err := alice.SignTx(uint64(i), p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte{0xa0})
	stateless := map[consensus.Code]bool{
		consensus.CodeMalformed: true, consensus.CodeBadSignature: true, consensus.CodeTooLarge: true,
		consensus.CodeBadIdentity: true, consensus.CodeInvalidParams: true,
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		tx, err := consensus.DecodeTx(testChain, raw)
		if err != nil {
			if !stateless[consensus.CodeOf(err)] {
				t.Fatalf("decode error with code %v: %v", consensus.CodeOf(err), err)
			}
			return
		}
		var env consensus.Envelope
		if err := cborx.Unmarshal(raw, consensus.MaxTxBytes, &env); err != nil {
			t.Fatal(err)
		}
		re, err := cborx.Marshal(env)
		if err != nil || !bytes.Equal(re, raw) {
			t.Fatalf("accepted non-canonical input %x", raw)
		}
		if tx.Hash != consensus.TxHash(raw) {
			t.Fatal("hash mismatch")
		}
	})
}
