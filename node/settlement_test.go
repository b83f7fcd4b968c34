package node

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/chainapi"
	"github.com/tenzrod/tenzrod/consensus/evidence"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
)

// paidCall is what a buyer holds of one paid call: the signed record's
// price and provider, and the chain height when the answer arrived.
type paidCall struct {
	price   uint64
	machine string
	digest  string
	height  int64
}

// callPaid sends one chat request pinned to p and returns its signed
// payment record's figures; the call must succeed.
func callPaid(t *testing.T, gw, p *Node) paidCall {
	t.Helper()
	code, body := askPinned(t, gw, p, "receipt")
	if code != http.StatusOK {
		t.Fatalf("call to %s: %d %s", p.Host().ID(), code, body)
	}
	var resp struct {
		Tenzro struct {
			Payment struct {
				Price  uint64 `json:"price"`
				Signed *struct {
					Price         uint64 `json:"price"`
					Provider      string `json:"provider_machine"`
					RequestDigest string `json:"request_digest"`
					Payer         string `json:"payer"`
					Sig           string `json:"sig"`
				} `json:"signed"`
			} `json:"payment"`
		} `json:"tenzro"`
	}
	if err := json.Unmarshal([]byte(body), &resp); err != nil {
		t.Fatalf("response %s: %v", body, err)
	}
	s := resp.Tenzro.Payment.Signed
	if s == nil || s.Sig == "" || s.Price == 0 || s.Price != resp.Tenzro.Payment.Price || s.Payer != testBuyer().String() {
		t.Fatalf("response carries no signed payment record for the buyer: %s", body)
	}
	return paidCall{price: s.Price, machine: s.Provider, digest: s.RequestDigest, height: gw.Chain().App().Height()}
}

func escrowBalance(t *testing.T, c *consensus.Node, payer, settler terms.AccountID) uint64 {
	t.Helper()
	e, ok, err := c.Escrow(context.Background(), payer, settler)
	if err != nil || !ok {
		t.Fatalf("escrow of %s with %s: ok %v, %v", payer, settler, ok, err)
	}
	return e.Balance
}

func accountBalance(t *testing.T, c *consensus.Node, a terms.AccountID) uint64 {
	t.Helper()
	acct, _, err := c.Account(context.Background(), a)
	if err != nil {
		t.Fatal(err)
	}
	return acct.Balance
}

// waitRegistered waits until gw lists every provider registered and up.
func waitRegistered(t testing.TB, gw *Node, provs []*Node) {
	t.Helper()
	for _, p := range provs {
		nodetest.Eventually(t, 90*time.Second, "provider registered and up at the gateway", func() bool {
			v, ok := listed(t, gw, p)
			return ok && v.Registered != nil && *v.Registered && v.Status == router.StatusUp
		})
	}
}

