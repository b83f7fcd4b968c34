package devnet

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/tenzrod/tenzrod/node"
)

// Options configure a devnet.
type Options struct {
	Dir        string
	Binary     string // the tenzrod executable the children run
	Network    string
	KeyBackend string // identity backend of validators and providers
	Validators int
	Providers  int
	Gateways   int
	Fresh      bool // remove previous node homes under Dir first
	Out        io.Writer
	// ProbeInterval is the validators' [router] probe_interval; nil keeps
	// the node default, 0 turns probes off.
	ProbeInterval *time.Duration
	// MoEHolders, when not 0, adds that many expert-holder processes
	// beyond Providers and a generated MoE model the providers serve with
	// its experts at the holders (moe.go).
	MoEHolders int
	// TEE gives the devnet a TEST-ONLY attestation root and each provider
	// a file-based test device, so `tee` can be tried without hardware
	// (tee.go).
	TEE bool
}

// Validate checks the options.
func (o Options) Validate() error {
	var errs []error
	if o.Dir == "" {
		errs = append(errs, errors.New("devnet: --dir is required"))
	}
	if o.Validators < 1 || o.Validators > 32 {
		errs = append(errs, fmt.Errorf("devnet: --validators %d outside 1..32", o.Validators))
	}
	if o.Providers < 0 || o.Providers > 32 {
		errs = append(errs, fmt.Errorf("devnet: --providers %d outside 0..32", o.Providers))
	}
	if err := checkMoEHolders(o.MoEHolders); err != nil {
		errs = append(errs, err)
	}
	if o.Gateways < 0 || o.Gateways > 8 {
		errs = append(errs, fmt.Errorf("devnet: --gateways %d outside 0..8", o.Gateways))
	}
	if o.ProbeInterval != nil && (*o.ProbeInterval < 0 || *o.ProbeInterval > time.Hour) {
		errs = append(errs, fmt.Errorf("devnet: --probe-interval %s outside 0s..1h", *o.ProbeInterval))
	}
	if o.Binary == "" {
		errs = append(errs, errors.New("devnet: no tenzrod binary to run"))
	}
	return errors.Join(errs...)
}

// NodeEntry is one node in devnet.json.
type NodeEntry struct {
	Name string   `json:"name"`
	Role string   `json:"role"`
	PID  int      `json:"pid"`
	API  string   `json:"api"`
	P2P  []string `json:"p2p"`
	Home string   `json:"home"`
}

// Manifest is devnet.json.
type Manifest struct {
	Network string      `json:"network"`
	Nodes   []NodeEntry `json:"nodes"`
	Gateway string      `json:"gateway"`
	// BuyerToken is the bearer token of the devnet's funded buyer at every
	// gateway and validator (not at providers, which serve only).
	BuyerToken string `json:"buyer_token"`
	Buyer      string `json:"buyer_account"`
	Model      string `json:"model"`
	// ChainID is the devnet chain's; Genesis its genesis file (also the
	// validator file `tenzrod evidence verify` trusts).
	ChainID string `json:"chain_id"`
	Genesis string `json:"genesis"`
	// BuyerChainAccount is the buyer's funded chain account, whose key is
	// the file BuyerKey.
	BuyerChainAccount string `json:"buyer_chain_account"`
	// ChainPeers are the validators' CometBFT addresses (id@host:port), what
	// `tenzrod join --chain-peer` follows the chain through.
	ChainPeers []string `json:"chain_peers"`
	BuyerKey   string   `json:"buyer_key"`
	// FaucetKey is the key file of a funded genesis account that pays no
	// calls, FaucetAccount its ID: what operators joining the devnet are
	// funded from (tenzrod tx transfer --key FAUCET_KEY).
	FaucetKey     string `json:"faucet_key"`
	FaucetAccount string `json:"faucet_account"`
}

// ManifestFile is the manifest's name inside Dir.
const ManifestFile = "devnet.json"

// BuyerAccount is the devnet buyer's account name.
const BuyerAccount = "devnet-buyer"

