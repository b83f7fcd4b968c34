package validator

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node/lifecycle"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// Config is the validator role's own tuning.
type Config struct {
	// ProbeInterval is how often each registered, live provider is probed
	// for the price feed and the SLA verdicts; 0 disables probing.
	ProbeInterval time.Duration
	// ProbePayer, on a gateway that pays from chain escrows, is the payer
	// (hex account) whose escrow with this node pays the probes, as any
	// buyer's; empty bills them to a local off-chain account.
	ProbePayer string
	// HeldModels are the weights this validator re-executes disputed
	// answers with (ModelPath resolves their directories); VotesPath is
	// the file its committed verdicts live in until revealed. The
	// committee duty runs whenever VotesPath is set.
	HeldModels []ModelConfig
	ModelPath  func(string) string
	VotesPath  string
}

// Submitter signs and submits the operator account's transactions and
// waits for them to commit.
type Submitter interface {
	Submit(ctx context.Context, payload any) (consensus.TxResult, error)
	Account() terms.AccountID
}

// Registry is what the role reads of the chain through the node's cache.
type Registry interface {
	// ActiveValidator reports whether account is in the validator set.
	ActiveValidator(ctx context.Context, account [32]byte) (bool, error)
	// ProviderOperator is the operator account that registered machine m.
	ProviderOperator(ctx context.Context, m identity.MachineID) (op [32]byte, peer string, ok bool, err error)
}

// ProbeLedger funds the probes in the node's local store.
type ProbeLedger interface {
	Balance(account string) (uint64, error)
	Credit(account string, amount uint64) error
}

// Deps are what the validator role runs on; the node builds them.
type Deps struct {
	Log     *slog.Logger
	Clock   clock.Clock
	Session *identity.SessionKeeper
	Gossip  *gossip.Service
	Chain   *consensus.Node
	// Account submits the SLA verdicts; AccountKey (the same operator
	// account) signs the price observations.
	Account    Submitter
	AccountKey ed25519.PrivateKey
	Registry   Registry
	Table      *router.Table
	// Gateway routes the probes; Store funds them.
	Gateway *gateway.Gateway
	Store   ProbeLedger
	// Metrics, when set, gets the committee duty's vote counter.
	Metrics prometheus.Registerer
}

// Validator is the validator role beside the chain node: it measures
// providers (heartbeat samples, paid probes), signs and gossips price
// observations of every call its gateway routes, and submits the hourly
// SLA verdicts.
type Validator struct {
	cfg    Config
	d      Deps
	obs    *obsPublisher
	prober *prober // nil when probing is off
	parts  []lifecycle.Part
}

// New assembles the role; nothing runs until Start. The gateway's OnCall
// hook must call OnCall (the node wires it before the gateway exists).
func New(cfg Config, d Deps) (*Validator, error) {
	if cfg.ProbeInterval < 0 {
		return nil, fmt.Errorf("validator: probe interval %s is negative", cfg.ProbeInterval)
	}
	if d.Chain == nil || d.Account == nil || d.AccountKey == nil || d.Registry == nil ||
		d.Table == nil || d.Gateway == nil || d.Store == nil || d.Session == nil || d.Gossip == nil {
		return nil, errors.New("validator: chain, account, registry, table, gateway, store, session and gossip are required")
	}
	if d.Log == nil {
		d.Log = slog.Default()
	}
	if d.Clock == nil {
		d.Clock = clock.New()
	}
	v := &Validator{cfg: cfg, d: d}
	v.obs = newObsPublisher(v)
	v.parts = []lifecycle.Part{newVerdictLoop(v), v.obs}
	if cfg.VotesPath != "" {
		path := cfg.ModelPath
		if path == nil {
			path = func(p string) string { return p }
		}
		models, err := LoadModels(cfg.HeldModels, path)
		if err != nil {
			return nil, err
		}
		duty, err := NewDuty(DutyConfig{Chain: d.Chain, Account: d.Account, Models: models, VotesPath: cfg.VotesPath,
			Log: d.Log, Metrics: d.Metrics})
		if err != nil {
			return nil, err
		}
		v.parts = append(v.parts, duty)
	}
	if cfg.ProbeInterval > 0 {
		v.prober = newProber(v, cfg.ProbeInterval)
		v.parts = append(v.parts, v.prober)
	}
	return v, nil
}

// OnCall takes what the gateway measured of one call; it never blocks.
func (v *Validator) OnCall(c gateway.Call) { v.obs.onCall(c) }

// Start starts the verdicts, the observations and the probes.
func (v *Validator) Start(ctx context.Context) error {
	return lifecycle.Start(ctx, "validator", v.parts)
}

// Stop stops the role's parts in reverse order.
func (v *Validator) Stop(ctx context.Context) error {
	return lifecycle.Stop(ctx, "validator", v.parts)
}