// TestPaidCallsSettle: on 4 validators and 2 providers, 50 paid calls
// through one gateway settle on chain within a few blocks, collected by
// the providers: the buyer's escrow falls by exactly the prices its
// responses carry, each provider's operator rises by exactly its share
// minus the per-record fee (which the fee pool gains), and evidence packs
// for the buyer and for each provider verify offline and prove exactly
// those records.
func TestPaidCallsSettle(t *testing.T) {
	params := testChainParams(3600)
	params.FeePerRecord = 3
	net := newChainNet(t, 4, 2, 0, params, func(c *Config) { c.Router.ProbeInterval = 0 })
	gw, c := net.validators[0], net.validators[0].Chain()
	waitRegistered(t, gw, net.registered)

	settler := accountKey(t, gw.Config())
	ops := make([]terms.AccountID, len(net.registered))
	machines := make([]string, len(net.registered))
	for i, p := range net.registered {
		ops[i], machines[i] = accountKey(t, p.Config()), p.id.MachineID().String()
	}
	// Let the registrations' own transactions settle before the snapshot.
	nodetest.Eventually(t, 30*time.Second, "registrations committed", func() bool {
		for _, m := range machines {
			id, _ := identity.ParseMachineID(m)
			if _, ok, err := c.Provider(context.Background(), id); err != nil || !ok {
				return false
			}
		}
		return true
	})
	escrow0 := escrowBalance(t, c, testBuyer(), settler)
	bal0 := []uint64{accountBalance(t, c, ops[0]), accountBalance(t, c, ops[1])}
	pool0 := accountBalance(t, c, ledger.FeePoolAccount)
	from := c.App().Height() + 1

	const calls = 50
	var total uint64
	share, count := make([]uint64, 2), make([]int, 2)
	got := make([]paidCall, 0, calls)
	for i := range calls {
		pc := callPaid(t, gw, net.registered[i%2])
		j := slices.Index(machines, pc.machine)
		if j < 0 {
			t.Fatalf("record names machine %s, not a provider's", pc.machine)
		}
		total += pc.price
		share[j] += pc.price - params.FeePerRecord
		count[j]++
		got = append(got, pc)
	}
	nodetest.Eventually(t, 60*time.Second, "every record settled", func() bool {
		return escrowBalance(t, c, testBuyer(), settler) == escrow0-total
	})
	// tenzro_getAccount shows the buyer's escrow at this gateway, fallen.
	res, err := gw.rpcCall("tenzro_getAccount", fmt.Sprintf(`{"account":%q}`, testBuyer()))
	if err != nil {
		t.Fatal(err)
	}
	v := res.(chainapi.AccountView)
	at := slices.IndexFunc(v.Escrows, func(e ledger.Escrow) bool { return e.Settler == settler })
	if len(v.Escrows) != len(net.validators) || at < 0 || v.Escrows[at].Balance != escrow0-total {
		t.Errorf("tenzro_getAccount escrows %+v, want one per gateway, with settler %s holding %d", v.Escrows, settler, escrow0-total)
	}
	// The gateway learns of the providers' settlements within seconds (not
	// after its 60 s grace), so the buyer can spend what is left at once.
	nodetest.Eventually(t, 20*time.Second, "the gateway's outbox sees its records settled", func() bool {
		return gw.outbox.Unsettled(testBuyer()) == 0
	})
	for i, op := range ops {
		if b := accountBalance(t, c, op); b != bal0[i]+share[i] {
			t.Errorf("operator %d: balance %d, want %d + %d (its %d records minus fees)", i, b, bal0[i], share[i], count[i])
		}
	}
	if b := accountBalance(t, c, ledger.FeePoolAccount); b != pool0+calls*params.FeePerRecord {
		t.Errorf("fee pool %d, want %d + %d", b, pool0, calls*params.FeePerRecord)
	}

	ctx := context.Background()
	to := c.App().Height() // Export waits for the block that certifies it
	trusted, err := evidence.LoadValidatorSet(filepath.Join(net.spec.Dir, "genesis.json"))
	if err != nil {
		t.Fatal(err)
	}
	pack, err := evidence.Export(ctx, c, testBuyer(), from, to)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := evidence.Verify(pack, trusted)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Records) != calls || rep.TotalPaid != total {
		t.Fatalf("buyer's pack proves %d records paying %d, want %d paying %d", len(rep.Records), rep.TotalPaid, calls, total)
	}
	settledAt := map[string]int64{}
	for _, r := range rep.Records {
		settledAt[r.Record.RequestDigest.String()] = r.Height
	}
	var lag []int64
	for _, pc := range got {
		h, ok := settledAt[pc.digest]
		if !ok {
			t.Fatalf("record %s is not in the buyer's pack", pc.digest)
		}
		lag = append(lag, h-pc.height)
	}
	slices.Sort(lag)
	t.Logf("blocks from call to settlement: p50 %d, p99 %d, max %d", lag[len(lag)/2], lag[len(lag)*99/100], lag[len(lag)-1])
	for i, m := range machines {
		id, _ := identity.ParseMachineID(m)
		pp, err := evidence.Export(ctx, c, id, from, to)
		if err != nil {
			t.Fatal(err)
		}
		pr, err := evidence.Verify(pp, trusted)
		if err != nil {
			t.Fatal(err)
		}
		if len(pr.Records) != count[i] {
			t.Errorf("provider %d's pack proves %d records, want %d", i, len(pr.Records), count[i])
		}
	}
}