// BuyerCredit is the devnet buyer's initial credit in micro-units.
const BuyerCredit = 1_000_000_000_000

func newBuyerToken() string {
	var b [20]byte
	_, _ = rand.Read(b[:])
	return "sk-tenzro-" + hex.EncodeToString(b[:])
}

// stopGrace is how long a node has, after SIGTERM, to stop on its own.
const stopGrace = 10 * time.Second

// Run builds and starts the devnet, blocks until ctx ends, then stops every
// child and returns.
func Run(ctx context.Context, o Options) error {
	if err := o.Validate(); err != nil {
		return err
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	dir, err := filepath.Abs(o.Dir)
	if err != nil {
		return fmt.Errorf("devnet: %w", err)
	}
	o.Dir = dir
	token := newBuyerToken()
	plans, chain, err := plan(o, token)
	if err != nil {
		return err
	}
	if err := printJudges(o.Out, plans); err != nil {
		return err
	}
	sup := newSupervisor(o.Out)
	defer func() {
		sup.stopAll(stopGrace)
		sup.reportHandStarted(dir)
	}()
	for _, p := range plans {
		if err := sup.start(o.Binary, p); err != nil {
			return err
		}
	}
	waitCtx, cancel := context.WithTimeout(ctx, 90*time.Second)
	defer cancel()
	for _, p := range plans {
		if err := waitHealthy(waitCtx, p.entry.API, sup, p.entry.Name); err != nil {
			return fmt.Errorf("devnet: %s did not come up (see %s): %w", p.entry.Name, p.logPath(), err)
		}
	}
	providers, gateway := 0, plans[0]
	for _, p := range plans {
		switch p.entry.Role {
		case string(node.RoleProvider):
			if !strings.HasPrefix(p.entry.Name, holderPrefix) { // holders serve no model
				providers++
			}
		case string(node.RoleGateway):
			gateway = p
		}
	}
	if gateway.entry.Role == string(node.RoleGateway) && providers > 0 {
		if err := waitRoutable(waitCtx, gateway.entry.API, node.DevnetModelName, providers); err != nil {
			return fmt.Errorf("devnet: %s cannot route to the providers yet (see %s): %w", gateway.entry.Name, gateway.logPath(), err)
		}
	}
	m := Manifest{Network: o.Network, BuyerToken: token, Buyer: BuyerAccount, Model: node.DevnetModelName,
		ChainID: chain.chainID, BuyerChainAccount: chain.buyer.String(), BuyerKey: filepath.Join(dir, BuyerKeyFile), ChainPeers: chain.peers,
		Genesis: filepath.Join(dir, "genesis.json"), FaucetKey: filepath.Join(dir, FaucetKeyFile), FaucetAccount: chain.faucet.String()}
	for _, p := range plans {
		e := p.entry
		e.PID = sup.pid(e.Name)
		m.Nodes = append(m.Nodes, e)
		if e.Role == "gateway" && m.Gateway == "" {
			m.Gateway = e.API
		}
	}
	if m.Gateway == "" {
		m.Gateway = m.Nodes[0].API
	}
	if err := writeManifest(filepath.Join(dir, ManifestFile), m); err != nil {
		return err
	}
	if stop, err := listenControl(&control{dir: dir, bin: o.Binary, sup: sup, out: o.Out, m: m}); err != nil {
		fmt.Fprintf(o.Out, "devnet: %v (add-provider prints how to start a provider instead)\n", err)
	} else {
		defer stop()
	}
	printWelcome(o, m)
	<-ctx.Done()
	sup.say("\nstopping the devnet…")
	return nil
}

// manifestMode is devnet.json's: it holds the buyer token, a bearer
// credential, so only its owner may read it.
const manifestMode = 0o600

// writeManifest writes the manifest atomically, owner-only. The temporary
// file is created afresh (a leftover of a crash could carry a wider mode,
// which os.WriteFile keeps) and renamed over any older manifest, whose own
// mode goes with it.
func writeManifest(path string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return fmt.Errorf("devnet: %w", err)
	}
	tmp := path + ".tmp"
	if err := os.Remove(tmp); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("devnet: %w", err)
	}
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, manifestMode)
	if err != nil {
		return fmt.Errorf("devnet: %w", err)
	}
	_, werr := f.Write(append(b, '\n'))
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("devnet: writing %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("devnet: %w", err)
	}
	return nil
}

