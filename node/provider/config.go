package provider

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/inference/upstream"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Config is the [provider] section: what a provider serves and how
// it describes itself.
type Config struct {
	// Region is coarse on purpose: an ISO 3166-1 country code or a
	// continent name, never anything finer.
	Region string `toml:"region" comment:"Coarse region only: an ISO 3166-1 country code (\"DE\") or a continent (\"Europe\"). Anything finer is rejected by every peer."`
	// HardwareClass is shown to buyers as the provider's claim.
	HardwareClass string `toml:"hardware_class" comment:"Your hardware class; buyers see it labelled as your claim."`
	// Capacity is the number of requests served concurrently.
	Capacity uint32 `toml:"capacity" comment:"Requests served concurrently."`
	// NoRetention is announced, signed, as this operator's claim that it
	// keeps no prompts or answers: buyers asking data_collection "deny"
	// or zdr are routed only to providers claiming it.
	NoRetention bool `toml:"no_retention" comment:"Announce (signed, shown to buyers as your claim) that you retain no prompts or answers beyond serving them. Buyers asking for data_collection \"deny\" or zdr are routed only to providers that announce it."`
	// AnnounceInterval is how often the announcement is repeated so that
	// nodes joining later learn the provider without asking.
	AnnounceInterval time.Duration `toml:"announce_interval" comment:"How often the announcement is repeated for nodes that join later."`
	// TrustedCallers are peer IDs served unpaid on a chain (the operator's
	// own tools); without a chain they are the callers (gateways,
	// validators) served without the unknown callers' budget, and
	// providers registered on chain are known too.
	TrustedCallers []string `toml:"trusted_callers" comment:"On a chain every call is paid: it carries its settler's authorization, and the payer's escrow must cover it. trusted_callers are peer IDs served unpaid (your own tools); without a chain they are the callers served in full, and every other caller shares one small budget (unknown_concurrency requests at once, unknown_rate_per_minute a minute)."`
	// UnknownConcurrency and UnknownRatePerMinute are the one budget all
	// other callers share: requests at once and requests per minute
	// (fresh peer IDs cannot multiply it).
	UnknownConcurrency   int `toml:"unknown_concurrency"`
	UnknownRatePerMinute int `toml:"unknown_rate_per_minute"`
	// MaxPerPeer caps one caller's requests served or waiting at once; 0
	// allows a caller every stream slot.
	MaxPerPeer int `toml:"max_per_peer" comment:"One caller's streams served or waiting at once; 0 = no cap of its own."`
	// RecordWait is how long, on a chain, a call from a settler that owes
	// a payment record for an earlier call waits for it before it is
	// refused (402 unpaid).
	RecordWait time.Duration `toml:"record_wait" comment:"How long a call from a settler that owes a payment record for an earlier call waits for it before it is refused (402 unpaid)."`
	// Standby is [provider.standby]: standing by as a session successor.
	Standby StandbyConfig `toml:"standby" comment:"Stand by warm as the successor of other operators' sessions: the primary seals each turn's state to this node's X-Wing key (key_file, made on first start), which the announcement carries with the fee; the sessions held and their states are kept in state_dir, so a restart stays warm. On a chain a session is held only against a funded standby stream paying at least fee_per_hour (micro-units), claimed every claim_interval."`
	Models  []ModelConfig `toml:"models" comment:"A served model. name is what buyers ask for. dir: a model directory served by the embedded engine (its catalog root is the model ID; the files are verified against it before loading). id is the catalog ID (the Merkle root of the model files, which tenzrod model manifest prints for the directory of the exact files the engine loaded), never an engine's name for them; with dir set it may be empty (taken from the directory) or must match it; an upstream model has no dir, so its id is required. A request's model resolves to one ID: offers of the same name under another ID are another model, and on a chain the first registered provider serving a name binds it to its ID. weights_hash: the hash of the weights actually served.\nengine: embedded (dir) | upstream (an OpenAI-compatible engine you run, llama.cpp server, vLLM or Ollama, at upstream_url, e.g. \"http://127.0.0.1:8080/v1\", under its own name upstream_model; its API key, if any, comes from $TENZRO_UPSTREAM_API_KEY). continuation: how the upstream engine continues another provider's broken answer: assistant_prefix (a final assistant message to continue) | raw_prompt (text completions only) | none; probed at start, never raised beyond this.\nverification: the levels offered: none | receipt | optimistic | tee. [provider.models.rate_card]: prices per unit in integer micro-units, the per-call minimum, and expert_tokens, per expert-token computed at holders (models in provider.remote_experts)."`
	// Experts are [[provider.experts]]: MoE experts held for other
	// providers (expert_config.go); RemoteExperts is
	// [provider.remote_experts]: served models whose experts run at holders.
	Experts       []ExpertConfig      `toml:"experts" comment:"Experts of a MoE model held for other providers, computed from the model directory (verified against model, the catalog ID); price_per_token in micro-units per expert-token (one row computed by one expert)."`
	RemoteExperts RemoteExpertsConfig `toml:"remote_experts" comment:"Served embedded MoE models whose experts run at the holders other providers announce ([[provider.experts]]): each layer's batches go to each holder at once, every receipt is verified before its rows are used, a holder silent past timeout is retired for the batch, and on a chain each holder is paid from this operator's escrow with itself."`
	// Attestation is [provider.attestation]: the TEE attestation announced
	// for the `tee` level (attest_config.go).
	Attestation AttestationConfig `toml:"attestation" comment:"The TEE attestation announced for the tee level; its REPORT_DATA binds the session key (SHA-512(\"tenzro/attest/session-key/1\" || 0 || key DER)), so a new one is obtained whenever the key rotates."`
}

