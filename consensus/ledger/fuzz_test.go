package ledger_test

import (
	"bytes"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// FuzzDecodeTx: any input either decodes to a transaction whose envelope
// re-encodes to exactly the input, or is refused with a stateless code.
func FuzzDecodeTx(f *testing.F) {
	alice, _ := ledgertest.Signer(testChain, "alice", 0)
	bob, _ := ledgertest.Signer(testChain, "bob", 0)
	seeds := []any{
		&ledger.Transfer{To: bob.Account(), Amount: 1},
		&ledger.Settlement{Records: []receipt.PaymentRecord{{Payer: alice.Account(), Price: 3}}},
		&ledger.ParamProposal{Params: ledger.DefaultParams()},
		&ledger.SLAVerdict{Hour: 3, Available: true},
		&ledger.EscrowFund{Amount: 9, Settler: bob.Account()},
		newMachine(f).register(f, alice, 5, 0),
		&ledger.NameBind{Name: "tenzro-devnet", ModelID: terms.Hash32{1}},
		&ledger.NameProposal{Name: "tenzro-devnet"},
		&ledger.StreamOpen{Payer: bob.Account(), Payee: newMachine(f).machineID(), Rate: 3600, Deposit: 100},
		&ledger.StreamOpen{Payee: newMachine(f).machineID(), Rate: 0, Deposit: 100},
		&ledger.StreamClaim{ID: terms.Hash32{7}},
		&ledger.StreamStop{ID: terms.Hash32{7}},
		&ledger.StreamStop{},
		&ledger.PlanOpen{Legs: []ledger.PlanLeg{{Payee: bob.Account(), BPS: 7000}, {Payee: alice.Account(), BPS: 3000, Chain: "other"}}, Total: 10, TimeoutBlocks: 5},
		&ledger.PlanOpen{Legs: []ledger.PlanLeg{{Payee: bob.Account(), BPS: 9999}}, Total: 10},
		&ledger.PlanDecide{ID: terms.Hash32{3}, Commit: true},
		&ledger.ModelDeclare{ModelID: terms.Hash32{4}, Holds: true},
		&ledger.ProviderRebond{MachineID: newMachine(f).machineID(), Amount: 5},
		&ledger.ProviderRebond{MachineID: newMachine(f).machineID()},
		&ledger.DisputeOpen{Subject: ledger.DisputeSubject{Kind: ledger.SubjectRecord, Payer: bob.Account(), RequestDigest: terms.Hash32{5}},
			Evidence: ledger.DisputeEvidence{Receipt: []byte{1}, Proofs: []byte{2}, Tokens: []uint32{3, 4}}, Bond: 100},
		&ledger.DisputeOpen{Subject: ledger.DisputeSubject{Kind: ledger.SubjectExpertBatch, Batch: &ledger.ExpertBatchRef{Layer: 2}}, Bond: 1},
		&ledger.DisputeVote{ID: terms.Hash32{6}, Round: 1, Commitment: terms.Hash32{7}},
		&ledger.DisputeVote{ID: terms.Hash32{6}, Round: 2, Reveal: &ledger.VoteReveal{Verdict: ledger.VerdictGuilty, Salt: terms.Hash32{8}}},
	}
	for i, p := range seeds {
		raw, err := alice.SignTx(uint64(i), p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(raw)
	}
	f.Add([]byte{0xa0})
	stateless := map[ledger.Code]bool{
		ledger.CodeMalformed: true, ledger.CodeBadSignature: true, ledger.CodeTooLarge: true,
		ledger.CodeBadIdentity: true, ledger.CodeInvalidParams: true,
		ledger.CodeBadHWSig: true, ledger.CodeBadPQSig: true, ledger.CodeBadPeerSig: true,
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		tx, err := ledger.DecodeTx(testChain, raw)
		if err != nil {
			if !stateless[ledger.CodeOf(err)] {
				t.Fatalf("decode error with code %v: %v", ledger.CodeOf(err), err)
			}
			return
		}
		var env ledger.Envelope
		if err := cborx.Unmarshal(raw, ledger.MaxTxBytes, &env); err != nil {
			t.Fatal(err)
		}
		re, err := cborx.Marshal(env)
		if err != nil || !bytes.Equal(re, raw) {
			t.Fatalf("accepted non-canonical input %x", raw)
		}
		if tx.Hash != ledger.TxHash(raw) {
			t.Fatal("hash mismatch")
		}
	})
}

// FuzzDecodeRegistrationPayload: any input either decodes to a payload
// whose canonical encoding is exactly the input, or is refused as
// malformed.
func FuzzDecodeRegistrationPayload(f *testing.F) {
	op, _ := ledgertest.Signer(testChain, "operator", 0)
	m := newMachine(f)
	good, err := m.unsigned(f, 1, 0).SigningPayload(testChain, op.Account())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte{0xa0})
	f.Add(bytes.Repeat([]byte{0xff}, 40))
	f.Fuzz(func(t *testing.T, raw []byte) {
		p, err := ledger.DecodeRegistrationPayload(raw)
		if err != nil {
			if ledger.CodeOf(err) != ledger.CodeMalformed {
				t.Fatalf("decode error with code %v: %v", ledger.CodeOf(err), err)
			}
			return
		}
		re, err := p.Marshal()
		if err != nil || !bytes.Equal(re, raw) {
			t.Fatalf("accepted non-canonical payload %x (re-encodes to %x, %v)", raw, re, err)
		}
	})
}

// FuzzDecodeNameRecord: any input either decodes to a record with a valid
// name whose canonical encoding is exactly the input, or is refused as
// malformed.
func FuzzDecodeNameRecord(f *testing.F) {
	op, _ := ledgertest.Signer(testChain, "operator", 0)
	good, err := cborx.Marshal(ledger.NameRecord{Name: "tenzro-devnet", ModelID: terms.Hash32{1}, Operator: op.Account(), Height: 7})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte{0xa0})
	f.Fuzz(func(t *testing.T, raw []byte) {
		r, err := ledger.DecodeNameRecord(raw)
		if err != nil {
			if ledger.CodeOf(err) != ledger.CodeMalformed {
				t.Fatalf("decode error with code %v: %v", ledger.CodeOf(err), err)
			}
			return
		}
		if ledger.CheckName(r.Name) != nil {
			t.Fatalf("accepted bad name %q", r.Name)
		}
		re, err := cborx.Marshal(r)
		if err != nil || !bytes.Equal(re, raw) {
			t.Fatalf("accepted non-canonical record %x", raw)
		}
	})
}
