package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/tenzrod/tenzrod/cmd/tenzrod/devnet"
	"github.com/tenzrod/tenzrod/cmd/tenzrod/shell"
	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node"
	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// addProviderOpts are `devnet add-provider`'s flags.
type addProviderOpts struct {
	dir           string
	keyBackend    string
	region        string
	upstream      string
	upstreamModel string
	modelID       string
	modelName     string
	fund          amountFlag
}

func newDevnetAddProviderCmd() *cobra.Command {
	var o addProviderOpts
	cmd := &cobra.Command{
		Use:   "add-provider --dir DIR [--upstream URL --upstream-model M [--model-id ID] [--model-name NAME]]",
		Short: "Add a provider to a running devnet: init, fund from the faucet, register, start, wait until routed",
		Long: `add-provider adds one provider to the devnet running in --dir, the way an
operator joins a network, and prints each step:

  1. tenzrod init --role provider --genesis DIR/genesis.json --chain-from GATEWAY
     makes DIR/provider-N (a chain follower with free ports and its own keys);
  2. tenzrod tx transfer from the devnet faucet (devnet.json faucet_key) funds
     its operator account with the bond and room for fees;
  3. tenzrod tx register registers its machine (hardware, ML-DSA-65 and peer
     keys sign it);
  4. the running devnet starts it and supervises it like its own providers
     (through DIR/devnet.sock: it stops with Ctrl-C, devnet.json lists it);
     without a devnet process to ask, the command to start it is printed;
  5. it waits until the gateway quotes the new provider.

By default it serves the devnet's model with the embedded engine. With
--upstream it fronts an OpenAI-compatible engine you run instead (llama.cpp
server, vLLM, Ollama): --upstream-model is the engine's name for the model,
and --model-id the catalog ID of the exact weights it loaded (tenzrod model
manifest DIR; default: the devnet model's, for an engine serving the devnet's
GGUF). A model's name resolves to one ID: an offer of the name under another
ID is another model and is not routed with the devnet's.`,
		Example: `  tenzrod devnet add-provider --dir .devnet
  # llama.cpp's server on the devnet's own weights
  llama-server -m .devnet/models/tenzro-devnet/model.gguf --port 8080 &
  tenzrod devnet add-provider --dir .devnet --upstream http://127.0.0.1:8080/v1 --upstream-model tenzro-devnet`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return addProvider(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.dir, "dir", ".devnet", "the running devnet's directory (where devnet.json is)")
	f.StringVar(&o.keyBackend, "key-backend", "tpm-sim", "identity backend of the new provider: tpm | tpm-sim | software")
	f.StringVar(&o.region, "region", "DE", "the new provider's region: ISO 3166-1 country code or continent")
	f.StringVar(&o.upstream, "upstream", "", "serve through an OpenAI-compatible engine at this base URL (e.g. http://127.0.0.1:8080/v1)")
	f.StringVar(&o.upstreamModel, "upstream-model", "", "the upstream engine's name for the model (with --upstream)")
	f.StringVar(&o.modelID, "model-id", "", "catalog ID of the weights the upstream serves (with --upstream; default: the devnet model's)")
	f.StringVar(&o.modelName, "model-name", "", "the name buyers ask for (with --upstream; default: the devnet model's)")
	f.Var(&o.fund, "fund", "micro-units moved from the faucet to the operator account (default: the bond and room for 100 transactions' fees)")
	return cmd
}

// check names the flag that is missing or wrong.
func (o addProviderOpts) check() error {
	switch {
	case o.upstream == "" && (o.upstreamModel != "" || o.modelID != "" || o.modelName != ""):
		return errors.New("--upstream-model, --model-id and --model-name need --upstream: the engine's base URL")
	case o.upstream != "" && o.upstreamModel == "":
		return errors.New("--upstream needs --upstream-model: the engine's name for the model it serves")
	}
	return nil
}

func addProvider(cmd *cobra.Command, o addProviderOpts) error {
	if err := o.check(); err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	ctx := cmd.Context()
	dir, err := filepath.Abs(o.dir)
	if err != nil {
		return fmt.Errorf("--dir: %w", err)
	}
	m, err := readManifest(dir)
	if err != nil {
		return err
	}
	name, err := nextProviderName(dir, m)
	if err != nil {
		return err
	}
	home := filepath.Join(dir, name)
	step := func(s string) { fmt.Fprintf(out, "\n== %s\n", s) }

	step("init " + name)
	if err := runSub(ctx, out, "init", "--role", "provider", "--home", home, "--key-backend", o.keyBackend, "--region", o.region,
		"--genesis", m.Genesis, "--chain-from", m.Gateway); err != nil {
		return err
	}
	if err := shapeAddedProvider(dir, home, m, o); err != nil {
		return err
	}
	cfg, err := node.Load(home)
	if err != nil {
		return err
	}
	key, err := consensus.ReadAccountKey(cfg.Path(node.AccountKeyFile))
	if err != nil {
		return err
	}
	account := terms.AccountOf(key.Public().(ed25519.PublicKey))
	amount := o.fund.v
	if !o.fund.set {
		if amount, err = fundingAt(ctx, m.Gateway); err != nil {
			return err
		}
	}

	step("fund the operator account from the faucet")
	if err := runSub(ctx, out, "tx", "transfer", "--api", m.Gateway, "--key", m.FaucetKey, "--to", account.String(),
		"--amount", fmt.Sprint(amount)); err != nil {
		return err
	}
	step("register the machine")
	if err := runSub(ctx, out, "tx", "register", "--api", m.Gateway, "--home", home); err != nil {
		return err
	}

	step("start it")
	peerID, err := p2p.PeerIDFromKeyFile(cfg.P2PConfig().KeyFile)
	if err != nil {
		return err
	}
	if _, err := os.Stat(filepath.Join(dir, devnet.ControlSocket)); err != nil {
		fmt.Fprintf(out, "no devnet process supervises %s (no %s); start the provider yourself:\n  tenzrod provider --home %s\n",
			dir, devnet.ControlSocket, home)
		return nil
	}
	e, err := devnet.AskAdd(ctx, dir, name)
	if err != nil {
		return fmt.Errorf("%w; start the provider yourself: tenzrod provider --home %s", err, home)
	}
	fmt.Fprintf(out, "%s runs as pid %d under the devnet (log %s)\n", name, e.PID, filepath.Join(home, "node.log"))

	step("wait until the gateway routes to it")
	model := m.Model
	if o.modelName != "" {
		model = o.modelName
	}
	took, err := waitQuoted(ctx, m.Gateway, model, peerID.String(), 60*time.Second)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "the gateway quotes %s at %s (after %s)\n\nTry it, pinned to the new provider:\n", model, peerID, took.Round(100*time.Millisecond))
	fmt.Fprintf(out, "  curl -s %s/v1/chat/completions -H 'Authorization: Bearer %s' -H 'X-Tenzro-Provider: %s' \\\n", m.Gateway, m.BuyerToken, peerID)
	fmt.Fprintf(out, "    -d '{\"model\":\"%s\",\"messages\":[{\"role\":\"user\",\"content\":\"Hello\"}],\"max_tokens\":16}'\n", model)
	return nil
}