// ModelConfig is one served model.
type ModelConfig struct {
	Name string `toml:"name"`
	// Dir is the model directory the embedded engine serves (relative to
	// the home). Its catalog root is the model ID; if ID is set too, a
	// directory with another root is refused.
	Dir string `toml:"dir"`
	// UpstreamURL and UpstreamModel front an OpenAI-compatible engine
	// (llama.cpp server, vLLM, Ollama) with engine = "upstream".
	UpstreamURL   string `toml:"upstream_url"`
	UpstreamModel string `toml:"upstream_model"`
	// Continuation is how the upstream engine continues another
	// provider's broken answer: "assistant_prefix" (the default: a final
	// assistant message to continue), "raw_prompt" (text completions
	// only) or "none". The provider probes the engine when it first
	// answers and continues no more than the engine honours.
	Continuation string               `toml:"continuation"`
	ID           string               `toml:"id"`           // catalog model ID (hex Merkle root)
	WeightsHash  string               `toml:"weights_hash"` // hash of the weights actually served (hex)
	Engine       string               `toml:"engine"`
	Verification []terms.Verification `toml:"verification"`
	RateCard     terms.RateCard       `toml:"rate_card"`
	// Quant is the served weights' type, lower-case ("f16", "q8_0"): for
	// an upstream engine what the operator declares; for the embedded
	// engine read from the loaded weights, and if set here it must match.
	Quant string `toml:"quant"`
}

// DefaultConfig returns provider defaults (no models).
func DefaultConfig() Config {
	return Config{Region: "Europe", HardwareClass: "cpu-generic", Capacity: 4, AnnounceInterval: 10 * time.Second,
		TrustedCallers: []string{}, UnknownConcurrency: 1, UnknownRatePerMinute: 6,
		RecordWait: 3 * time.Second, Standby: DefaultStandbyConfig(), RemoteExperts: DefaultRemoteExpertsConfig(),
		Attestation: DefaultAttestationConfig()}
}

