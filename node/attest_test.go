package node

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/node/provider"
	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/attest/attesttest"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router"
)

// startAttestedProvider starts a provider whose SEV-SNP guest is
// go-sev-guest's fake device on the test-only chain, answering for the
// node's session key.
func startAttestedProvider(t *testing.T, boot []string) *Node {
	t.Helper()
	cfg := testConfig(t, RoleProvider, "software", boot)
	testRoots(t, &cfg)
	cfg.Provider.Attestation.Source = provider.AttestSEVSNP
	cfg.Provider.Models[0].Verification = []terms.Verification{terms.VerifyNone, terms.VerifyReceipt, terms.VerifyTEE}
	qp := attesttest.NewQuoteProvider(t, attesttest.ReportOpts{TCB: attesttest.GoodTCB})
	ctx, cancel := context.WithTimeout(context.Background(), nodetest.StartTimeout)
	defer cancel()
	n, err := New(ctx, cfg, Options{Logger: testLogger(), Quotes: qp})
	if err != nil {
		t.Fatalf("new attested provider: %v", err)
	}
	sess, err := n.session.Current()
	if err != nil {
		t.Fatal(err)
	}
	qp.Bind(sess.Cert.SessionPub)
	return nodetest.Start(t, "provider", n)
}

// offerOf is p's offer of the devnet model at n, if n knows it up and warm.
func offerOf(n *Node, p peer.ID) (router.Offer, bool) {
	for _, o := range n.Table().Offers(DevnetModelName) {
		if o.Peer == p && o.Status == router.StatusUp && o.State == gossip.StateWarm {
			return o, true
		}
	}
	return router.Offer{}, false
}

// TestTEEBackedByAttestation: a provider with an SEV-SNP attestation bound
// to its session key is quoted and served at tee, with its measurement; a
// provider without one never is. Nodes whose [attest] revokes the VCEK,
// requires a higher TCB or trusts other roots still list the provider but
// never quote it at tee.
func TestTEEBackedByAttestation(t *testing.T) {
	s := attesttest.Signer(t)
	gwCfg := testConfig(t, RoleGateway, "software", nil)
	testRoots(t, &gwCfg)
	gwCfg.Router.Buyers = []BuyerConfig{{Account: "alice", TokenSHA256: TokenHash(testToken), InitialCredit: 1_000_000}}
	gw := startNode(t, gwCfg)
	boot := gw.Host().Addrs()[:1]

	low := testConfig(t, RoleGateway, "software", boot)
	testRoots(t, &low)
	low.Attest.MinTCB = attest.TCBConfig{BlSpl: 3, SnpSpl: 9, UcodeSpl: 115}
	revoked := testConfig(t, RoleGateway, "software", boot)
	testRoots(t, &revoked)
	revoked.Attest.CRLs = []string{writeFile(t, revoked, "amd.crl", crlPEM(attesttest.CRL(t, s.Ark, s.Keys.Ark, s.Vcek.SerialNumber).Raw))}
	gwLow, gwRevoked := startNode(t, low), startNode(t, revoked)

	tee := startAttestedProvider(t, boot)
	plain := startNode(t, testConfig(t, RoleProvider, "software", boot))
	teeID, plainID := tee.Host().ID(), plain.Host().ID()
	if tee.Provider().Attested() == nil {
		t.Fatal("the provider's own policy refused its attestation")
	}

	for name, n := range map[string]*Node{"gateway": gw, "min_tcb gateway": gwLow, "CRL gateway": gwRevoked} {
		waitProviders(t, name, n, teeID, plainID)
	}
	o, _ := offerOf(gw, teeID)
	if o.Attested == nil || o.Attested.Kind != "sev-snp" || hex.EncodeToString(o.Attested.Measurement) != hex.EncodeToString(attesttest.Measurement) {
		t.Fatalf("attested provider's offer at the gateway: %+v", o.Attested)
	}
	if o, _ := offerOf(gw, plainID); o.Attested != nil {
		t.Fatalf("provider without an attestation shown attested: %+v", o.Attested)
	}
	// The plain provider trusts AMD's real roots only: it lists the
	// provider too (nobody is penalised for relaying), not as attested.
	waitProviders(t, "provider trusting AMD's roots", plain, teeID)
	if o, _ := offerOf(plain, teeID); o.Attested != nil {
		t.Errorf("a node trusting only AMD's roots took the test chain's attestation: %+v", o.Attested)
	}
	for name, n := range map[string]*Node{"min_tcb above the report's": gwLow, "VCEK revoked": gwRevoked} {
		if o, _ := offerOf(n, teeID); o.Attested != nil {
			t.Errorf("%s: attestation taken: %+v", name, o.Attested)
		}
		if lines := teeQuotes(t, n); len(lines) != 0 {
			t.Errorf("%s: quoted at tee: %+v", name, lines)
		}
	}

	lines := teeQuotes(t, gw)
	if len(lines) != 1 || lines[0].Provider != teeID.String() || lines[0].Attested == nil ||
		lines[0].Attested.Measurement != hex.EncodeToString(attesttest.Measurement) {
		t.Fatalf("tee quotes %+v: want the attested provider alone, with its measurement", lines)
	}

	body := `{"model":"tenzro-devnet","messages":[{"role":"user","content":"hi"}],"max_tokens":4,"tenzro":{"verification":"tee"}}`
	code, raw := postChat(t, gw, testToken, body)
	var out struct {
		Tenzro struct {
			Provider struct {
				PeerID string `json:"peer_id"`
			}
			Receipt struct{ Verified bool }
			Payment *struct{ Price uint64 }
		}
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil || code != http.StatusOK {
		t.Fatalf("tee call: status %d, %v", code, err)
	}
	if out.Tenzro.Provider.PeerID != teeID.String() || !out.Tenzro.Receipt.Verified || out.Tenzro.Payment == nil {
		t.Fatalf("tee call served by %s (verified %v, payment %v); want the attested provider, paid",
			out.Tenzro.Provider.PeerID, out.Tenzro.Receipt.Verified, out.Tenzro.Payment)
	}
}

// teeQuotes are n's quotes of the devnet model at tee (none when it
// refuses to resolve the model at that level).
func teeQuotes(t *testing.T, n *Node) []router.QuoteLine {
	t.Helper()
	res, err := n.quote(t.Context(), []byte(`{"model":"tenzro-devnet","units":{"input_tokens":10},"verification":"tee"}`))
	if err != nil {
		return nil
	}
	return res.([]router.QuoteLine)
}

// waitProviders waits until n lists every provider up and warm; on a timeout it
// fails with what n knows and its topics' verdicts.
func waitProviders(t *testing.T, name string, n *Node, ids ...peer.ID) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		all := true
		for _, id := range ids {
			if _, ok := offerOf(n, id); !ok {
				all = false
			}
		}
		if all {
			return
		}
		if time.Now().After(deadline) {
			known, _ := json.Marshal(n.Table().List())
			topics, _ := n.rpcCall("tenzro_listTopics", "{}")
			tj, _ := json.Marshal(topics)
			t.Fatalf("timed out after 60s waiting for %v warm at the %s; it knows %s; topics %s", ids, name, known, tj)
		}
		time.Sleep(nodetest.PollInterval)
	}
}
