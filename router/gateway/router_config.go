package gateway

import (
	"errors"
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/inference/catalog"
	"github.com/tenzrod/tenzrod/receipts/store"
)

// RouterConfig is a node's [router] section: how the node prices and
// routes the requests it accepts. The routing keys (deadline,
// first_token_timeout, stall_timeout, stall_min, max_retries,
// default_max_tokens, [router.surcharges], [router.weights],
// [router.buyer_defaults]) are Config's own, with its defaults; the rest
// is what the node builds around the gateway: its buyers, the validator's
// probes, the store's durability and the tokenizers it counts with.
// [router.surcharges] is the fallback of a node without a chain: with
// one, quotes and bills use the chain's surcharge_* params.
type RouterConfig struct {
	Config
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

// DefaultRouterConfig returns the routing defaults.
func DefaultRouterConfig() RouterConfig {
	return RouterConfig{
		Config:        DefaultConfig(),
		ProbeInterval: 20 * time.Second,
		Durability:    store.GroupSync.String(),
	}
}

// Validate checks the section; every error names its key. onChain is
// whether the node runs a chain, where every call is paid from an escrow.
func (r RouterConfig) Validate(onChain bool) error {
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
		if onChain && b.Payer == "" {
			errs = append(errs, fmt.Errorf("router.buyers[%d].payer: required on a chain: calls are paid from the payer's on-chain escrow (off-chain account %q pays nothing)", i, b.Account))
		}
		if seen[b.Key()] {
			errs = append(errs, fmt.Errorf("router.buyers[%d]: %q listed twice", i, b.Key()))
		}
		seen[b.Key()] = true
	}
	return errors.Join(errs...)
}

// GatewayConfig is the gateway's own section with each buyer's limits.
func (r RouterConfig) GatewayConfig() Config {
	c := r.Config
	c.Buyers = map[string]BuyerLimits{}
	for _, b := range r.Buyers {
		c.Buyers[b.Key()] = b.BuyerLimits
	}
	return c
}
