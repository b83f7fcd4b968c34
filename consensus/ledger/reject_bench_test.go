package ledger_test

import (
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// rejectBatch is the number of records in one benchmarked settlement: a
// flood packs a transaction as full as the block allows (about 150
// receipt-carrying records in 1 MB), so the per-transaction work (tx
// signature, decode, nonce) is spread as thinly as an attacker would.
const rejectBatch = 100

// rejectStage is one way a record fails, cheapest check first, and the
// code the chain must give it; "settled" is an honest record, the
// baseline every fee is compared with.
type rejectStage struct {
	name string
	code ledger.Code // CodeOK: the record settles
	// make builds record j of transaction i from an honest record of a
	// distinct call (paid to the buyer's own escrow, settler = buyer).
	make func(b *testing.B, m *machine, i, j int, honest receipt.PaymentRecord) receipt.PaymentRecord
}

// BenchmarkRejectedRecord measures one validator's CPU per record that the
// chain refuses, by the stage that refuses it, and per settled record:
// each op is one settlement of rejectBatch records through Check (the
// mempool) and Finalize + Commit (the block), as every validator runs
// them; the signature cache shared by the two passes is what production
// has. Every record is distinct (its own call, its own forgery) so no
// cache spans transactions. ns/record is the figure the fees are priced
// from (scripts/attack and the issue 35 note quote it).
func BenchmarkRejectedRecord(b *testing.B) {
	stages := []rejectStage{
		{"duplicate", ledger.CodeDuplicateRecord, nil}, // replays of settled records, built below
		// Replays without the receipt envelope (the dedupe comes before
		// any receipt or signature check): the cheapest record to send,
		// free of record fees, priced by fee_per_tx alone.
		{"duplicate-bare", ledger.CodeDuplicateRecord, nil},
		{"bad-record-sig", ledger.CodeBadRecordSig, func(b *testing.B, _ *machine, _, _ int, r receipt.PaymentRecord) receipt.PaymentRecord {
			r.Sig = append([]byte(nil), r.Sig...)
			r.Sig[0] ^= 1
			return r
		}},
		{"no-receipt", ledger.CodeBadReceipt, func(b *testing.B, _ *machine, _, _ int, r receipt.PaymentRecord) receipt.PaymentRecord {
			r.Receipt, r.ReceiptHash = nil, terms.Hash32{}
			buyer, _ := ledgertest.Signer(testChain, "buyer", 0)
			return ledgertest.Signed(b, buyer, r) // a valid settler signature, checked before the missing receipt
		}},
		{"bad-cert", ledger.CodeBadReceipt, forgedCert},
		{"bad-receipt-sig", ledger.CodeBadReceipt, forgedReceiptSig},
		{"record-mismatch", ledger.CodeRecordMismatch, nil}, // the front-run: the receipt names the gateway as settler
		{"underpriced", ledger.CodeUnderpriced, nil},
		{"settled", ledger.CodeOK, nil},
	}
	for _, st := range stages {
		b.Run(st.name, func(b *testing.B) { benchStage(b, st) })
	}
}

func benchStage(b *testing.B, st rejectStage) {
	buyer, gb := ledgertest.Signer(testChain, "buyer", 1<<62)
	gw, gg := ledgertest.Signer(testChain, "gateway", 0)
	op, gop := ledgertest.Signer(testChain, "operator", 10_000)
	c := newChain(b, "", genesisTime, ledgertest.Params(), 1, gb, gg, gop)
	m := newMachine(b)
	c.mustApply(c.sign(op, m.register(b, op, 1000, 60)),
		c.SignAt(buyer, 0, &ledger.EscrowFund{Amount: 1 << 60}),
		c.SignAt(buyer, 1, &ledger.EscrowFund{Amount: 1 << 60, Settler: gw.Account()}))
	const price = 3
	build := func(i int) []receipt.PaymentRecord {
		recs := make([]receipt.PaymentRecord, rejectBatch)
		for j := range recs {
			settler := buyer.Account()
			if st.name == "record-mismatch" || st.name == "underpriced" {
				settler = gw.Account()
			}
			env, hash, d := m.paidReceipt(b, fmt.Sprint(st.name, i, " ", j), buyer.Account(), settler, price)
			r := receipt.PaymentRecord{Payer: buyer.Account(), Provider: m.machineID(), RequestDigest: d, Price: price,
				ReceiptHash: hash, Receipt: env}
			switch st.name {
			case "record-mismatch": // the buyer's own-settler copy of the gateway's record
				recs[j] = ledgertest.Signed(b, buyer, r)
			case "underpriced":
				r.Settler, r.Price = gw.Account(), price-1
				recs[j] = ledgertest.Signed(b, gw, r)
			default:
				recs[j] = ledgertest.Signed(b, buyer, r)
				if st.make != nil {
					recs[j] = st.make(b, m, i, j, recs[j])
				}
			}
		}
		return recs
	}
	batches := make([][]receipt.PaymentRecord, b.N)
	for i := range batches {
		batches[i] = build(i)
	}
	if st.code == ledger.CodeDuplicateRecord { // settle them first, then time their replays
		for i, recs := range batches {
			c.mustApply(c.sign(buyer, &ledger.Settlement{Records: recs}))
			if st.name == "duplicate-bare" {
				bare := make([]receipt.PaymentRecord, len(recs))
				for j, r := range recs {
					r.Receipt = nil
					bare[j] = r
				}
				batches[i] = bare
			}
		}
	}
	nonce := c.account(buyer.Account()).Nonce
	txs := make([][]byte, b.N)
	for i, recs := range batches {
		txs[i] = c.SignAt(buyer, nonce+uint64(i), &ledger.Settlement{Records: recs})
	}
	b.ResetTimer()
	var last ledger.BlockResult
	for _, tx := range txs {
		if err := c.l.Check(tx); err != nil {
			b.Fatalf("check: %v", err)
		}
		last = c.mustApply(tx)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*rejectBatch), "ns/record")
	b.ReportMetric(float64(len(txs[0]))/rejectBatch, "B/record") // how many an attacker packs in one transaction
	r := report(b, last.Txs[0])
	want := 0
	if st.code == ledger.CodeOK {
		want = rejectBatch
	}
	if int(r.Settled) != want || (want == 0 && (len(r.Skipped) != rejectBatch || r.Skipped[0].Code != st.code)) {
		b.Fatalf("%s: report %s, want every record %v", st.name, r.String(), st.code)
	}
}

