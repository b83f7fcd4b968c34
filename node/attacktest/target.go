package attacktest

import (
	"crypto/ed25519"
	"fmt"
	"io"
	"net/http"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tenzrod/tenzrod/receipts/terms"
)

// Target is what the scenarios attack and how hard.
type Target struct {
	// API is the gateway's base URL (its OpenAI routes and /rpc; the gateway
	// runs a chain node, which the chain scenarios submit through).
	API string
	// Token is an honest buyer's bearer token; BuyerKey that buyer's chain
	// account key (the payer of Token's calls), which the buyer-side
	// attacks sign with.
	Token    string
	BuyerKey ed25519.PrivateKey
	// SettlerKey is the gateway's own account key, for the gateway-side
	// attacks (records for calls that never happened); nil marks them n/a.
	SettlerKey ed25519.PrivateKey
	// Model is the model name honest calls ask for.
	Model string
	// Provider, if set, pins honest calls to one provider peer ID.
	Provider string
	// SlowSenders is how many slow unauthenticated body senders the
	// intake scenario opens (half on /rpc, half on /v1); SlowFor how long.
	SlowSenders int
	SlowFor     time.Duration
	// SpamTxs is how many failing settlements the fee-spam scenario sends.
	SpamTxs int
	// Settle bounds every wait for the chain (a record settling, a
	// transaction committing).
	Settle time.Duration
	// Validators is how many validators re-check every record (the fee
	// scenario's cost to the network); 0 asks the chain.
	Validators int
	// ProviderAddrs are a provider's p2p multiaddrs (with /p2p/ID) and
	// Network the network name, for the attack from an unregistered peer;
	// without them it is n/a. UnknownBudget is the most calls a provider
	// may serve an unknown, unpaying caller in a burst (its
	// unknown_rate_per_minute, 6 by default).
	ProviderAddrs []string
	Network       string
	UnknownBudget int
	// HTTP is the client for honest calls (nil: a fresh one).
	HTTP *http.Client
}

// withDefaults fills the zero fields with bounded defaults.
func (t Target) withDefaults() Target {
	if t.SlowSenders == 0 {
		t.SlowSenders = 40
	}
	if t.SlowFor == 0 {
		t.SlowFor = 6 * time.Second
	}
	if t.SpamTxs == 0 {
		t.SpamTxs = 3
	}
	if t.Settle == 0 {
		t.Settle = 60 * time.Second
	}
	if t.UnknownBudget == 0 {
		t.UnknownBudget = 6
	}
	if t.HTTP == nil {
		t.HTTP = &http.Client{Timeout: 60 * time.Second}
	}
	t.API = strings.TrimRight(t.API, "/")
	return t
}

// buyer is the honest buyer's (and buyer-side attacker's) account.
func (t *Target) buyer() terms.AccountID {
	return terms.AccountOf(t.BuyerKey.Public().(ed25519.PublicKey))
}

// Verdict is a scenario's outcome.
type Verdict string

const (
	Held   Verdict = "held"
	Broke  Verdict = "BROKE"
	NA     Verdict = "n/a"   // the target lacks what the scenario needs (named in the detail)
	Failed Verdict = "ERROR" // the scenario could not run (network, chain): neither held nor broke
)

// Result is one scenario's outcome.
type Result struct {
	Name    string
	Origin  string // the issue and probe it reproduces
	Verdict Verdict
	Detail  string
	Honest  string // the honest call after the attack: "ok 53ms" or what failed
	Took    time.Duration
}

// Table prints results as an aligned held/BROKE table.
func Table(w io.Writer, rs []Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tFROM\tVERDICT\tHONEST AFTER\tTOOK\tDETAIL")
	for _, r := range rs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", r.Name, r.Origin, r.Verdict, r.Honest, r.Took.Round(100*time.Millisecond), r.Detail)
	}
	_ = tw.Flush()
}

// Broken counts the results that are not held (BROKE or ERROR).
func Broken(rs []Result) int {
	n := 0
	for _, r := range rs {
		if r.Verdict == Broke || r.Verdict == Failed {
			n++
		}
	}
	return n
}
