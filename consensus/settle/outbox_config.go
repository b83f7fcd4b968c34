package settle

import (
	"errors"
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// OutboxConfig tunes a gateway's outbox. Zero fields take their defaults
// (DefaultOutboxConfig).
type OutboxConfig struct {
	// Dir holds the outbox's datastore (required).
	Dir string `toml:"dir"`
	// Validity is how many blocks a record stays valid: ExpiryHeight =
	// height at signing + Validity. The chain refuses a record valid for
	// longer than its escrow withdrawal delay (WithdrawDelayBlocks, 600 by
	// default), so that no withdrawal can be claimed before a record
	// signed ahead of it settles or expires.
	Validity int64 `toml:"validity"`
	// Grace is how long after signing the gateway leaves a record to the
	// provider; then it settles whatever is still unsettled itself.
	Grace time.Duration `toml:"grace"`
	// CheckAfter is how long after signing the outbox starts looking on
	// chain for a delivered record the provider settled.
	CheckAfter time.Duration `toml:"check_after"`
	// Interval is the loop's tick.
	Interval time.Duration `toml:"interval"`
	// DeliverBatch bounds the records of one delivery to a provider.
	DeliverBatch int `toml:"deliver_batch"`
	// DeliverTimeout bounds one delivery (the provider persisting and
	// acknowledging a batch).
	DeliverTimeout time.Duration `toml:"deliver_timeout"`
	// Retention is how long settled and skipped records are kept (from
	// signing or acceptance) as evidence before they are pruned.
	Retention time.Duration `toml:"retention"`
	// MaxBackoff bounds the delay between retries of a failing provider
	// or a failing submission (it starts at Interval and doubles).
	MaxBackoff time.Duration `toml:"max_backoff"`
	// SubmitBatch bounds the records checked and submitted in one pass
	// (SubmitAll splits them into settlements of at most
	// ledger.MaxRecordsPerTx).
	SubmitBatch int `toml:"submit_batch"`
}

// DefaultOutboxConfig returns the outbox defaults (Dir empty).
func DefaultOutboxConfig() OutboxConfig {
	return OutboxConfig{Validity: 300, Grace: 60 * time.Second, CheckAfter: 3 * time.Second, Interval: time.Second,
		DeliverBatch: 32, DeliverTimeout: 30 * time.Second, MaxBackoff: time.Minute, Retention: DefaultRetention, SubmitBatch: 1000}
}

func (c OutboxConfig) withDefaults() OutboxConfig {
	d := DefaultOutboxConfig()
	def(&c.Validity, d.Validity)
	def(&c.Grace, d.Grace)
	def(&c.CheckAfter, d.CheckAfter)
	def(&c.Interval, d.Interval)
	def(&c.DeliverBatch, d.DeliverBatch)
	def(&c.DeliverTimeout, d.DeliverTimeout)
	def(&c.Retention, d.Retention)
	def(&c.MaxBackoff, max(d.MaxBackoff, c.Interval))
	def(&c.SubmitBatch, d.SubmitBatch)
	return c
}

// Validate checks the config with its defaults applied; each error names
// its key ("settle.outbox.grace: ...").
func (c OutboxConfig) Validate() error {
	c = c.withDefaults()
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("settle.outbox.%s: "+format, append([]any{key}, args...)...))
	}
	if c.Dir == "" {
		bad("dir", "required")
	}
	if c.Validity < 2 || c.Validity > 10_000_000 {
		bad("validity", "%d blocks outside 2..10000000", c.Validity)
	}
	if c.Grace < 0 || c.Grace > 24*time.Hour {
		bad("grace", "%s outside 0..24h", c.Grace)
	}
	if c.CheckAfter < 0 || c.CheckAfter > 24*time.Hour {
		bad("check_after", "%s outside 0..24h", c.CheckAfter)
	}
	if c.Interval < 10*time.Millisecond || c.Interval > time.Minute {
		bad("interval", "%s outside 10ms..1m", c.Interval)
	}
	if c.DeliverBatch < 1 || c.DeliverBatch > 1024 {
		bad("deliver_batch", "%d outside 1..1024", c.DeliverBatch)
	}
	if c.DeliverTimeout < 10*time.Millisecond || c.DeliverTimeout > 10*time.Minute {
		bad("deliver_timeout", "%s outside 10ms..10m", c.DeliverTimeout)
	}
	if c.Retention < time.Hour {
		bad("retention", "%s under 1h", c.Retention)
	}
	if c.MaxBackoff < c.Interval || c.MaxBackoff > time.Hour {
		bad("max_backoff", "%s outside interval (%s)..1h", c.MaxBackoff, c.Interval)
	}
	if c.SubmitBatch < 1 || c.SubmitBatch > 4*ledger.MaxRecordsPerTx {
		bad("submit_batch", "%d outside 1..%d", c.SubmitBatch, 4*ledger.MaxRecordsPerTx)
	}
	return errors.Join(errs...)
}

// def sets *v to d when it is zero.
func def[T comparable](v *T, d T) {
	var zero T
	if *v == zero {
		*v = d
	}
}
