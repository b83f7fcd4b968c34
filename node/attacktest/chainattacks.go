package attacktest

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// registrationHijack is #19's first probe: a ProviderRegister naming a
// running provider's machine and peer (their public keys are in every
// receipt a buyer gets), signed by the attacker's account with signatures
// it cannot make. The chain must refuse it with a registration code.
func registrationHijack(ctx context.Context, e *env) (Verdict, string, error) {
	a, env, _, err := e.paidReceipt(ctx, "whose machine is this")
	if err != nil {
		return Failed, "", err
	}
	pid, err := peer.IDFromBytes(env.Cert.PeerID)
	if err != nil {
		return Failed, "", fmt.Errorf("attacktest: the receipt's peer: %w", err)
	}
	p, err := e.c.params(ctx)
	if err != nil {
		return Failed, "", err
	}
	garbage := func(n int) []byte { b := make([]byte, n); _, _ = rand.Read(b); return b }
	reg := &ledger.ProviderRegister{MachineID: a.Record.Provider, HWPubDER: env.Cert.HWPub, PQPub: env.Cert.PQPub,
		PeerID: pid.String(), Bond: p.MinServingBond, UnbondingSecs: 3600,
		HWSig: env.Cert.HWSig, PQSig: env.Cert.PQSig, PeerSig: garbage(64)} // the certificate's signatures, lifted
	r, err := e.c.submit(ctx, e.t.BuyerKey, reg)
	if err != nil {
		return Failed, "", err
	}
	switch ledger.Code(r.Code) {
	case ledger.CodeBadHWSig, ledger.CodeBadPQSig, ledger.CodeBadPeerSig, ledger.CodeMachineTaken, ledger.CodePeerTaken,
		ledger.CodePairingChanged, ledger.CodeBadIdentity:
		return Held, fmt.Sprintf("refused: %d %s", r.Code, r.Result), nil
	case ledger.CodeOK:
		return Broke, "the victim's machine registered to the attacker's account", nil
	}
	return Broke, fmt.Sprintf("refused, but not for its proof: %d %s: %.120s", r.Code, r.Result, r.Log), nil
}

// abortedStream is #19's last probe: a buyer who read part of a stream and
// left paid nothing. The gateway must bill what was delivered: a record
// for a call the buyer never saw finish appears on chain.
func abortedStream(ctx context.Context, e *env) (Verdict, string, error) {
	before, err := e.settledDigests(ctx)
	if err != nil {
		return Failed, "", err
	}
	body, _ := json.Marshal(map[string]any{"model": e.t.Model, "max_tokens": 200, "stream": true,
		"messages": []map[string]string{{"role": "user", "content": "write a long story about rivers"}},
		"tenzro":   map[string]any{"verification": "receipt", "hedge": false}})
	sctx, cancel := context.WithCancel(ctx)
	req, _ := http.NewRequestWithContext(sctx, http.MethodPost, e.t.API+"/v1/chat/completions", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+e.t.Token)
	resp, err := e.t.HTTP.Do(req)
	if err != nil {
		cancel()
		return Failed, "", err
	}
	chunks := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && chunks < 2 {
		if strings.HasPrefix(sc.Text(), "data: {") {
			chunks++
		}
	}
	cancel() // the buyer leaves
	resp.Body.Close()
	if chunks == 0 {
		return Failed, "", fmt.Errorf("attacktest: the stream sent no chunk (HTTP %d)", resp.StatusCode)
	}
	// The provider's collector settles it within seconds as a rule, but it
	// has been seen to take over a minute on a devnet; the gateway's outbox
	// submits anything unsettled after its grace (60 s by default), so the
	// wait covers that too.
	var got payment
	left := time.Now()
	err = e.c.untilFor(ctx, e.c.wait+90*time.Second, "a record for the aborted stream", func() (bool, error) {
		now, err := e.settledList(ctx)
		for _, p := range now {
			d, _ := hex.DecodeString(p.RequestDigest)
			if !before[p.RequestDigest] && !e.isKnown(d) {
				got = p
				return true, nil
			}
		}
		return false, err
	})
	if err != nil {
		return Broke, fmt.Sprintf("left after %d chunks; no record for the delivered part settled (%v)", chunks, err), nil
	}
	return Held, fmt.Sprintf("left after %d chunks; billed %d µ for the delivered part, settled %s after", chunks, got.Price,
		time.Since(left).Round(100*time.Millisecond)), nil
}

func (e *env) isKnown(d []byte) bool {
	if len(d) != 32 {
		return false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.known[terms.Hash32(d)]
}

func (e *env) settledList(ctx context.Context) ([]payment, error) {
	var v struct {
		Records []payment `json:"records"`
	}
	err := call(ctx, e.c.rpc, "tenzro_getPayments", map[string]any{"payer": e.t.buyer().String()}, &v)
	return v.Records, err
}

func (e *env) settledDigests(ctx context.Context) (map[string]bool, error) {
	ps, err := e.settledList(ctx)
	m := map[string]bool{}
	for _, p := range ps {
		m[p.RequestDigest] = true
	}
	return m, err
}