// runSub runs one tenzrod command line in-process, as a user would type it.
func runSub(ctx context.Context, out io.Writer, args ...string) error {
	root := newRootCmd()
	root.SetOut(out)
	root.SetErr(out)
	root.SetArgs(args)
	return root.ExecuteContext(ctx)
}

// readManifest reads a running devnet's devnet.json.
func readManifest(dir string) (devnet.Manifest, error) {
	var m devnet.Manifest
	b, err := os.ReadFile(filepath.Join(dir, devnet.ManifestFile))
	if err != nil {
		return m, fmt.Errorf("--dir: no running devnet in %s (start one with `tenzrod devnet --dir %s`): %w", dir, dir, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return m, fmt.Errorf("--dir: %s: %w", filepath.Join(dir, devnet.ManifestFile), err)
	}
	if m.FaucetKey == "" || m.Genesis == "" || m.Gateway == "" {
		return m, fmt.Errorf("--dir: %s names no faucet_key, genesis or gateway (a devnet of an older tenzrod: restart it)", filepath.Join(dir, devnet.ManifestFile))
	}
	return m, nil
}

// nextProviderName is the first provider-N neither the manifest nor the
// directory has.
func nextProviderName(dir string, m devnet.Manifest) (string, error) {
	for i := 0; i < 10_000; i++ {
		name := fmt.Sprintf("provider-%d", i)
		taken := false
		for _, n := range m.Nodes {
			taken = taken || n.Name == name
		}
		if _, err := os.Stat(filepath.Join(dir, name)); !errors.Is(err, fs.ErrNotExist) {
			taken = true
		}
		if !taken {
			return name, nil
		}
	}
	return "", fmt.Errorf("--dir %s: no free provider-N name", dir)
}

// shapeAddedProvider makes the fresh home serve like the devnet's own
// providers: the devnet's model directory (or the upstream engine), and
// the devnet's short announce interval.
func shapeAddedProvider(dir, home string, m devnet.Manifest, o addProviderOpts) error {
	cfg, err := node.Load(home)
	if err != nil {
		return err
	}
	modelDir := filepath.Join(dir, "models", node.DevnetModelName)
	id, err := node.EnsureDevnetModel(modelDir)
	if err != nil {
		return err
	}
	mc := node.DevnetModel(modelDir, id)
	if o.modelID != "" && o.modelID != id && o.modelName == "" {
		// The id rule: the devnet's name is bound to its model's ID, so
		// other weights under it would never be routed as that name.
		return fmt.Errorf("--model-id %s is not the devnet model's (%s): give the other weights their own --model-name", o.modelID, id)
	}
	if o.upstream != "" {
		mc.Dir, mc.Engine, mc.UpstreamURL, mc.UpstreamModel = "", "upstream", o.upstream, o.upstreamModel
		// An engine behind an HTTP API gives no logit commitments.
		mc.Verification = []terms.Verification{terms.VerifyNone, terms.VerifyReceipt}
		if o.modelID != "" {
			mc.ID = o.modelID
		}
		if o.modelName != "" {
			mc.Name = o.modelName
		}
	}
	cfg.Provider.Models = []node.ModelConfig{mc}
	cfg.Provider.AnnounceInterval = 5 * time.Second
	if err := node.WriteConfig(cfg, true); err != nil {
		return fmt.Errorf("add-provider: %w", err)
	}
	return nil
}

// fundingAt is what the faucet gives a new operator: the chain's bond and
// room for fees.
func fundingAt(ctx context.Context, api string) (uint64, error) {
	c, err := shell.NewClient(api)
	if err != nil {
		return 0, err
	}
	var p ledger.Params
	if err := callInto(ctx, c, "tenzro_getParams", nil, &p); err != nil {
		return 0, err
	}
	n, ok := suggestedFunding(p)
	if !ok {
		return 0, fmt.Errorf("add-provider: bond %d plus fees overflows; give --fund", p.MinServingBond)
	}
	return n, nil
}

// waitQuoted polls the routing node at api until it quotes model at peer.
func waitQuoted(ctx context.Context, api, model, peer string, limit time.Duration) (time.Duration, error) {
	c, err := shell.NewClient(api)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	params := map[string]any{"model": model, "units": map[string]uint64{"input_tokens": 1, "output_tokens": 1}}
	for {
		var lines []struct {
			Provider string `json:"provider"`
		}
		if err := callInto(ctx, c, "tenzro_quoteInference", params, &lines); err == nil {
			for _, l := range lines {
				if l.Provider == peer {
					return time.Since(start), nil
				}
			}
		}
		if time.Since(start) > limit {
			return 0, fmt.Errorf("add-provider: the gateway %s does not quote %s at %s after %s (see the provider's node.log)", api, model, peer, limit)
		}
		select {
		case <-ctx.Done():
			return 0, ctx.Err()
		case <-time.After(250 * time.Millisecond):
		}
	}
}
