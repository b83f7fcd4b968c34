package node

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestCreditHonestGatewayUnderLoad: an honest gateway with several buyers'
// calls in flight to one provider always owes it the records of the calls
// that just finished, and holds several calls' worst cases at once; the
// provider waits only for the records owed when a call arrived and
// reserves each call against the escrow, so every call is served (none
// refused 402). (TestCreditWaitsOnlyForRecordsOwedOnArrival in
// node/provider pins the waiting rule itself without timing.)
func TestCreditHonestGatewayUnderLoad(t *testing.T) {
	net := newChainNetWith(t, 1, 1, 0, testChainParams(3600), chainExtra{provOpts: []func(*Config){func(c *Config) {
		c.Provider.Capacity, c.Provider.RecordWait = 8, time.Second
	}}}, func(c *Config) { c.Router.ProbeInterval = 0 })
	gw, prov := net.validators[0], net.registered[0]
	waitRegistered(t, gw, net.registered)
	const buyers, calls = 4, 5
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
		t.Fatalf("%d of %d concurrent calls of an honest gateway failed: %s", len(bad), buyers*calls, strings.Join(bad[:min(len(bad), 4)], "\n"))
	}
}

// TestCreditConcurrentCallsWithinEscrow: calls a settler opens at the same
// time are admitted against the escrow one by one, each holding its
// worst-case price until it is owed: with an escrow that covers one
// call's worst case, exactly one of four concurrent calls is served and
// the others are refused 402.
func TestCreditConcurrentCallsWithinEscrow(t *testing.T) {
	c := newCreditNet(t, 1, testChainParams(3600), nil)
	prov := c.provs[0]
	settler := newAccountKey(t)
	h := newRogueHost(t)
	auth := c.payAuth(settler, h.ID(), c.payerID())
	worst := worstCase(t, prov, c.request(auth, "hi", 4))
	c.submit(t, &ledger.EscrowFund{Amount: worst + worst/2, Settler: keyAccount(settler)})
	// Connected first, so the four requests arrive together.
	_, err := c.call(t, h, prov, c.request(nil, "connect", 1))
	refused(t, "unpaid call", nil, err, http.StatusPaymentRequired, terms.CodePaymentRequired)

	const n = 4
	var served atomic.Int32
	var mu sync.Mutex
	var other []error
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f, err := c.call(t, h, prov, c.request(auth, "hi", 4))
			var ef *infer.ErrorFrame
			switch {
			case err == nil && f != nil:
				served.Add(1)
			case errors.As(err, &ef) && ef.Status == http.StatusPaymentRequired:
			default:
				mu.Lock()
				other = append(other, err)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if served.Load() != 1 || len(other) > 0 {
		t.Fatalf("%d of %d concurrent calls served on an escrow covering one worst case (%d); other failures %v", served.Load(), n, worst, other)
	}
}
