package node

import (
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
)

// chainNet is nv validator nodes (each also a gateway), np providers
// following the chain with funded operator accounts, and nu providers
// without a chain (never registered).
type chainNet struct {
	spec       consensus.Devnet
	validators []*Node
	registered []*Node
	unchained  []*Node
}

func newChainNet(t testing.TB, nv, np, nu int, params ledger.Params, valOpts ...func(*Config)) *chainNet {
	t.Helper()
	return newChainNetWith(t, nv, np, nu, params, chainExtra{}, valOpts...)
}

// chainExtra adds to a chainNet: accounts funded at genesis, options
// applied to each registered provider's config.
type chainExtra struct {
	funded   map[terms.AccountID]uint64
	provOpts []func(*Config)
	// selfEscrow opens each provider's operator an escrow with itself as
	// settler (a serving provider paying its expert holders).
	selfEscrow bool
	// provNode, if set, gives provider i its assembly options (a fault).
	provNode func(i int) Options
}

func newChainNetWith(t testing.TB, nv, np, nu int, params ledger.Params, extra chainExtra, valOpts ...func(*Config)) *chainNet {
	t.Helper()
	c := &chainNet{spec: consensus.Devnet{Dir: t.TempDir(), ChainID: "tenzro-pins-test", BlockTime: 100 * time.Millisecond,
		Params: params, Funded: map[terms.AccountID]uint64{}}}
	vals := make([]Config, nv)
	for i := range vals {
		vals[i] = testConfig(t, RoleValidator, "software", nil)
		vals[i].Router.Buyers = []BuyerConfig{{Payer: testBuyer().String(), TokenSHA256: TokenHash(testToken)}}
		vals[i].Chain.Enabled, vals[i].Chain.P2PListen = true, nodetest.FreeTCP(t)
		op := accountKey(t, vals[i])
		c.spec.Validators = append(c.spec.Validators, consensus.DevnetValidator{Home: filepath.Join(vals[i].Home, "chain"),
			P2PListen: vals[i].Chain.P2PListen, Operator: op})
		// The buyer pays each gateway from its own escrow; a validator's
		// probes are paid from its escrow with itself.
		c.spec.Escrows = append(c.spec.Escrows, ledger.GenesisEscrow{Payer: testBuyer(), Settler: op, Amount: testBuyerEscrow},
			ledger.GenesisEscrow{Payer: op, Settler: op, Amount: testBuyerEscrow})
		for _, o := range valOpts {
			o(&vals[i])
		}
	}
	provs := make([]Config, np)
	for i := range provs {
		provs[i] = testConfig(t, RoleProvider, "software", nil)
		provs[i].Chain.Enabled, provs[i].Chain.P2PListen = true, nodetest.FreeTCP(t)
		c.spec.Funded[accountKey(t, provs[i])] = 10 * params.MinServingBond
		if extra.selfEscrow {
			op := accountKey(t, provs[i])
			c.spec.Escrows = append(c.spec.Escrows, ledger.GenesisEscrow{Payer: op, Settler: op, Amount: testBuyerEscrow})
		}
		for _, o := range extra.provOpts {
			o(&provs[i])
		}
	}
	for a, v := range extra.funded {
		c.spec.Funded[a] = v
	}
	written, err := consensus.DevnetGenesis(c.spec)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(c.spec.Dir, "genesis.json"))
	if err != nil {
		t.Fatal(err)
	}
	var peers []string
	for i := range vals {
		vals[i].Chain.PersistentPeers = written[i].Peers
		if i > 0 { // the validators' gossip meets through the first one
			vals[i].P2P.Bootstrap = c.validators[0].Host().Addrs()[:1]
		}
		n := startNode(t, vals[i])
		c.validators = append(c.validators, n)
		peers = append(peers, n.Chain().NodeID()+"@"+strings.TrimPrefix(vals[i].Chain.P2PListen, "tcp://"))
	}
	boot := c.validators[0].Host().Addrs()[:1]
	for i := range provs {
		provs[i].P2P.Bootstrap, provs[i].Chain.PersistentPeers = boot, peers
		dst := filepath.Join(provs[i].Path(provs[i].Chain.Home), "config", "genesis.json")
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, doc, 0o644); err != nil {
			t.Fatal(err)
		}
		o := Options{Logger: testLogger()}
		if extra.provNode != nil {
			o = extra.provNode(i)
		}
		c.registered = append(c.registered, startNodeWith(t, provs[i], o))
	}
	for range nu {
		c.unchained = append(c.unchained, startNode(t, testConfig(t, RoleProvider, "software", boot)))
	}
	return c
}

// testBuyerEscrow funds each test escrow at genesis, in micro-units.
const testBuyerEscrow = 1_000_000_000

// testBuyerKey is the chain account behind testToken on chain gateways.
var testBuyerKey = ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))

func testBuyer() terms.AccountID {
	return terms.AccountOf(testBuyerKey.Public().(ed25519.PublicKey))
}

