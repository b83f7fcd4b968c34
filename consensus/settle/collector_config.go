package settle

import (
	"errors"
	"fmt"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// CollectorConfig tunes a provider's collector. Zero fields take their
// defaults (DefaultCollectorConfig).
type CollectorConfig struct {
	// Dir holds the collector's datastore (required).
	Dir string `toml:"dir"`
	// Interval: pending records are submitted at least this often.
	Interval time.Duration `toml:"interval"`
	// BatchRecords: submit at once when this many records are pending.
	BatchRecords int `toml:"batch_records"`
	// Retention is how long settled and skipped records are kept (from
	// signing or acceptance) as evidence before they are pruned.
	Retention time.Duration `toml:"retention"`
	// MaxBackoff bounds the delay between retries of a failing
	// submission (it starts at Interval and doubles).
	MaxBackoff time.Duration `toml:"max_backoff"`
	// SubmitBatch bounds the records submitted in one pass.
	SubmitBatch int `toml:"submit_batch"`
}

// DefaultCollectorConfig returns the collector defaults (Dir empty).
func DefaultCollectorConfig() CollectorConfig {
	return CollectorConfig{Interval: 2 * time.Second, BatchRecords: 100, MaxBackoff: time.Minute, Retention: DefaultRetention, SubmitBatch: 4 * ledger.MaxRecordsPerTx}
}

func (c CollectorConfig) withDefaults() CollectorConfig {
	d := DefaultCollectorConfig()
	def(&c.Interval, d.Interval)
	def(&c.BatchRecords, d.BatchRecords)
	def(&c.Retention, d.Retention)
	def(&c.MaxBackoff, max(d.MaxBackoff, c.Interval))
	def(&c.SubmitBatch, d.SubmitBatch)
	return c
}

// Validate checks the config with its defaults applied; each error names
// its key ("settle.collector.interval: ...").
func (c CollectorConfig) Validate() error {
	c = c.withDefaults()
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("settle.collector.%s: "+format, append([]any{key}, args...)...))
	}
	if c.Dir == "" {
		bad("dir", "required")
	}
	if c.Interval < 10*time.Millisecond || c.Interval > time.Hour {
		bad("interval", "%s outside 10ms..1h", c.Interval)
	}
	if c.BatchRecords < 1 || c.BatchRecords > ledger.MaxRecordsPerTx {
		bad("batch_records", "%d outside 1..%d", c.BatchRecords, ledger.MaxRecordsPerTx)
	}
	if c.Retention < time.Hour {
		bad("retention", "%s under 1h", c.Retention)
	}
	if c.MaxBackoff < c.Interval || c.MaxBackoff > 24*time.Hour {
		bad("max_backoff", "%s outside interval (%s)..24h", c.MaxBackoff, c.Interval)
	}
	if c.SubmitBatch < c.BatchRecords || c.SubmitBatch > 4*ledger.MaxRecordsPerTx {
		bad("submit_batch", "%d outside batch_records (%d)..%d", c.SubmitBatch, c.BatchRecords, 4*ledger.MaxRecordsPerTx)
	}
	return errors.Join(errs...)
}
