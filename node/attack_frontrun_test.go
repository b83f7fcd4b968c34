package node

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestBuyerFrontRunRefused is issue 35's attack exactly as found, on a
// validator-gateway and a registered provider over libp2p: the buyer funds
// an escrow with itself as settler, makes a call through its gateway,
// takes tenzro.payment.signed.record from the answer, re-signs a copy with
// Price 1 and Settler = buyer and submits it before the provider's
// collector does. The chain refuses it with CodeRecordMismatch; the
// collector then settles the gateway's record: the provider's operator is
// credited the honest price less the record fee, the gateway's escrow is
// debited it, the buyer's own escrow never moves, and neither the
// collector nor the outbox counts a pre-emption.
func TestBuyerFrontRunRefused(t *testing.T) {
	params := testChainParams(3600)
	params.FeePerRecord = 3
	slowCollector := func(c *Config) { c.Settle.CollectInterval = 4 * time.Second } // the attacker's head start
	net := newChainNetWith(t, 1, 1, 0, params, chainExtra{funded: map[terms.AccountID]uint64{testBuyer(): 1_000_000},
		provOpts: []func(*Config){slowCollector}}, func(c *Config) { c.Router.ProbeInterval = 0 })
	gw, prov, c := net.validators[0], net.registered[0], net.validators[0].Chain()
	waitRegistered(t, gw, net.registered)
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	buyer, err := consensus.NewSubmitter(c, testBuyerKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := buyer.Submit(ctx, &ledger.EscrowFund{Amount: 500_000, Settler: testBuyer()}); err != nil || r.Code != ledger.CodeOK {
		t.Fatalf("the buyer's own escrow: %+v %v", r, err)
	}
	settler, op := accountKey(t, gw.Config()), accountKey(t, prov.Config())
	gwEscrow0, op0, own0 := escrowBalance(t, c, testBuyer(), settler), accountBalance(t, c, op), escrowBalance(t, c, testBuyer(), testBuyer())

	code, body := askPinned(t, gw, prov, "receipt")
	if code != http.StatusOK {
		t.Fatalf("call: %d %s", code, body)
	}
	var resp struct {
		Tenzro struct {
			Payment struct {
				Signed *struct {
					Record string `json:"record"`
				} `json:"signed"`
			} `json:"payment"`
		} `json:"tenzro"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil || resp.Tenzro.Payment.Signed == nil {
		t.Fatalf("no signed record in %s (%v)", body, err)
	}
	raw, err := base64.StdEncoding.DecodeString(resp.Tenzro.Payment.Signed.Record)
	if err != nil {
		t.Fatal(err)
	}
	var honest receipt.PaymentRecord
	if err := cborx.UnmarshalCanonical(raw, ledger.MaxTxBytes, &honest); err != nil {
		t.Fatal(err)
	}
	forged := honest
	forged.Price = 1
	if err := receipt.SignRecord(testBuyerKey, c.App().ChainID(), &forged); err != nil {
		t.Fatal(err)
	}
	res, err := buyer.Submit(ctx, &ledger.Settlement{Records: []receipt.PaymentRecord{forged}})
	if err != nil || res.Code != ledger.CodeOK {
		t.Fatalf("the forged settlement: %+v %v", res, err)
	}
	rep, err := ledger.DecodeSettleReport(res.Data)
	if err != nil || rep.Settled != 0 || len(rep.Skipped) != 1 || rep.Skipped[0].Code != ledger.CodeRecordMismatch {
		t.Fatalf("the forged record: %+v (%v), want skipped with %v", rep, err, ledger.CodeRecordMismatch)
	}

	nodetest.Eventually(t, 60*time.Second, "the honest record settled", func() bool {
		return escrowBalance(t, c, testBuyer(), settler) == gwEscrow0-honest.Price
	})
	if b := accountBalance(t, c, op); b != op0+honest.Price-params.FeePerRecord {
		t.Errorf("operator %d, want %d + %d − fee %d", b, op0, honest.Price, params.FeePerRecord)
	}
	if e := escrowBalance(t, c, testBuyer(), testBuyer()); e != own0 {
		t.Errorf("the buyer's own escrow moved: %d -> %d", own0, e)
	}
	nodetest.Eventually(t, 20*time.Second, "the outbox sees its record settled", func() bool { return gw.outbox.Unsettled(testBuyer()) == 0 })
	// The escrow moves when the block commits; the collector counts the
	// record when its loop reads the result, a moment later.
	nodetest.Eventually(t, 20*time.Second, "the collector counts its record settled", func() bool {
		return metricValue(t, prov, "tenzro_settle_collector_records_settled_total") >= 1
	})
	for n, names := range map[*Node][]string{
		prov: {"tenzro_settle_collector_records_preempted_total", "tenzro_settle_collector_records_duplicate_total"},
		gw:   {"tenzro_settle_outbox_records_preempted_total", "tenzro_settle_outbox_records_duplicate_total"},
	} {
		for _, name := range names {
			if v := metricValue(t, n, name); v > 0 {
				t.Errorf("%s = %v, want 0", name, v)
			}
		}
	}
	if v := metricValue(t, prov, "tenzro_settle_collector_records_settled_total"); v != 1 {
		t.Errorf("collector settled %v records, want 1", v)
	}
}
