package node

import (
	"bufio"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
)

// TestCreditGatewayRefusesShortEscrow: through a real gateway node, a
// buyer whose escrow with that gateway holds less than the best quote is
// refused 402 insufficient_funds naming what it can spend, before any
// provider is called (the gateway's attempts counter does not move) and
// with its escrow untouched; the funded buyer's call on the same route
// succeeds and is counted, so the counter and the route are live.
func TestCreditGatewayRefusesShortEscrow(t *testing.T) {
	const shortToken = "sk-tenzro-test-short"
	payer := newAccountKey(t)
	c := newCreditNetPaying(t, payer, 1, testChainParams(3600), nil, func(cfg *Config) {
		cfg.Router.Buyers = append(cfg.Router.Buyers, BuyerConfig{Payer: keyAccount(payer).String(), TokenSHA256: TokenHash(shortToken)})
	})
	prov, gw := c.provs[0], c.gw
	settler := accountKey(t, gw.Config())
	const funds = 5 // below the rate card's per-call minimum
	c.submit(t, &ledger.EscrowFund{Amount: funds, Settler: settler})
	waitRegistered(t, gw, c.provs)

	before := routerAttempts(t, gw)
	code, body := askPinnedAs(t, gw, prov, shortToken)
	if code != http.StatusPaymentRequired || !strings.Contains(body, "insufficient_funds") || !strings.Contains(body, "can spend 5 micro-units") {
		t.Fatalf("short escrow: %d %.400s", code, body)
	}
	if n := routerAttempts(t, gw); n != before {
		t.Fatalf("the gateway made %v provider attempts for a buyer it refused", n-before)
	}
	if e := c.escrow(t, settler); e.Balance != funds {
		t.Fatalf("escrow %+v after the refusal, want %d", e, funds)
	}
	// While a deposit of the buyer's is on its way (join --deposit), the
	// same call is told to wait for it, still before any provider is called.
	done := gw.ExpectDeposit(keyAccount(payer), 7_000)
	code, body = askPinnedAs(t, gw, prov, shortToken)
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "warming_up") || !strings.Contains(body, "deposit of 7000 micro-units") {
		t.Fatalf("short escrow with a deposit pending: %d %.400s", code, body)
	}
	done()
	if code, body = askPinnedAs(t, gw, prov, shortToken); code != http.StatusPaymentRequired {
		t.Fatalf("short escrow once the deposit is no longer pending: %d %.400s", code, body)
	}
	if n := routerAttempts(t, gw); n != before {
		t.Fatalf("the gateway made %v provider attempts for a buyer it refused", n-before)
	}

	if code, body := askPinnedAs(t, gw, prov, testToken); code != http.StatusOK {
		t.Fatalf("funded buyer: %d %.400s", code, body)
	}
	if n := routerAttempts(t, gw); n <= before {
		t.Fatalf("attempts %v after a served call, want more than %v", n, before)
	}
}

// askPinnedAs is askPinned at level receipt with the buyer's token.
func askPinnedAs(t *testing.T, gw, p *Node, token string) (int, string) {
	t.Helper()
	body := `{"model":"` + DevnetModelName + `","max_tokens":4,"messages":[{"role":"user","content":"hi"}],` +
		`"tenzro":{"verification":"receipt","hedge":false,"provider":"` + p.Host().ID().String() + `"}}`
	return postChat(t, gw, token, body)
}

// routerAttempts sums tenzro_router_attempts_total over every provider
// and outcome on n's /metrics.
func routerAttempts(t *testing.T, n *Node) float64 {
	t.Helper()
	_, metrics := send(t, n.APIURL()+"/metrics", "", "")
	var sum float64
	sc := bufio.NewScanner(strings.NewReader(metrics))
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "tenzro_router_attempts_total{") {
			continue
		}
		v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		if err != nil {
			t.Fatalf("metrics line %q: %v", line, err)
		}
		sum += v
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sum
}
