package web_test

import (
	"context"
	"crypto/ed25519"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/node/openai"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
)

const buyerToken = "sk-tenzro-web-test-buyer"

// buyerKey is the chain account behind buyerToken.
var buyerKey = ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))

func buyer() terms.AccountID { return terms.AccountOf(buyerKey.Public().(ed25519.PublicKey)) }

func TestMain(m *testing.M) {
	level := slog.LevelWarn
	if os.Getenv("TENZRO_TEST_LOG") != "" {
		level = slog.LevelDebug
	}
	slog.SetDefault(slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level})))
	code := m.Run()
	nodetest.CleanupShared()
	os.Exit(code)
}

// market is the page's test network: one validator (probing the providers,
// so the price feed fills), providers and one gateway following its chain,
// the buyer paying the gateway from an escrow opened at genesis.
type market struct {
	validator *node.Node
	providers []*node.Node
	gateway   *node.Node
}

func config(t testing.TB, role node.Role) node.Config {
	t.Helper()
	cfg := node.Default(role)
	cfg.Home = t.TempDir()
	cfg.Network = "web-test"
	cfg.API.Listen = "127.0.0.1:0"
	cfg.P2P.Listen = nodetest.LoopbackListen()
	cfg.Identity.Backend = "software"
	cfg.Chain.Enabled, cfg.Chain.P2PListen = true, nodetest.FreeTCP(t)
	return cfg
}

func accountOf(t testing.TB, cfg node.Config) terms.AccountID {
	t.Helper()
	k, err := consensus.LoadOrCreateAccountKey(cfg.Path(node.AccountKeyFile))
	if err != nil {
		t.Fatal(err)
	}
	return terms.AccountOf(k.Public().(ed25519.PublicKey))
}

func startMarket(t *testing.T, providers int) *market {
	t.Helper()
	dir, id := nodetest.SharedModel(t, node.EnsureDevnetModel)
	params := ledger.DefaultParams()
	params.MinServingBond, params.HourSeconds, params.SLAWindowHours = 1000, 3600, 4
	spec := consensus.Devnet{Dir: t.TempDir(), ChainID: "tenzro-web-test", BlockTime: 100 * time.Millisecond, Params: params,
		Funded: map[terms.AccountID]uint64{}}

	val := config(t, node.RoleValidator)
	val.Router.ProbeInterval = 2 * time.Second
	op := accountOf(t, val)
	spec.Validators = []consensus.DevnetValidator{{Home: filepath.Join(val.Home, "chain"), P2PListen: val.Chain.P2PListen, Operator: op}}
	gw := config(t, node.RoleGateway)
	gw.Router.Buyers = []node.BuyerConfig{{Payer: buyer().String(), TokenSHA256: openai.TokenHash(buyerToken)}}
	// The gateway's outbox settles what the providers have not after its
	// grace, paying the settlement's fees: its account must exist.
	spec.Funded[accountOf(t, gw)] = 1_000_000
	spec.Escrows = []ledger.GenesisEscrow{{Payer: buyer(), Settler: accountOf(t, gw), Amount: 1_000_000_000},
		{Payer: op, Settler: op, Amount: 1_000_000_000}} // the validator's probes pay from its own
	provs := make([]node.Config, providers)
	for i := range provs {
		provs[i] = config(t, node.RoleProvider)
		provs[i].Provider.Region = []string{"DE", "US", "JP", "FR"}[i%4]
		provs[i].Provider.AnnounceInterval = time.Second
		provs[i].Provider.Models = []node.ModelConfig{node.DevnetModel(dir, id)}
		provs[i].Provider.UnknownConcurrency, provs[i].Provider.UnknownRatePerMinute = 64, 1_000_000
		spec.Funded[accountOf(t, provs[i])] = 10 * params.MinServingBond
	}
	written, err := consensus.DevnetGenesis(spec)
	if err != nil {
		t.Fatal(err)
	}
	genesis, err := os.ReadFile(filepath.Join(spec.Dir, "genesis.json"))
	if err != nil {
		t.Fatal(err)
	}
	val.Chain.PersistentPeers = written[0].Peers
	var validator *node.Node // started before any follower is built
	follower := func(cfg node.Config) node.Config {
		cfg.Chain.PersistentPeers = []string{validator.Chain().NodeID() + "@" + strings.TrimPrefix(val.Chain.P2PListen, "tcp://")}
		dst := filepath.Join(cfg.Path(cfg.Chain.Home), "config", "genesis.json")
		if err := os.MkdirAll(filepath.Dir(dst), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, genesis, 0o644); err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	net := nodetest.Build(t, nodetest.Spec{Validators: 1, Providers: providers, Gateways: 1},
		func(t testing.TB, r nodetest.Role, i int, boot []string) *node.Node {
			var cfg node.Config
			switch r {
			case nodetest.RoleValidator:
				cfg = val
			case nodetest.RoleProvider:
				cfg = follower(provs[i])
			default:
				cfg = follower(gw)
			}
			cfg.P2P.Bootstrap = boot
			ctx, cancel := context.WithTimeout(context.Background(), nodetest.StartTimeout)
			defer cancel()
			n, err := node.New(ctx, cfg, node.Options{Logger: slog.Default()})
			if err != nil {
				t.Fatalf("new %s %d: %v", r, i, err)
			}
			if r == nodetest.RoleValidator {
				validator = n
			}
			return n
		})
	m := &market{validator: net.Validators[0], providers: net.Providers, gateway: net.Gateways[0]}
	nodetest.Eventually(t, 60*time.Second, "every provider registered, up and warm at the gateway", func() bool {
		ready := 0
		for _, v := range m.gateway.Table().List() {
			if v.Registered != nil && *v.Registered && v.Status == router.StatusUp && len(v.Models) > 0 && v.Models[0].State == string(gossip.StateWarm) {
				ready++
			}
		}
		return ready == providers
	})
	return m
}
