package consensus_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	abci "github.com/cometbft/cometbft/abci/types"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/consensus/testnet"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

const testChain = ledgertest.Chain

var genesisTime = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func newProvider(t *testing.T) *testnet.Provider {
	t.Helper()
	p, err := testnet.NewProvider()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// chain drives an App directly through the ABCI calls CometBFT makes.
type chain struct {
	ledgertest.Driver
	app *consensus.App
}

// newChain starts an app in dir ("" = memory) with nVals validators and
// the given funded accounts.
func newChain(t testing.TB, dir string, genesis time.Time, params ledger.Params, nVals int, accts ...ledger.GenesisAccount) *chain {
	t.Helper()
	app, err := consensus.NewApp(dir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = app.Close() })
	d, g := ledgertest.NewDriver(t, genesis, params, nVals, accts...)
	state, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := app.InitChain(context.Background(), &abci.InitChainRequest{
		Time: genesis, ChainId: testChain, AppStateBytes: state, InitialHeight: 1,
	}); err != nil {
		t.Fatal(err)
	}
	return &chain{Driver: d, app: app}
}

// newMarket is a one-validator chain on which operator op has registered
// machine m and payers alice and bob have each funded their own escrow
// with 10_000.
func newMarket(t *testing.T) (c *chain, m *machine, alice, bob, op *ledger.Signer) {
	t.Helper()
	alice, ga := ledgertest.Signer(testChain, "alice", 1_000_000)
	bob, gb := ledgertest.Signer(testChain, "bob", 1_000_000)
	op, gop := ledgertest.Signer(testChain, "operator", 10_000)
	c = newChain(t, "", genesisTime, ledgertest.Params(), 1, ga, gb, gop)
	m = newMachine(t)
	c.mustApply(c.sign(op, m.register(t, op.Account())), c.sign(alice, &ledger.EscrowFund{Amount: 10_000}),
		c.sign(bob, &ledger.EscrowFund{Amount: 10_000}))
	return c, m, alice, bob, op
}

// newProviderChain is a one-validator chain on which operator op has
// registered provider p.
func newProviderChain(t *testing.T) (c *chain, p *testnet.Provider, op *ledger.Signer) {
	t.Helper()
	op, gop := ledgertest.Signer(testChain, "operator", 10_000)
	c = newChain(t, "", genesisTime, ledgertest.Params(), 1, gop)
	p = newProvider(t)
	c.mustApply(c.sign(op, p.Register(testChain, op.Account(), 1000, 60)))
	return c, p, op
}

// block finalizes and commits a block one second after the previous one.
func (c *chain) block(txs ...[]byte) *abci.FinalizeBlockResponse {
	c.T.Helper()
	res, err := c.app.FinalizeBlock(context.Background(), &abci.FinalizeBlockRequest{
		Txs: txs, Height: c.app.Height() + 1, Time: c.Tick(),
	})
	if err != nil {
		c.T.Fatal(err)
	}
	if _, err := c.app.Commit(context.Background(), &abci.CommitRequest{}); err != nil {
		c.T.Fatal(err)
	}
	return res
}

// mustApply commits txs in one block and fails unless each applied.
func (c *chain) mustApply(txs ...[]byte) *abci.FinalizeBlockResponse {
	c.T.Helper()
	res := c.block(txs...)
	for i, r := range res.TxResults {
		if r.Code != 0 {
			c.T.Fatalf("tx %d: code %d: %s", i, r.Code, r.Log)
		}
	}
	return res
}

// query runs a query and verifies its single proof against the app hash.
func (c *chain) query(path string, v any) bool {
	c.T.Helper()
	res, err := c.app.Query(context.Background(), &abci.QueryRequest{Path: path})
	if err != nil || res.Code != 0 {
		c.T.Fatalf("query %s: %v %s", path, err, res.GetLog())
	}
	if err := consensus.VerifyQuery(c.app.AppHash(), res.Value, res.ProofOps.Ops); err != nil {
		c.T.Fatalf("query %s: %v", path, err)
	}
	if len(res.Value) == 0 {
		return false
	}
	if err := cborx.UnmarshalCanonical(res.Value, ledger.MaxValueBytes, v); err != nil {
		c.T.Fatal(err)
	}
	return true
}

func (c *chain) account(id terms.AccountID) ledger.Account {
	c.T.Helper()
	var a ledger.Account
	c.query("account/"+id.String(), &a)
	return a
}

// sign signs payload with s at the account's next nonce.
func (c *chain) sign(s *ledger.Signer, payload any) []byte {
	c.T.Helper()
	return c.SignAt(s, c.account(s.Account()).Nonce, payload)
}

// machine is a registered-machine fixture that can sign receipts valid
// around genesisTime.
type machine struct {
	*ledgertest.Machine
}

func newMachine(t *testing.T) *machine {
	t.Helper()
	m := ledgertest.TestMachine(t, genesisTime.Add(-time.Hour), genesisTime.Add(24*time.Hour))
	return &machine{Machine: m}
}

func (m *machine) register(t *testing.T, op terms.AccountID) *ledger.ProviderRegister {
	t.Helper()
	reg, err := m.Register(testChain, op, 1000, 60)
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

// record is a payment record of s (its own settler) to m for the call
// seeded by d, with m's receipt of it.
func (m *machine) record(t *testing.T, s *ledger.Signer, d terms.Hash32, price uint64) receipt.PaymentRecord {
	t.Helper()
	env, hash, rd, err := m.PaidReceipt(d[:], s.Account(), s.Account(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return ledgertest.Signed(t, s, receipt.PaymentRecord{Payer: s.Account(), Provider: m.MachineID(), RequestDigest: rd,
		Price: price, Receipt: env, ReceiptHash: hash})
}
