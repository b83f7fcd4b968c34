package devnet

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tenzrod/tenzrod/internal/freeport"
	"github.com/tenzrod/tenzrod/node/openai"

	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/node/validator"
	"github.com/tenzrod/tenzrod/p2p"
)

// nodePlan is one node's home, config and command line.
type nodePlan struct {
	entry NodeEntry
	args  []string
}

func (p nodePlan) logPath() string { return filepath.Join(p.entry.Home, "node.log") }

// providerRegions spreads devnet providers over a few coarse regions.
var providerRegions = []string{"DE", "FR", "US", "JP", "Europe"}

// plan writes every node's home and config and returns how to start them.
func plan(o Options, buyerToken string) ([]nodePlan, chainInfo, error) {
	if o.Fresh {
		entries, _ := os.ReadDir(o.Dir)
		for _, e := range entries {
			if e.IsDir() {
				if _, err := os.Stat(filepath.Join(o.Dir, e.Name(), node.ConfigFile)); err == nil {
					if err := os.RemoveAll(filepath.Join(o.Dir, e.Name())); err != nil {
						return nil, chainInfo{}, fmt.Errorf("devnet: %w", err)
					}
				}
			}
		}
		_ = os.Remove(filepath.Join(o.Dir, ManifestFile))
	}
	type spec struct {
		name   string
		role   node.Role
		idx    int
		holder bool // an expert holder (--moe-holders), role provider
	}
	var specs []spec
	for i := 0; i < o.Validators; i++ {
		specs = append(specs, spec{fmt.Sprintf("validator-%d", i), node.RoleValidator, i, false})
	}
	for i := 0; i < o.Providers; i++ {
		specs = append(specs, spec{fmt.Sprintf("provider-%d", i), node.RoleProvider, i, false})
	}
	for i := 0; i < o.MoEHolders; i++ {
		specs = append(specs, spec{fmt.Sprintf("%s%d", holderPrefix, i), node.RoleProvider, i, true})
	}
	for i := 0; i < o.Gateways; i++ {
		specs = append(specs, spec{fmt.Sprintf("gateway-%d", i), node.RoleGateway, i, false})
	}
	moe, err := newMoEPlan(o)
	if err != nil {
		return nil, chainInfo{}, err
	}
	tee, err := newTEEPlan(o)
	if err != nil {
		return nil, chainInfo{}, err
	}
	modelDir := filepath.Join(o.Dir, "models", node.DevnetModelName)
	modelID, err := node.EnsureDevnetModel(modelDir)
	if err != nil {
		return nil, chainInfo{}, err
	}
	ports, err := freePorts(len(specs))
	if err != nil {
		return nil, chainInfo{}, err
	}
	cfgs := make([]node.Config, len(specs))
	plans := make([]nodePlan, len(specs))
	var seeds []string // validators' addresses: everyone bootstraps off them
	for i, s := range specs {
		cfg := node.Default(s.role)
		cfg.Home = filepath.Join(o.Dir, s.name)
		cfg.Network = o.Network
		cfg.API.Listen = fmt.Sprintf("127.0.0.1:%d", ports[i].api)
		cfg.P2P.Listen = []string{
			fmt.Sprintf("/ip4/127.0.0.1/tcp/%d", ports[i].tcp),
			fmt.Sprintf("/ip4/127.0.0.1/udp/%d/quic-v1", ports[i].udp),
		}
		cfg.Identity.Backend = o.KeyBackend
		if s.role == node.RoleGateway {
			cfg.Identity.Backend = "software"
		}
		if s.role != node.RoleProvider {
			cfg.Router.Buyers = []node.BuyerConfig{{Account: BuyerAccount, TokenSHA256: openai.TokenHash(buyerToken), InitialCredit: BuyerCredit}}
			// Every router holds the devnet model's tokenizer and bills
			// its own token counts.
			cfg.Router.Tokenizers = []node.TokenizerConfig{{Dir: modelDir, ID: modelID}}
			if moe != nil {
				moe.tokenizer(&cfg)
			}
		}
		if s.role == node.RoleValidator {
			// Validators hold every model the devnet serves (dense and
			// MoE), so a dispute over any answer or expert batch finds a
			// committee.
			cfg.Validator.Models = []validator.ModelConfig{{Name: node.DevnetModelName, Dir: modelDir, ID: modelID}}
			if moe != nil {
				cfg.Validator.Models = append(cfg.Validator.Models, moe.held())
			}
		}
		if s.role == node.RoleValidator && o.ProbeInterval != nil {
			cfg.Router.ProbeInterval = *o.ProbeInterval
		}
		if s.role == node.RoleProvider {
			cfg.Provider.Region = providerRegions[s.idx%len(providerRegions)]
			cfg.Provider.AnnounceInterval = 5 * time.Second
			cfg.Provider.Models = []node.ModelConfig{node.DevnetModel(modelDir, modelID)}
			// Every devnet provider stands by as a session successor (each
			// is its own operator), so a session with continuity gets one
			// and its standby stream's claims land on the devnet chain.
			cfg.Provider.Standby.Enabled, cfg.Provider.Standby.FeePerHour = true, 3600
			switch {
			case s.holder:
				moe.holder(&cfg, s.idx)
			case moe != nil:
				moe.serving(&cfg)
			}
		}
		if err := os.MkdirAll(cfg.Home, 0o700); err != nil {
			return nil, chainInfo{}, fmt.Errorf("devnet: %w", err)
		}
		if err := tee.apply(&cfg, s.role == node.RoleProvider && !s.holder); err != nil {
			return nil, chainInfo{}, err
		}
		if _, err := p2p.LoadOrCreateKey(cfg.P2PConfig().KeyFile); err != nil {
			return nil, chainInfo{}, err
		}
		pid, err := p2p.PeerIDFromKeyFile(cfg.P2PConfig().KeyFile)
		if err != nil {
			return nil, chainInfo{}, err
		}
		full := make([]string, len(cfg.P2P.Listen))
		for j, a := range cfg.P2P.Listen {
			full[j] = a + "/p2p/" + pid.String()
		}
		if s.role == node.RoleValidator && len(seeds) < 3 {
			seeds = append(seeds, full[0])
		}
		cmd := string(s.role)
		if s.role == node.RoleGateway {
			cmd = "join"
		}
		cfgs[i] = cfg
		plans[i] = nodePlan{
			entry: NodeEntry{Name: s.name, Role: string(s.role), API: "http://" + cfg.API.Listen, P2P: full, Home: cfg.Home},
			args:  []string{cmd, "--home", cfg.Home},
		}
	}
	chain, err := setupChain(o, cfgs, ports)
	if err != nil {
		return nil, chainInfo{}, err
	}
	// Providers serve the devnet's gateways and validators (their probes)
	// in full; any other caller shares the unknown callers' budget.
	var routers []string
	for i := range cfgs {
		if cfgs[i].Role != node.RoleProvider {
			routers = append(routers, peerOf(plans[i].entry.P2P[0]))
		}
	}
	for i := range cfgs {
		if cfgs[i].Role == node.RoleProvider {
			cfgs[i].Provider.TrustedCallers = routers
		}
	}
	for i := range cfgs {
		for _, s := range seeds {
			if s != plans[i].entry.P2P[0] {
				cfgs[i].P2P.Bootstrap = append(cfgs[i].P2P.Bootstrap, s)
			}
		}
		if err := node.WriteConfig(cfgs[i], true); err != nil {
			return nil, chainInfo{}, fmt.Errorf("devnet: %s: %w", plans[i].entry.Name, err)
		}
	}
	return plans, chain, nil
}