// Validate checks the section, naming each bad key.
func (p Config) Validate() error {
	var errs []error
	if err := gossip.CheckRegion(p.Region); err != nil {
		errs = append(errs, fmt.Errorf("provider.region: %w", err))
	}
	if p.HardwareClass == "" || len(p.HardwareClass) > 64 {
		errs = append(errs, errors.New("provider.hardware_class: must be 1..64 bytes"))
	}
	if p.Capacity == 0 || p.Capacity > 4096 {
		errs = append(errs, fmt.Errorf("provider.capacity: %d outside 1..4096", p.Capacity))
	}
	if p.AnnounceInterval < time.Second || p.AnnounceInterval > 10*time.Minute {
		errs = append(errs, fmt.Errorf("provider.announce_interval: %s outside 1s..10m", p.AnnounceInterval))
	}
	for _, c := range p.TrustedCallers {
		if _, err := peer.Decode(c); err != nil {
			errs = append(errs, fmt.Errorf("provider.trusted_callers: %q is not a peer ID: %w", c, err))
		}
	}
	if p.RecordWait < 10*time.Millisecond || p.RecordWait > time.Minute {
		errs = append(errs, fmt.Errorf("provider.record_wait: %s outside 10ms..1m", p.RecordWait))
	}
	if p.UnknownConcurrency < 1 || p.UnknownConcurrency > 1024 {
		errs = append(errs, fmt.Errorf("provider.unknown_concurrency: %d outside 1..1024", p.UnknownConcurrency))
	}
	if p.UnknownRatePerMinute < 1 || p.UnknownRatePerMinute > 1_000_000 {
		errs = append(errs, fmt.Errorf("provider.unknown_rate_per_minute: %d outside 1..1000000", p.UnknownRatePerMinute))
	}
	if p.MaxPerPeer < 0 || p.MaxPerPeer > 1<<16 {
		errs = append(errs, fmt.Errorf("provider.max_per_peer: %d outside 0..65536", p.MaxPerPeer))
	}
	if err := p.Standby.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := p.validateAttestation(); err != nil {
		errs = append(errs, err)
	}
	if len(p.Models) == 0 && len(p.Experts) == 0 {
		errs = append(errs, errors.New("provider.models: a provider must serve at least one model or hold experts ([[provider.experts]])"))
	}
	errs = append(errs, p.validateExperts()...)
	for i, m := range p.Models {
		if _, err := m.Offer(); err != nil {
			errs = append(errs, fmt.Errorf("provider.models[%d]: %w", i, err))
		}
	}
	return errors.Join(errs...)
}

