package gateway

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p/infer"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// shortPayments holds avail for every payer; warming, if set, is why its
// reads may be behind.
type shortPayments struct {
	avail   uint64
	warming string
}

func (p shortPayments) Available(context.Context, terms.AccountID) (uint64, error) {
	return p.avail, nil
}
func (p shortPayments) Authorize(terms.AccountID) (*infer.PayAuth, error) { return nil, nil }
func (p shortPayments) Sign(context.Context, *receipt.PaymentRecord, peer.ID) error {
	return nil
}

type warmingPayments struct{ shortPayments }

func (p warmingPayments) Warming(context.Context, terms.AccountID) (string, bool) {
	return p.warming, p.warming != ""
}

// TestShortEscrowWhileWarming: an escrow that cannot cover a call is 402
// insufficient_funds, unless the payments say their read may be behind (a
// deposit on its way, a chain catching up): then 503 warming_up with the
// reason and a Retry-After, so the buyer waits for the deposit visibly.
func TestShortEscrowWhileWarming(t *testing.T) {
	payer := strings.Repeat("ab", 32)
	for _, c := range []struct {
		name     string
		payments Payments
		status   int
		code     string
		says     string
	}{
		{"covered", warmingPayments{shortPayments{avail: 100, warming: "a deposit"}}, 0, "", ""},
		{"short", shortPayments{avail: 5}, http.StatusPaymentRequired, "insufficient_funds", "can spend 5 micro-units"},
		{"short, settled in", warmingPayments{shortPayments{avail: 5}}, http.StatusPaymentRequired, "insufficient_funds", "can spend 5"},
		{"deposit on its way", warmingPayments{shortPayments{warming: "a deposit of 50 micro-units into its escrow is on its way to the chain"}},
			http.StatusServiceUnavailable, "warming_up", "can spend 0 micro-units through this gateway so far, the best quote is 10: a deposit of 50"},
	} {
		g := &Gateway{payments: c.payments}
		err := g.checkEscrow(context.Background(), payer, 10)
		var ge *Error
		switch {
		case c.status == 0 && err != nil:
			t.Errorf("%s: %v, want the call admitted", c.name, err)
		case c.status == 0:
		case !errors.As(err, &ge) || ge.Status != c.status || ge.Code != c.code || !strings.Contains(ge.Message, c.says):
			t.Errorf("%s: %v, want %d %s saying %q", c.name, err, c.status, c.code, c.says)
		case c.status == http.StatusServiceUnavailable && ge.RetryAfter <= 0:
			t.Errorf("%s: no Retry-After", c.name)
		}
	}
}