// peerOf is the peer ID at the end of a full multiaddr.
func peerOf(addr string) string { return addr[strings.LastIndex(addr, "/")+1:] }

type nodePorts struct{ api, tcp, udp, chainP2P, chainRPC int }

// freePorts reserves n sets of loopback ports. TCP ports come from
// freeport, below the ephemeral range, so a node restarted on its old port
// finds it free; UDP ports are held as sockets all at once, so no two nodes
// get the same one, and released just before the children bind them.
func freePorts(n int) ([]nodePorts, error) {
	var closers []func() error
	defer func() {
		for _, c := range closers {
			_ = c()
		}
	}()
	tcp := func() (int, error) {
		p, err := freeport.TCP()
		if err != nil {
			return 0, fmt.Errorf("devnet: %w", err)
		}
		return p, nil
	}
	out := make([]nodePorts, n)
	for i := range out {
		var err error
		if out[i].api, err = tcp(); err != nil {
			return nil, err
		}
		if out[i].tcp, err = tcp(); err != nil {
			return nil, err
		}
		// The chain node's CometBFT p2p and RPC ports.
		if out[i].chainP2P, err = tcp(); err != nil {
			return nil, err
		}
		if out[i].chainRPC, err = tcp(); err != nil {
			return nil, err
		}
		c, err := net.ListenPacket("udp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("devnet: reserve port: %w", err)
		}
		closers = append(closers, c.Close)
		out[i].udp = c.LocalAddr().(*net.UDPAddr).Port
	}
	return out, nil
}
