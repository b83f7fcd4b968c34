package node

import (
	"fmt"
	"net/http"
	"sync"
	"testing"
)

// TestCreditHonestGatewayUnderLoad: an honest gateway with several buyers'
// calls in flight to one provider always owes it the records of the calls
// that just finished; the provider waits only for the records owed when a
// call arrived, so every call is served (none refused 402 unpaid).
func TestCreditHonestGatewayUnderLoad(t *testing.T) {
	// A short record wait: calls keep finishing while a new one waits, so
	// a provider that waited for its settler to owe nothing at all would
	// refuse it.
	net := newChainNetWith(t, 1, 1, 0, testChainParams(3600), chainExtra{provOpts: []func(*Config){func(c *Config) {
		c.Provider.Capacity, c.Provider.RecordWait = 8, creditRecordWait
	}}}, func(c *Config) { c.Router.ProbeInterval = 0 })
	gw, prov := net.validators[0], net.registered[0]
	waitRegistered(t, gw, net.registered)
	const buyers, calls = 6, 8
	var mu sync.Mutex
	var bad []string
	var wg sync.WaitGroup
	for range buyers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range calls {
				code, body := askPinnedAs(t, gw, prov, testToken)
				if code != http.StatusOK {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("%d %.200s", code, body))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if len(bad) > 0 {
		t.Fatalf("%d of %d concurrent calls of an honest gateway failed, first: %s", len(bad), buyers*calls, bad[0])
	}
}
