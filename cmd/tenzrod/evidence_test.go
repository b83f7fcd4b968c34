package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/evidence"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/consensus/testnet"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// submitTxs signs payloads as key's next transactions, broadcasts them and
// waits until each commits with code 0; it returns the last height.
func submitTxs(ctx context.Context, t *testing.T, n *consensus.Node, nonces *ledgertest.Nonces, key ed25519.PrivateKey, payloads ...any) int64 {
	t.Helper()
	var h int64
	for _, p := range payloads {
		hash, err := n.BroadcastTx(ctx, nonces.Sign(t, key, p))
		if err != nil {
			t.Fatalf("broadcast %T: %v", p, err)
		}
		r, err := n.WaitTx(ctx, hash)
		if err != nil || r.Code != 0 {
			t.Fatalf("%T: %v %v %s", p, err, r.Code, r.Log)
		}
		h = r.Height
	}
	return h
}

// TestEvidenceExportAndVerifyCLI settles payment records on an in-process
// 2-validator testnet, exports the buyer's pack through `evidence export`
// (against a node API answering tenzro_getEvidencePack from the testnet),
// verifies it offline with `evidence verify` against the genesis, and
// checks that a tampered price makes verify fail.
func TestEvidenceExportAndVerifyCLI(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	buyerKey, opKey := ledgertest.NewKey(), ledgertest.NewKey()
	buyer := ledgertest.Account(buyerKey)
	params := ledger.DefaultParams()
	params.MinServingBond = 1
	dir := t.TempDir()
	net, err := testnet.Start(ctx, filepath.Join(dir, "net"), testnet.Options{Validators: 2, Params: &params,
		Accounts: []ledger.GenesisAccount{{Account: buyer, Balance: 1_000_000},
			{Account: ledgertest.Account(opKey), Balance: 10}}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := net.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	}()
	prov := testMachine(t)
	reg, err := prov.Register(net.ChainID, ledgertest.Account(opKey), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	node := net.Nodes[0]
	nonces := ledgertest.NewNonces(net.ChainID)
	submitTxs(ctx, t, node, nonces, opKey, reg)
	from := submitTxs(ctx, t, node, nonces, buyerKey, &ledger.EscrowFund{Amount: 100_000})
	recs := make([]receipt.PaymentRecord, 3)
	for i := range recs {
		recs[i] = receipt.PaymentRecord{Payer: buyer, Provider: prov.MachineID(), RequestDigest: terms.Hash32{byte(i + 1)},
			QuoteDigest: terms.Hash32{0xcc}, Price: uint64(100 * (i + 1)), ExpiryHeight: 300}
		// Receipts are required, and the buyer settles its own escrow.
		if recs[i].Receipt, recs[i].ReceiptHash, recs[i].RequestDigest, err = prov.PaidReceipt(recs[i].RequestDigest[:], buyer, buyer, 0); err != nil {
			t.Fatal(err)
		}
		if err := ledger.NewSigner(buyerKey, net.ChainID).SignRecord(&recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	to := submitTxs(ctx, t, node, nonces, buyerKey, &ledger.Settlement{Records: recs})

	// A node API that answers tenzro_getEvidencePack from the testnet.
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Params struct {
				Account    string `json:"account"`
				FromHeight int64  `json:"from_height"`
				ToHeight   int64  `json:"to_height"`
			} `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		acct, _ := terms.ParseAccountID(req.Params.Account)
		pack, err := evidence.Export(r.Context(), node, acct, req.Params.FromHeight, req.Params.ToHeight)
		if err != nil {
			t.Errorf("export: %v", err)
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": pack})
	}))
	defer api.Close()

	packFile := filepath.Join(dir, "pack.json")
	out, err := runCLI(t, "evidence", "export", "--api", api.URL, "--account", buyer.String(),
		"--from", fmt.Sprint(from), "--to", fmt.Sprint(to), "--out", packFile)
	if err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	out, err = runCLI(t, "evidence", "verify", packFile, "--validators", net.GenesisFile)
	if err != nil {
		t.Fatalf("verify: %v\n%s", err, out)
	}
	for _, want := range []string{
		"Chain " + net.ChainID,
		fmt.Sprintf("account %s settled exactly 3 payment records at heights %d..%d", buyer, from, to),
		"paying 600 micro-units in total",
		"signed by 2 of 2 validators",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}

	// The same file with one price changed no longer verifies.
	raw, err := os.ReadFile(packFile)
	if err != nil {
		t.Fatal(err)
	}
	tampered := filepath.Join(dir, "tampered.json")
	pack, err := evidence.ReadFile(packFile)
	if err != nil {
		t.Fatal(err)
	}
	pack.Records[1].Record.Price = 1
	if err := pack.WriteFile(tampered); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(tampered); string(b) == string(raw) {
		t.Fatal("tampering changed nothing in the file")
	}
	out, err = runCLI(t, "evidence", "verify", tampered, "--validators", net.GenesisFile)
	if err == nil || !strings.Contains(err.Error(), "does NOT verify") {
		t.Fatalf("tampered pack: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "evidence", "verify", packFile); err == nil || !strings.Contains(err.Error(), "--validators") {
		t.Fatalf("verify without --validators: %v", err)
	}
}
