package settle

import (
	"context"
	"crypto/ed25519"
	"encoding/binary"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/consensus/testnet"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// recordFee is the chain's FeePerRecord in these tests: an operator is
// credited price − recordFee per settled record.
const recordFee = 1

// The tests share one single-validator chain (started on first use) and
// give each test its own accounts, escrow and machine.
var (
	chainOnce sync.Once
	chainNet  *testnet.Net
	chainErr  error
	richKey   = ledgertest.NewKey()
	richMu    sync.Mutex
	richSub   *consensus.Submitter
)

func TestMain(m *testing.M) {
	code := m.Run()
	if chainNet != nil {
		if err := chainNet.Stop(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, "stop chain:", err)
			code = 1
		}
	}
	if chainDir != "" {
		os.RemoveAll(chainDir)
	}
	os.Exit(code)
}

var chainDir string

// sharedChain returns the running test chain.
func sharedChain(t testing.TB) *testnet.Net {
	t.Helper()
	chainOnce.Do(func() {
		chainDir, chainErr = os.MkdirTemp("", "settle-chain-")
		if chainErr != nil {
			return
		}
		p := ledger.DefaultParams()
		p.MinServingBond, p.FeePerRecord = 1, recordFee
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		// scripts/bench-settle runs the benchmarks on 4 validators.
		validators := 1
		if v, err := strconv.Atoi(os.Getenv("TENZRO_SETTLE_VALIDATORS")); err == nil && v > 0 {
			validators = v
		}
		chainNet, chainErr = testnet.Start(ctx, chainDir, testnet.Options{
			Validators: validators, BlockTime: 60 * time.Millisecond, Params: &p,
			Accounts: []ledger.GenesisAccount{{Account: ledgertest.Account(richKey), Balance: 1 << 60}},
		})
		if chainErr == nil {
			richSub, chainErr = consensus.NewSubmitter(chainNet.Nodes[0], richKey, nil)
		}
	})
	if chainErr != nil {
		t.Fatal(chainErr)
	}
	return chainNet
}

// world is one test's accounts on the shared chain: a buyer with an
// escrow whose settler is the gateway, an operator with a registered
// machine.
type world struct {
	t        testing.TB
	net      *testnet.Net
	node     *consensus.Node
	chain    Chain
	buyer    ed25519.PrivateKey
	gateway  ed25519.PrivateKey
	operator ed25519.PrivateKey
	machine  *ledgertest.Machine
	escrow   uint64

	mu    sync.Mutex
	calls map[int]call // the receipt of each call record(i, …) pays for
}

// call is one served call's receipt, as its provider signed it.
type call struct {
	env       []byte
	hash, req terms.Hash32
}

// progress is a context for a test on the shared chain, bounded by the
// chain's progress rather than the wall clock: a loaded machine makes the
// test slower, a chain that stopped fails it within a minute.
func (w *world) progress() context.Context {
	ctx, cancel := w.net.Progress(context.Background(), time.Minute)
	w.t.Cleanup(cancel)
	return ctx
}

func newWorld(t testing.TB, escrow uint64) *world {
	t.Helper()
	net := sharedChain(t)
	w := &world{t: t, net: net, node: net.Nodes[0], chain: NodeChain(net.Nodes[0]),
		buyer: ledgertest.NewKey(), gateway: ledgertest.NewKey(), operator: ledgertest.NewKey(), escrow: escrow}
	m := ledgertest.TestMachine(t, time.Now().Add(-time.Hour), time.Now().Add(24*time.Hour))
	w.machine, w.calls = m, map[int]call{}
	ctx := context.Background()
	richMu.Lock()
	for _, k := range []ed25519.PrivateKey{w.buyer, w.gateway, w.operator} {
		w.mustSubmit(ctx, richSub, &ledger.Transfer{To: ledgertest.Account(k), Amount: escrow + 1_000_000})
	}
	richMu.Unlock()
	w.mustSubmit(ctx, w.submitter(w.buyer), &ledger.EscrowFund{Amount: escrow, Settler: ledgertest.Account(w.gateway)})
	reg, err := m.Register(net.ChainID, ledgertest.Account(w.operator), 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	w.mustSubmit(ctx, w.submitter(w.operator), reg)
	return w
}

func (w *world) submitter(k ed25519.PrivateKey) *consensus.Submitter {
	s, err := consensus.NewSubmitter(w.node, k, nil)
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}

func (w *world) mustSubmit(ctx context.Context, s *consensus.Submitter, p any) consensus.TxResult {
	w.t.Helper()
	r, err := s.Submit(ctx, p)
	if err != nil {
		w.t.Fatalf("submit %T: %v", p, err)
	}
	return r
}

// record is an unsigned record for call i of the buyer, priced price:
// the machine's receipt of call i (signed once per world) names the buyer
// and the gateway and no least price.
func (w *world) record(i int, price uint64) receipt.PaymentRecord {
	c := w.call(i)
	return receipt.PaymentRecord{Payer: ledgertest.Account(w.buyer), Provider: w.machine.MachineID(), RequestDigest: c.req,
		QuoteDigest: c.req, Price: price, ReceiptHash: c.hash, Receipt: c.env, Units: uint64(i)}
}

// call returns the receipt of the buyer's call i.
func (w *world) call(i int) call {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.calls[i]; ok {
		return c
	}
	b := ledgertest.Account(w.buyer)
	seed := binary.BigEndian.AppendUint64(b[:], uint64(i)) // distinct across worlds
	env, hash, req, err := w.machine.PaidReceipt(seed, b, ledgertest.Account(w.gateway), 0)
	if err != nil {
		w.t.Fatal(err)
	}
	c := call{env: env, hash: hash, req: req}
	w.calls[i] = c
	return c
}

// signed is record(i, price) signed by the gateway, valid for 1000 blocks.
func (w *world) signed(i int, price uint64) receipt.PaymentRecord {
	r := w.record(i, price)
	r.Time = time.Now().Unix()
	r.ExpiryHeight = w.node.App().Height() + 300 // within the withdrawal delay
	if err := receipt.SignRecord(w.gateway, w.net.ChainID, &r); err != nil {
		w.t.Fatal(err)
	}
	return r
}

func (w *world) escrowBalance() uint64 {
	e, ok, err := w.node.Escrow(context.Background(), ledgertest.Account(w.buyer), ledgertest.Account(w.gateway))
	if err != nil || !ok {
		w.t.Fatalf("escrow: %v %v", ok, err)
	}
	return e.Balance
}

func (w *world) balance(k ed25519.PrivateKey) uint64 {
	a, _, err := w.node.Account(context.Background(), ledgertest.Account(k))
	if err != nil {
		w.t.Fatal(err)
	}
	return a.Balance
}

// settledOnChain counts recs settled on chain.
func (w *world) settledOnChain(recs []receipt.PaymentRecord) int {
	n := 0
	for i := range recs {
		_, ok, err := w.chain.Settled(context.Background(), recs[i].Payer, recs[i].RequestDigest)
		if err != nil {
			w.t.Fatal(err)
		}
		if ok {
			n++
		}
	}
	return n
}

// eventually polls cond every 20ms until it holds or d passes.
func eventually(t testing.TB, d time.Duration, what string, cond func() bool) {
	t.Helper()
	end := time.Now().Add(d)
	for !cond() {
		if time.Now().After(end) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// String names a status in test failures; production reports outcomes by
// metric (noteOutcome) and log fields, never by this name.
func (s Status) String() string {
	if n, ok := enumName(uint8(s), "error", "settled", "duplicate", "skipped", "preempted"); ok {
		return n
	}
	return fmt.Sprintf("status %d", uint8(s))
}