func accountKey(t testing.TB, cfg Config) terms.AccountID {
	t.Helper()
	k, err := consensus.LoadOrCreateAccountKey(cfg.Path(AccountKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	return terms.AccountOf(k.Public().(ed25519.PublicKey))
}

// testChainParams are small bonds and a short hour.
func testChainParams(hour uint64) ledger.Params {
	p := ledger.DefaultParams()
	p.MinServingBond, p.HourSeconds, p.SLAWindowHours = 1000, hour, 4
	return p
}

// listed returns how node n lists provider p.
func listed(t testing.TB, n *Node, p *Node) (router.ProviderView, bool) {
	t.Helper()
	res, err := n.rpcCall("tenzro_listProviders", "")
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(res)
	var views []router.ProviderView
	if err := json.Unmarshal(js, &views); err != nil {
		t.Fatalf("listProviders %s: %v", js, err)
	}
	for _, v := range views {
		if v.PeerID == p.Host().ID().String() {
			return v, true
		}
	}
	return router.ProviderView{}, false
}

// askPinned sends a chat request pinned to provider p at a verification
// level (opting in to unregistered providers if asked) and returns the
// status and body.
func askPinned(t *testing.T, gw, p *Node, level string, allowUnregistered ...bool) (int, string) {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"model": DevnetModelName, "max_tokens": 4,
		"messages": []map[string]string{{"role": "user", "content": "hi"}},
		"tenzro": map[string]any{"verification": level, "provider": p.Host().ID().String(), "hedge": false,
			"allow_unregistered": len(allowUnregistered) > 0 && allowUnregistered[0]}})
	return postChat(t, gw, testToken, string(body))
}

// TestChainPinsAndRegistration: a provider following the chain registers
// itself at start with the minimum bond; the gateway lists it registered
// with its consensus standing and pins its peer to the chain's machine; a
// provider without a chain is listed unregistered, standing 0, and is
// routed to at level none only, when the buyer opts in.
func TestChainPinsAndRegistration(t *testing.T) {
	params := testChainParams(3600)
	c := newChainNet(t, 1, 1, 1, params)
	gw, reg, unreg := c.validators[0], c.registered[0], c.unchained[0]

	var p ledger.Provider
	nodetest.Eventually(t, 60*time.Second, "the provider's registration to commit", func() bool {
		var ok bool
		p, ok, _ = gw.Chain().Provider(t.Context(), reg.Identity().MachineID())
		return ok
	})
	if p.PeerID != reg.Host().ID().String() || p.Bond != params.MinServingBond || p.Operator != accountKey(t, reg.Config()) {
		t.Fatalf("registration %+v", p)
	}
	warm := func(n *Node) bool {
		for _, o := range gw.Table().Offers(DevnetModelName) {
			if o.Peer == n.Host().ID() && o.Status == router.StatusUp && o.State == gossip.StateWarm {
				return true
			}
		}
		return false
	}
	nodetest.Eventually(t, 60*time.Second, "both providers warm at the gateway", func() bool { return warm(reg) && warm(unreg) })

	var v router.ProviderView
	nodetest.Eventually(t, 10*time.Second, "the registered provider listed registered", func() bool {
		v, _ = listed(t, gw, reg)
		return v.Registered != nil && *v.Registered
	})
	st, err := gw.Chain().Standing(t.Context(), reg.Identity().MachineID(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if v.StandingBP == nil || uint64(*v.StandingBP) != st.StandingBP || st.StandingBP != params.StandingBondedBP {
		t.Fatalf("listed standing %v, chain %d, want the bonded component %d", v.StandingBP, st.StandingBP, params.StandingBondedBP)
	}
	if m, ok := gw.Gossip().Validator().Pins().Lookup(reg.Host().ID()); !ok || m != reg.Identity().MachineID() {
		t.Fatalf("gateway pins %s to %s %v", reg.Host().ID(), m, ok)
	}
	u, ok := listed(t, gw, unreg)
	if !ok || u.Registered == nil || *u.Registered || u.StandingBP != nil {
		t.Fatalf("unregistered provider listed %+v", u)
	}

	if code, body := askPinned(t, gw, unreg, "receipt"); code != http.StatusServiceUnavailable || !strings.Contains(body, "no_provider") {
		t.Fatalf("unregistered provider at level receipt: %d %.300s", code, body)
	}
	if code, body := askPinned(t, gw, unreg, "none"); code != http.StatusServiceUnavailable {
		t.Fatalf("unregistered provider at level none, not opted in: %d %.300s", code, body)
	}
	if code, body := askPinned(t, gw, unreg, "none", true); code != http.StatusOK {
		t.Fatalf("unregistered provider at level none, opted in: %d %.300s", code, body)
	}
	if code, body := askPinned(t, gw, reg, "receipt"); code != http.StatusOK {
		t.Fatalf("registered provider at level receipt: %d %.300s", code, body)
	}
}
