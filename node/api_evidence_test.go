package node

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/node/validator"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/gateway/gatewayapi"
)

// TestDisputeEvidenceFromGateway: on a real chain (one validator holding
// the served model's weights, one registered provider), a buyer's paid
// optimistic call through the gateway leaves evidence the buyer reads
// with tenzro_getDisputeEvidence and its own token or the operator's
// admin token only (no token, an unknown one, or another buyer's: refused
// or not found); once the provider
// settled the record the node's preflight finds nothing the chain would
// refuse, and a DisputeOpen carrying the evidence, decoded as `tx
// dispute open --evidence` reads the file, is accepted in its block (not
// CodeBadEvidence). The committee re-executes it and never convicts the
// honest provider.
func TestDisputeEvidenceFromGateway(t *testing.T) {
	params := testChainParams(3600)
	params.FeePerRecord = 3
	params.DisputeMinBond, params.DisputeCommittee, params.DisputeVerdictBlocks = 100, 1, 20
	disKey := newAccountKey(t)
	const adminToken, otherToken = "operator-secret", "another-buyer"
	dir, modelID := testModelDir(t)
	net := newChainNetWith(t, 1, 1, 0, params, chainExtra{funded: map[terms.AccountID]uint64{keyAccount(disKey): 1_000_000}},
		func(c *Config) {
			c.Router.ProbeInterval = 0
			c.Validator.Models = []validator.ModelConfig{{Name: DevnetModelName, Dir: dir}}
			c.API.AdminTokenSHA256 = TokenHash(adminToken)
			c.Router.Buyers = append(c.Router.Buyers, BuyerConfig{Payer: keyAccount(newAccountKey(t)).String(), TokenSHA256: TokenHash(otherToken)})
		})
	gw, prov, c := net.validators[0], net.registered[0], net.validators[0].Chain()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	waitRegistered(t, gw, net.registered)
	model, err := terms.ParseHash(modelID)
	if err != nil {
		t.Fatal(err)
	}
	nodetest.Eventually(t, 60*time.Second, "the validator to declare the served model", func() bool {
		h, err := c.ModelHolders(ctx, model)
		return err == nil && len(h.Validators) == 1
	})

	code, body := askPinned(t, gw, prov, "optimistic")
	if code != http.StatusOK {
		t.Fatalf("optimistic call: %d %s", code, body)
	}
	var answer struct {
		Tenzro struct {
			Payment struct {
				Price  uint64 `json:"price"`
				Signed *struct {
					RequestDigest string `json:"request_digest"`
				} `json:"signed"`
			} `json:"payment"`
		} `json:"tenzro"`
	}
	if err := json.Unmarshal([]byte(body), &answer); err != nil || answer.Tenzro.Payment.Signed == nil {
		t.Fatalf("answer carries no signed record (%v): %s", err, body)
	}
	digest := answer.Tenzro.Payment.Signed.RequestDigest
	params1 := `{"request":"` + digest + `"}`
	url := gw.APIURL()
	for _, tc := range []struct {
		token, params string
		code          int
	}{
		{"", params1, rpc.CodeUnauthorized},
		{"not-a-buyer", params1, rpc.CodeUnauthorized},
		{testToken, `{"request":"` + strings.Repeat("ab", 32) + `"}`, rpc.CodeInvalidParams},
		{testToken, `{"request":"zz"}`, rpc.CodeInvalidParams},
		{otherToken, params1, rpc.CodeInvalidParams}, // another buyer's request is none of its own
	} {
		if e := rpcAs(t, url, tc.token, "tenzro_getDisputeEvidence", tc.params, nil); e == nil || e.Code != tc.code {
			t.Errorf("token %q params %s: %v, want code %d", tc.token, tc.params, e, tc.code)
		}
	}
	var res gatewayapi.DisputeEvidenceResult
	nodetest.Eventually(t, 60*time.Second, "the provider to settle the record", func() bool {
		if e := rpcAs(t, url, testToken, "tenzro_getDisputeEvidence", params1, &res); e != nil {
			t.Fatalf("tenzro_getDisputeEvidence: %v", e)
		}
		return res.Settled != nil && *res.Settled
	})
	if res.Problem != "" || res.Payer != testBuyer().String() || res.RequestDigest != digest || len(res.Evidence.Tokens) == 0 ||
		len(res.Evidence.Input) == 0 || len(res.Evidence.Proofs) == 0 || res.Provider != prov.Host().ID().String() || res.Price != answer.Tenzro.Payment.Price || res.Price == 0 {
		t.Fatalf("evidence: problem %q, payer %s, request %s, provider %s, price %d (paid %d), %d tokens, %d input bytes, %d proof bytes",
			res.Problem, res.Payer, res.RequestDigest, res.Provider, res.Price, answer.Tenzro.Payment.Price, len(res.Evidence.Tokens), len(res.Evidence.Input), len(res.Evidence.Proofs))
	}
	var byAdmin gatewayapi.DisputeEvidenceResult
	if e := rpcAs(t, url, adminToken, "tenzro_getDisputeEvidence", params1, &byAdmin); e != nil || byAdmin.Payer != res.Payer ||
		string(byAdmin.Evidence.Receipt) != string(res.Evidence.Receipt) {
		t.Fatalf("the operator's read: %v, payer %s", e, byAdmin.Payer)
	}
	// The file `tenzrod evidence dispute` writes is the evidence's JSON,
	// read back as `tx dispute open` reads it: unknown fields refused.
	file, err := json.Marshal(res.Evidence)
	if err != nil {
		t.Fatal(err)
	}
	var ev ledger.DisputeEvidence
	dec := json.NewDecoder(bytes.NewReader(file))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ev); err != nil {
		t.Fatal(err)
	}
	rd, err := terms.ParseHash(digest)
	if err != nil {
		t.Fatal(err)
	}
	sub, err := consensus.NewSubmitter(c, disKey, nil)
	if err != nil {
		t.Fatal(err)
	}
	subj := ledger.DisputeSubject{Kind: ledger.SubjectRecord, Payer: testBuyer(), RequestDigest: rd}
	tx, err := sub.Submit(ctx, &ledger.DisputeOpen{Subject: subj, Evidence: ev, Bond: params.DisputeMinBond})
	if err != nil {
		t.Fatal(err)
	}
	if tx.Code != 0 {
		t.Fatalf("the chain refused the gateway's evidence: code %v (%d), %s", ledger.Code(tx.Code), tx.Code, tx.Log)
	}
	id := ledger.DisputeID(subj)
	var d ledger.Dispute
	nodetest.Eventually(t, 90*time.Second, "the committee's verdict", func() bool {
		var ok bool
		d, ok, err = c.Dispute(ctx, id)
		return err == nil && ok && d.Status.Resolved()
	})
	// Acquitted, or (a committee too slow on a loaded machine) lapsed:
	// never convicted.
	if d.Status == ledger.DisputeGuilty || d.Slashed != 0 || d.Reversed != 0 {
		t.Fatalf("the honest answer's dispute ended %v (slashed %d, reversed %d)", d.Status, d.Slashed, d.Reversed)
	}
	t.Logf("dispute opened at %d, verdict %v at %d after %d round(s)", d.OpenHeight, d.Status, d.ResolveHeight, len(d.Rounds))
}

// rpcAs posts one JSON-RPC call with a bearer token ("" for none) and
// decodes its result into v.
func rpcAs(t *testing.T, url, token, method, params string, v any) *rpc.Error {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":` + params + `}`
	_, raw := send(t, url+"/rpc", token, body)
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  *rpc.Error      `json:"error"`
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		t.Fatalf("%s: %v", method, err)
	}
	if out.Error == nil && v != nil {
		if err := json.Unmarshal(out.Result, v); err != nil {
			t.Fatal(err)
		}
	}
	return out.Error
}
