package settle

import (
	"strings"
	"testing"
	"time"
)

// TestConfigValidate: defaults are valid given a directory, and each bad
// value's error names its key.
func TestConfigValidate(t *testing.T) {
	if err := (OutboxConfig{Dir: "x"}).Validate(); err != nil {
		t.Fatalf("outbox defaults: %v", err)
	}
	if err := (CollectorConfig{Dir: "x"}).Validate(); err != nil {
		t.Fatalf("collector defaults: %v", err)
	}
	for key, c := range map[string]OutboxConfig{
		"settle.outbox.dir":           {},
		"settle.outbox.grace":         {Dir: "x", Grace: -time.Second},
		"settle.outbox.validity":      {Dir: "x", Validity: 1},
		"settle.outbox.interval":      {Dir: "x", Interval: time.Millisecond},
		"settle.outbox.deliver_batch": {Dir: "x", DeliverBatch: -1},
		"settle.outbox.max_backoff":   {Dir: "x", Interval: 10 * time.Second, MaxBackoff: time.Second},
	} {
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), key+":") {
			t.Errorf("%+v: %v, want an error naming %s", c, err, key)
		}
	}
	for key, c := range map[string]CollectorConfig{
		"settle.collector.dir":           {},
		"settle.collector.interval":      {Dir: "x", Interval: time.Millisecond},
		"settle.collector.batch_records": {Dir: "x", BatchRecords: 5000},
		"settle.collector.submit_batch":  {Dir: "x", BatchRecords: 50, SubmitBatch: 10},
	} {
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), key+":") {
			t.Errorf("%+v: %v, want an error naming %s", c, err, key)
		}
	}
}