// forgedCert keeps the record's signature valid but re-signs it over a
// receipt whose session certificate carries a broken peer signature, one
// distinct per record: the chain verifies the hardware ECDSA and the
// ML-DSA-65 signatures before the peer key's fails, and the certificate
// cache (per transaction) never hits. The most a validator spends on a
// record it refuses.
func forgedCert(b *testing.B, _ *machine, i, j int, r receipt.PaymentRecord) receipt.PaymentRecord {
	return reseal(b, r, func(env *identity.Envelope) {
		env.Cert.PeerSig = append([]byte(nil), env.Cert.PeerSig...)
		env.Cert.PeerSig[j%len(env.Cert.PeerSig)] ^= byte(1 + i%255)
	})
}

// forgedReceiptSig breaks the envelope's session signature under a valid
// certificate (verified once per transaction).
func forgedReceiptSig(b *testing.B, _ *machine, _, _ int, r receipt.PaymentRecord) receipt.PaymentRecord {
	return reseal(b, r, func(env *identity.Envelope) {
		env.Payload = append(append([]byte(nil), env.Payload...), 0)
	})
}

// reseal applies f to r's receipt envelope, fixes the receipt hash and
// signs the record again with the buyer's key, as the attacker would.
func reseal(b *testing.B, r receipt.PaymentRecord, f func(*identity.Envelope)) receipt.PaymentRecord {
	env, err := identity.UnmarshalEnvelope(r.Receipt, receipt.MaxReceiptBytes)
	if err != nil {
		b.Fatal(err)
	}
	f(env)
	raw, err := env.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	r.Receipt, r.ReceiptHash = raw, sha256.Sum256(raw)
	buyer, _ := ledgertest.Signer(testChain, "buyer", 0)
	return ledgertest.Signed(b, buyer, r)
}