// Offer converts the model config into the announced offer. A model
// served from a directory without a configured ID gets its ID from the
// directory's catalog root when it is loaded; until then it is all zeros.
func (m ModelConfig) Offer() (gossip.ModelOffer, error) {
	if m.Dir != "" && m.Engine != EngineEmbedded {
		return gossip.ModelOffer{}, fmt.Errorf("engine: %q cannot serve dir %q (only %q serves a model directory)", m.Engine, m.Dir, EngineEmbedded)
	}
	if m.Dir == "" && m.Engine == EngineEmbedded {
		return gossip.ModelOffer{}, fmt.Errorf("dir: the %q engine needs a model directory", EngineEmbedded)
	}
	if m.Engine == EngineUpstream {
		if err := m.UpstreamConfig().Validate(); err != nil {
			return gossip.ModelOffer{}, fmt.Errorf("upstream_url/upstream_model: %w", err)
		}
		switch m.Continuation {
		case "", upstream.ContinueAssistantPrefix, upstream.ContinueRawPrompt, upstream.ContinueNone:
		default:
			return gossip.ModelOffer{}, fmt.Errorf("continuation: %q is not one of %s, %s, %s", m.Continuation,
				upstream.ContinueAssistantPrefix, upstream.ContinueRawPrompt, upstream.ContinueNone)
		}
		if slices.ContainsFunc(m.Verification, terms.Verification.NeedsCommitments) {
			// An OpenAI-compatible engine exposes no token IDs for the
			// commitment; announcing the level would only draw refusals.
			return gossip.ModelOffer{}, fmt.Errorf("verification: an upstream engine cannot serve %q (it needs logit commitments)", terms.VerifyOptimistic)
		}
	} else if m.UpstreamURL != "" {
		return gossip.ModelOffer{}, fmt.Errorf("upstream_url: set, but engine is %q, not %q", m.Engine, EngineUpstream)
	} else if m.Continuation != "" {
		return gossip.ModelOffer{}, fmt.Errorf("continuation: set, but engine is %q; the embedded engine always continues token-exactly", m.Engine)
	}
	var id []byte
	var err error
	switch {
	case m.ID != "":
		if id, err = decodeHash(m.ID); err != nil {
			return gossip.ModelOffer{}, fmt.Errorf("id: %w", err)
		}
	case m.Dir != "":
		id = make([]byte, 32)
	default:
		return gossip.ModelOffer{}, fmt.Errorf("id: a model without a dir needs its catalog id")
	}
	wh := id
	if m.WeightsHash != "" {
		if wh, err = decodeHash(m.WeightsHash); err != nil {
			return gossip.ModelOffer{}, fmt.Errorf("weights_hash: %w", err)
		}
	}
	verif := m.Verification
	if len(verif) == 0 {
		verif = []terms.Verification{terms.VerifyNone}
	}
	o := gossip.ModelOffer{ModelID: id, Name: m.Name, WeightsHash: wh, Engine: m.Engine, RateCard: m.RateCard, Verification: verif,
		Params: servedParams(), Quant: strings.ToLower(m.Quant)}
	o.Params = constraintParams(m.Engine, o.Params)
	// Reuse the gossip validator's structural rules so config and wire agree.
	an := gossip.Announcement{MachineID: make([]byte, 32), Region: "DE", HardwareClass: "x", Models: []gossip.ModelOffer{o}}
	if err := an.Check(); err != nil {
		return gossip.ModelOffer{}, err
	}
	return o, nil
}

func decodeHash(s string) ([]byte, error) {
	b, err := hex.DecodeString(s)
	if err != nil || len(b) != 32 {
		return nil, fmt.Errorf("%q is not 64 hex digits", s)
	}
	return b, nil
}

// Engines a provider can serve a model with.
const (
	// EngineEmbedded is the pure-Go engine serving a model directory.
	EngineEmbedded = "embedded"
	// EngineUpstream fronts an OpenAI-compatible engine by base URL.
	EngineUpstream = "upstream"
)

// UpstreamKeyEnv names the environment variable holding the upstream's API
// key, so the secret stays out of config files.
const UpstreamKeyEnv = "TENZRO_UPSTREAM_API_KEY"

// ContinuationMode is the upstream's continuation mode, defaulted.
func (m ModelConfig) ContinuationMode() string {
	if m.Continuation == "" {
		return upstream.ContinueAssistantPrefix
	}
	return m.Continuation
}

// UpstreamConfig is the upstream client's configuration for the model.
func (m ModelConfig) UpstreamConfig() upstream.Config {
	return upstream.Config{BaseURL: m.UpstreamURL, Model: m.UpstreamModel, APIKey: os.Getenv(UpstreamKeyEnv)}
}

// DevnetModelName is the name devnet providers serve their generated model as.
const DevnetModelName = "tenzro-devnet"

// DevnetModel is a served model entry for a generated model in dir (its ID,
// if known, pins the directory's catalog root).
func DevnetModel(dir, id string) ModelConfig {
	return ModelConfig{
		Name: DevnetModelName, Dir: dir, ID: id, Engine: EngineEmbedded,
		Verification: []terms.Verification{terms.VerifyNone, terms.VerifyReceipt, terms.VerifyOptimistic},
		RateCard:     terms.RateCard{InputTokens: 1, OutputTokens: 2, CachedTokens: 0, Minimum: 10},
	}
}

// servedParams are the request parameters both engines honour today (the
// embedded sampler and the upstream client pass each through), announced
// so that a buyer's require_parameters can rely on them; sorted, as
// announcements carry them.
func servedParams() []string {
	return []string{gossip.ParamLogprobs, gossip.ParamSeed, gossip.ParamStop, gossip.ParamTopK}
}