// PageURL is the gateway's live page, with the buyer's chain account filled
// in so its escrow and payments show at once.
func PageURL(m Manifest) string {
	u := m.Gateway + "/"
	if m.BuyerChainAccount != "" {
		u += "?account=" + m.BuyerChainAccount
	}
	return u
}

func printWelcome(o Options, m Manifest) {
	bin := o.Binary
	if wd, err := os.Getwd(); err == nil {
		if rel, err := filepath.Rel(wd, bin); err == nil && len(rel) < len(bin) {
			bin = "./" + rel
		}
	}
	w := o.Out
	fmt.Fprintf(w, "\ndevnet %q is up: %d validators, %d providers, %d gateways; chain %s\n", o.Network, o.Validators, o.Providers, o.Gateways, m.ChainID)
	for _, n := range m.Nodes {
		fmt.Fprintf(w, "  %-12s %-10s pid %-7d %s\n", n.Name, n.Role, n.PID, n.API)
	}
	fmt.Fprintf(w, "\n  gateway   %s\n  page      %s\n  manifest  %s\n  logs      %s/<node>/node.log\n", m.Gateway, PageURL(m),
		filepath.Join(o.Dir, ManifestFile), o.Dir)
	fmt.Fprintf(w, "\nTry:\n")
	fmt.Fprintf(w, "  %s shell --api %s -c providers\n", bin, m.Gateway)
	fmt.Fprintf(w, "  %s shell --api %s -c \"tail heartbeat -n 5\"\n", bin, m.Gateway)
	fmt.Fprintf(w, "  %s shell --api %s -c \"quote %s\"\n", bin, m.Gateway, m.Model)
	fmt.Fprintf(w, "  %s shell --api %s          # interactive; type help\n", bin, m.Gateway)
	fmt.Fprintf(w, "  curl -s %s/v1/chat/completions -H 'Authorization: Bearer %s' \\\n", m.Gateway, m.BuyerToken)
	fmt.Fprintf(w, "    -d '{\"model\":\"%s\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}],\"max_tokens\":32}'\n", m.Model)
	fmt.Fprintf(w, "  %s shell --api %s -c validators\n", bin, m.Gateway)
	fmt.Fprintf(w, "  %s shell --api %s -c \"account %s\"\n", bin, m.Gateway, m.BuyerChainAccount)
	fmt.Fprintf(w, "  %s shell --api %s -c \"payments payer %s\"   # its escrows fall with every paid call\n", bin, m.Gateway, m.BuyerChainAccount)
	if len(m.Nodes) > 0 && len(m.Nodes[0].P2P) > 0 && len(m.ChainPeers) > 0 {
		fmt.Fprintf(w, "  %s join --home %s --api-listen 127.0.0.1:0 --bootstrap %s \\\n", bin, filepath.Join(o.Dir, "laptop"), m.Nodes[0].P2P[0])
		fmt.Fprintf(w, "    --genesis %s --chain-peer %s --account-key %s --deposit 5_000_000   # a laptop paying from its own escrow\n",
			m.Genesis, m.ChainPeers[0], m.BuyerKey)
	}
	fmt.Fprintf(w, "\n  OpenAI SDKs: base URL %s/v1, API key %s (buyer %s, paying from its escrow with each gateway)\n", m.Gateway, m.BuyerToken, m.BuyerChainAccount)
	printTEE(w, o, bin, m.Gateway, m.Model)
	printAddHints(w, bin, o, m)
	fmt.Fprintf(w, "\nKill a provider (kill -9 PID) and watch it go down within 6 s. Ctrl-C stops every node the devnet started\n(a node you restart by hand is yours: the devnet names it, with its PID, if it is still running).\n")
}
