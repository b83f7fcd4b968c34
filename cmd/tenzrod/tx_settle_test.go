package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestTxSettle: a buyer settles the record it holds itself, from a saved
// chat completion response, on a real chain: the escrow pays exactly the
// price once; settling it again is a duplicate (exit 0), even with its
// price altered; a record altered to name another request is skipped for
// its signature and exits non-zero.
func TestTxSettle(t *testing.T) {
	n := startTxNet(t)
	ctx := context.Background()
	chainID := n.node.Chain().App().ChainID()
	opFile, op := newAccount(t)
	mustTx(t, "transfer", "--api", n.api, "--key", n.buyerKey, "--to", op.String(), "--amount", "2_000_000_000")
	mach := testMachine(t)
	reg, err := mach.Register(chainID, op, ledger.DefaultParams().MinServingBond, 60)
	if err != nil {
		t.Fatal(err)
	}
	opKey, err := consensus.ReadAccountKey(opFile)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := consensus.NewSubmitter(n.node.Chain(), opKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res, err := sub.Submit(ctx, reg); err != nil || res.Code != ledger.CodeOK {
		t.Fatalf("register: %+v %v", res, err)
	}
	mustTx(t, "escrow", "fund", "--api", n.api, "--key", n.buyerKey, "--amount", "1000")

	buyerKey, err := consensus.ReadAccountKey(n.buyerKey)
	if err != nil {
		t.Fatal(err)
	}
	env, envHash, rd, err := mach.PaidReceipt([]byte("answer"), n.buyer, n.buyer, 7)
	if err != nil {
		t.Fatal(err)
	}
	rec := receipt.PaymentRecord{Payer: n.buyer, Provider: mach.MachineID(), RequestDigest: rd, Price: 7,
		Receipt: env, ReceiptHash: envHash, ExpiryHeight: n.node.Chain().App().Height() + 100}
	if err := receipt.SignRecord(buyerKey, chainID, &rec); err != nil {
		t.Fatal(err)
	}
	raw, err := cborx.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	answer := filepath.Join(t.TempDir(), "answer.json")
	body := fmt.Sprintf(`{"choices":[],"tenzro":{"payment":{"price":7,"signed":{"price":7,"record":%q}}}}`, base64.StdEncoding.EncodeToString(raw))
	if err := os.WriteFile(answer, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	out := mustTx(t, "settle", "--api", n.api, "--key", n.buyerKey, "--record", "@"+answer)
	if !strings.Contains(out, "settled 1") {
		t.Errorf("settle printed no settled record:\n%s", out)
	}
	if e := n.escrow(t, n.buyer); e.Balance != 1000-7 {
		t.Fatalf("escrow %d after settling, want %d", e.Balance, 1000-7)
	}
	if out, err := runCLI(t, "tx", "settle", "--api", n.api, "--key", n.buyerKey, "--record", base64.StdEncoding.EncodeToString(raw)); err != nil ||
		!strings.Contains(out, "duplicate") {
		t.Fatalf("settling again: %v\n%s", err, out)
	}
	altered := rec
	altered.Price = 1
	cheaper, _ := cborx.Marshal(altered)
	if out, err := runCLI(t, "tx", "settle", "--api", n.api, "--key", n.buyerKey, "--record", base64.StdEncoding.EncodeToString(cheaper)); err != nil ||
		!strings.Contains(out, "duplicate") {
		t.Fatalf("the settled request again, at another price: %v\n%s", err, out)
	}
	altered.RequestDigest = terms.Hash32{8}
	bad, _ := cborx.Marshal(altered)
	out, err = runCLI(t, "tx", "settle", "--api", n.api, "--key", n.buyerKey, "--record", base64.StdEncoding.EncodeToString(bad))
	if err == nil || !strings.Contains(err.Error(), "signature") {
		t.Fatalf("an altered record: %v\n%s", err, out)
	}
	if e := n.escrow(t, n.buyer); e.Balance != 1000-7 {
		t.Fatalf("escrow %d after the duplicate and the forgery, want %d", e.Balance, 1000-7)
	}
	for _, arg := range []string{"", "not base64!", "@" + filepath.Join(t.TempDir(), "missing.json")} {
		if _, err := runCLI(t, "tx", "settle", "--api", n.api, "--key", n.buyerKey, "--record", arg); err == nil {
			t.Errorf("--record %q accepted", arg)
		}
	}
}
