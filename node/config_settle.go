package node

import (
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/settle"
)

// SettleConfig is the [settle] section: how this node moves payment
// records to the chain. A gateway's outbox keeps the records it signs as
// settler and submits what providers leave unsettled after the grace
// period; a provider's collector submits what it is paid with.
type SettleConfig struct {
	// Validity is how many blocks a signed record stays valid; it must be
	// below the chain's withdrawal delay (600 blocks by default).
	Validity int64 `toml:"validity"`
	// Grace is how long the gateway leaves a record to the provider before
	// submitting it itself.
	Grace time.Duration `toml:"grace"`
	// CollectInterval: a provider submits what it holds at least this often.
	CollectInterval time.Duration `toml:"collect_interval"`
	// CollectBatch: a provider submits at once when this many records wait.
	CollectBatch int `toml:"collect_batch"`
}

// DefaultSettleConfig returns the settle package's defaults.
func DefaultSettleConfig() SettleConfig {
	o, c := settle.DefaultOutboxConfig(), settle.DefaultCollectorConfig()
	return SettleConfig{Validity: o.Validity, Grace: o.Grace, CollectInterval: c.Interval, CollectBatch: c.BatchRecords}
}

// outbox is the gateway's outbox configuration in the node's home.
func (s SettleConfig) outbox(c Config) settle.OutboxConfig {
	o := settle.DefaultOutboxConfig()
	o.Dir, o.Validity, o.Grace = c.Path(filepath.Join("data", "outbox")), s.Validity, s.Grace
	return o
}

// collector is the provider's collector configuration in the node's home.
func (s SettleConfig) collector(c Config) settle.CollectorConfig {
	o := settle.DefaultCollectorConfig()
	o.Dir, o.Interval, o.BatchRecords = c.Path(filepath.Join("data", "collected")), s.CollectInterval, s.CollectBatch
	return o
}

// Validate checks the section, naming each bad key.
func (s SettleConfig) Validate() error {
	var errs []error
	if s.Validity < 2 || s.Validity > 10_000_000 {
		errs = append(errs, fmt.Errorf("settle.validity: %d blocks outside 2..10000000", s.Validity))
	}
	if s.Grace < 0 || s.Grace > 24*time.Hour {
		errs = append(errs, fmt.Errorf("settle.grace: %s outside 0..24h", s.Grace))
	}
	if s.CollectInterval < 10*time.Millisecond || s.CollectInterval > time.Hour {
		errs = append(errs, fmt.Errorf("settle.collect_interval: %s outside 10ms..1h", s.CollectInterval))
	}
	if s.CollectBatch < 1 || s.CollectBatch > ledger.MaxRecordsPerTx {
		errs = append(errs, fmt.Errorf("settle.collect_batch: %d outside 1..%d", s.CollectBatch, ledger.MaxRecordsPerTx))
	}
	return errors.Join(errs...)
}
