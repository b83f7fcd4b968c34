package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node"
)

// TestEvidenceDisputeCLI: `evidence dispute` asks the gateway for a
// request's evidence with the buyer's token, writes a file only its owner
// reads that `tx dispute open` parses back to exactly the evidence the
// gateway kept, and prints the command that opens the dispute; evidence
// the gateway's preflight says the chain would refuse, and a refused
// read, fail with the reason and write nothing. (The node side, end to end
// on a chain: node's TestDisputeEvidenceFromGateway.)
func TestEvidenceDisputeCLI(t *testing.T) {
	const token = "buyer-secret"
	payer, digest := strings.Repeat("5e", 32), strings.Repeat("9f", 32)
	settled := true
	want := node.DisputeEvidenceResult{Payer: payer, RequestDigest: digest, Provider: "12D3KooWtest", Model: "devnet",
		Settled: &settled, SettledHeight: 42,
		Evidence: ledger.DisputeEvidence{Receipt: []byte{0xd8, 1, 2}, Proofs: []byte{0, 0, 0, 1}, Tokens: []uint32{791, 318, 0xfffd},
			Input: []byte(`{"chat":true,"messages":[{"role":"user","content":"hé 🙂"}],"sampling":{"max_tokens":4}}`)}}
	var answer any = want
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage            `json:"id"`
			Method string                     `json:"method"`
			Params node.DisputeEvidenceParams `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if r.Header.Get("Authorization") != "Bearer "+token || req.Method != "tenzro_getDisputeEvidence" || req.Params.Request != digest {
			_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID,
				"error": map[string]any{"code": -32001, "message": "tenzro_getDisputeEvidence: a valid bearer token is required"}})
			return
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": answer})
	}))
	defer api.Close()
	dir := t.TempDir()

	file := filepath.Join(dir, "evidence.json")
	out, err := runCLI(t, "evidence", "dispute", "--api", api.URL, "--request", digest, "--token", token, "--out", file)
	if err != nil {
		t.Fatalf("evidence dispute: %v\n%s", err, out)
	}
	for _, s := range []string{"settled at height 42", "tenzrod tx dispute open --key YOUR_ACCOUNT_KEY --payer " + payer + " --request " + digest + " --evidence " + file} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("evidence file: %v, mode %v: want readable by its owner only", err, st.Mode())
	}
	open, err := recordDisputeOpen(payer, digest, file, 100)
	if err != nil {
		t.Fatalf("tx dispute open cannot read the file: %v", err)
	}
	got := open.Evidence
	if string(got.Receipt) != string(want.Evidence.Receipt) || string(got.Proofs) != string(want.Evidence.Proofs) ||
		!slices.Equal(got.Tokens, want.Evidence.Tokens) || string(got.Input) != string(want.Evidence.Input) ||
		open.Subject.Payer.String() != payer || open.Subject.RequestDigest.String() != digest {
		t.Fatalf("tx dispute open reads %+v, the gateway kept %+v", open, want.Evidence)
	}

	for name, tc := range map[string]struct {
		args []string
		msg  string
	}{
		"no token":           {[]string{"--token", ""}, "bearer token"},
		"bad digest":         {[]string{"--token", token, "--request", "zz"}, "--request"},
		"chain would refuse": {[]string{"--token", token}, "the chain would refuse this evidence"},
	} {
		if name == "chain would refuse" {
			bad := want
			bad.Problem = "proofs hash to 00, the receipt signs 01"
			answer = bad
		}
		f := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".json")
		args := append([]string{"evidence", "dispute", "--api", api.URL, "--request", digest, "--out", f}, tc.args...)
		out, err := runCLI(t, args...)
		if err == nil || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: %v, want an error naming %q\n%s", name, err, tc.msg, out)
		}
		if _, serr := os.Stat(f); serr == nil {
			t.Errorf("%s: wrote %s anyway", name, f)
		}
	}
}
