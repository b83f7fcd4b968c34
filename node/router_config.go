package node

import (
	"errors"
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/catalog"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/receipts/store"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// RouterConfig is the [router] section: how this node prices and routes
// the requests it accepts. The routing keys (deadline, first_token_timeout,
// stall_timeout, stall_min, max_retries, default_max_tokens, [router.surcharges],
// [router.weights], [router.buyer_defaults]) are gateway.Config's own,
// with its defaults; the rest is the node's. [router.surcharges] is the
// fallback of a node without a chain: with one, quotes and bills use the
// chain's surcharge_* params.
type RouterConfig struct {
	gateway.Config
	// Buyers are the accounts whose requests this node accepts.
	Buyers []BuyerConfig `toml:"buyers" comment:"A buyer: requests carrying the token whose SHA-256 is token_sha256 are paid by the payer's on-chain escrow with this node's account as settler (this node signs a payment record per call). Off chain (a test mode) account and initial_credit (micro-units, credited once) take payer's place. max_concurrent and rate_per_minute: its fair share (0 = the defaults). To add a buyer paying on chain, hand out a bearer token and keep only its SHA-256 here:\n  TOKEN=sk-tenzro-$(openssl rand -hex 20)      # give it to the buyer\n  printf %s \"$TOKEN\" | sha256sum               # token_sha256\n  tenzrod keys account show account.key        # this node's account (made by init --genesis or the first start): the settler\n  tenzrod tx escrow fund --key buyer.key --amount 50_000_000 --settler <that account>\nThe buyer funds the escrow from its own key (tenzrod tx transfer gets it funded first); each paid call then draws on it through a payment record this node signs."`
	// ProbeInterval is how often a validator node probes each registered,
	// live provider for the price feed (one tiny call per provider per
	// interval); 0 disables probing.
	ProbeInterval time.Duration `toml:"probe_interval" comment:"Validator nodes probe each registered, live provider this often for the price feed (one tiny call per provider per interval); 0s disables."`
	// Durability of receipts, payments and balances in the node's store:
	// "group" (default: a paid request does not wait for the disk; a
	// background fsync follows within about a millisecond) or "each"
	// (every write waits for its own fsync). See store.Durability.
	Durability string `toml:"durability" comment:"Receipts, payments and balances: \"group\" = a paid request does not wait for the disk, a background fsync follows within about a millisecond (a power cut can lose that window: unbilled, never billed twice); \"each\" = every write waits for its own fsync. Credits always wait."`
	// Tokenizers are models whose tokenizer this node holds: it counts
	// their prompt and output tokens itself and bills that count (capped
	// by the wire) instead of the provider's claim.
	Tokenizers []TokenizerConfig `toml:"tokenizers" comment:"A model whose tokenizer this node holds: prompt and output tokens of requests for it are counted here and billed by that count (capped by the wire), not by the provider's claim. Only the GGUF's tokenizer is loaded; the directory is checked against the catalog ID (tenzrod model manifest DIR prints it)."`
}

// TokenizerConfig is one [[router.tokenizers]] entry: a model directory
// (only its GGUF's tokenizer is loaded) and the catalog ID it must match.
type TokenizerConfig struct {
	Dir string `toml:"dir"`
	ID  string `toml:"id"`
}

// Validate checks one entry.
func (t TokenizerConfig) Validate() error {
	if t.Dir == "" {
		return errors.New("dir is empty")
	}
	if _, err := catalog.ParseHash(t.ID); err != nil {
		return fmt.Errorf("id: %w", err)
	}
	return nil
}

// loadTokenizers opens every configured tokenizer, checking each model
// directory against its ID.
func loadTokenizers(cfg Config) (map[inference.ModelID]gateway.TokenCounter, error) {
	out := map[inference.ModelID]gateway.TokenCounter{}
	for i, tc := range cfg.Router.Tokenizers {
		h, err := catalog.ParseHash(tc.ID)
		if err != nil {
			return nil, fmt.Errorf("node: router.tokenizers[%d]: id: %w", i, err)
		}
		pt, err := llm.OpenTokenizer(cfg.Path(tc.Dir), inference.ModelID(h))
		if err != nil {
			return nil, fmt.Errorf("node: router.tokenizers[%d]: %w", i, err)
		}
		out[pt.ModelID()] = pt
	}
	return out, nil
}

// DefaultRouterConfig returns the routing defaults.
func DefaultRouterConfig() RouterConfig {
	return RouterConfig{
		Config:        gateway.DefaultConfig(),
		ProbeInterval: 20 * time.Second,
		Durability:    store.GroupSync.String(),
	}
}

// Validate checks the section; every error names its key.
func (r RouterConfig) Validate() error {
	var errs []error
	if err := r.Config.Validate("router."); err != nil {
		errs = append(errs, err)
	}
	if r.ProbeInterval != 0 && (r.ProbeInterval < time.Second || r.ProbeInterval > time.Hour) {
		errs = append(errs, fmt.Errorf("router.probe_interval: %s outside 1s..1h (or 0 to disable)", r.ProbeInterval))
	}
	if _, err := store.ParseDurability(r.Durability); err != nil {
		errs = append(errs, fmt.Errorf("router.durability: %q: want \"group\" or \"each\"", r.Durability))
	}
	for i, tc := range r.Tokenizers {
		if err := tc.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("router.tokenizers[%d]: %w", i, err))
		}
	}
	seen := map[string]bool{}
	for i, b := range r.Buyers {
		if err := b.Validate(); err != nil {
			errs = append(errs, fmt.Errorf("router.buyers[%d]: %w", i, err))
		}
		if seen[b.Key()] {
			errs = append(errs, fmt.Errorf("router.buyers[%d]: %q listed twice", i, b.Key()))
		}
		seen[b.Key()] = true
	}
	return errors.Join(errs...)
}

// gatewayConfig is the gateway's own section with each buyer's limits.
func gatewayConfig(r RouterConfig) gateway.Config {
	c := r.Config
	c.Buyers = map[string]gateway.BuyerLimits{}
	for _, b := range r.Buyers {
		c.Buyers[b.Key()] = b.BuyerLimits
	}
	return c
}

// creditBuyers credits each configured buyer's initial credit on the
// node's first sight of the account: one with no balance and no payment.
func creditBuyers(st *store.Store, bs []BuyerConfig) error {
	for _, b := range bs {
		if b.InitialCredit == 0 || b.Payer != "" {
			continue
		}
		bal, err := st.Balance(b.Account)
		if err != nil {
			return fmt.Errorf("node: buyer %s: %w", b.Account, err)
		}
		paid, err := st.ListPayments(b.Account, 1)
		if err != nil {
			return fmt.Errorf("node: buyer %s: %w", b.Account, err)
		}
		if bal == 0 && len(paid) == 0 {
			if err := st.Credit(b.Account, b.InitialCredit); err != nil {
				return fmt.Errorf("node: buyer %s: %w", b.Account, err)
			}
		}
	}
	return nil
}
