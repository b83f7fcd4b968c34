package settle

import (
	"errors"
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// Config is the [settle] section of a node's config file: how the node
// moves payment records to the chain. A gateway's outbox keeps the records
// it signs as settler and submits what providers leave unsettled after the
// grace period; a provider's collector submits what it is paid with.
type Config struct {
	// Validity is how many blocks a signed record stays valid; it must be
	// below the chain's withdrawal delay (600 blocks by default).
	Validity int64 `toml:"validity" comment:"Payment records on a chain. A gateway signs one per paid call as its buyers' settler, valid for this many blocks (below the chain's escrow withdrawal delay, 600 blocks by default)..."`
	// Grace is how long the gateway leaves a record to the provider before
	// submitting it itself.
	Grace time.Duration `toml:"grace" comment:"...and submits those the serving provider has not settled after this long."`
	// CollectInterval: a provider submits what it holds at least this often.
	CollectInterval time.Duration `toml:"collect_interval" comment:"A provider submits the records it is paid with at least this often, and at once when this many wait."`
	// CollectBatch: a provider submits at once when this many records wait.
	CollectBatch int `toml:"collect_batch"`
}

// DefaultConfig is the outbox's and the collector's defaults.
func DefaultConfig() Config {
	o, c := DefaultOutboxConfig(), DefaultCollectorConfig()
	return Config{Validity: o.Validity, Grace: o.Grace, CollectInterval: c.Interval, CollectBatch: c.BatchRecords}
}

// Outbox is the gateway's outbox configuration, kept in dir.
func (s Config) Outbox(dir string) OutboxConfig {
	o := DefaultOutboxConfig()
	o.Dir, o.Validity, o.Grace = dir, s.Validity, s.Grace
	return o
}

// Collector is the provider's collector configuration, kept in dir.
func (s Config) Collector(dir string) CollectorConfig {
	o := DefaultCollectorConfig()
	o.Dir, o.Interval, o.BatchRecords = dir, s.CollectInterval, s.CollectBatch
	return o
}

// Validate checks the section, naming each bad key.
func (s Config) Validate() error {
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
