package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/router/gateway/gatewayapi"
)

// TestEvidenceDisputeCLI: `evidence dispute` asks the gateway for a
// request's evidence with the buyer's token, writes a file only its owner
// reads that `tx dispute open` parses back to exactly the evidence the
// gateway kept, and prints the command that opens the dispute with the
// least bond the chain takes (ledger.DisputeBond of tenzro_getParams and
// the record's price). Without --model it names chunk 0 and says that a
// chunk that verifies loses the bond and how --model finds the failing
// one; --chunk N names chunk N, in the file and the bond. Evidence the
// gateway's preflight says the chain would refuse, a refused read, a
// chunk past the answer's last and --chunk with --model fail with the
// reason and write nothing. (The node side, end to end on a chain: node's
// TestDisputeEvidenceFromGateway.)
func TestEvidenceDisputeCLI(t *testing.T) {
	const token = "buyer-secret"
	payer, digest := strings.Repeat("5e", 32), strings.Repeat("9f", 32)
	settled := true
	tokens := make([]uint32, 70) // three chunks: 0 and 1 of 32 tokens, 2 of 6
	for i := range tokens {
		tokens[i] = uint32(791 + i)
	}
	tokens[69] = 0xfffd
	want := gatewayapi.DisputeEvidenceResult{Payer: payer, RequestDigest: digest, Provider: "12D3KooWtest", Model: "devnet",
		Settled: &settled, SettledHeight: 42, Price: 3_000_000,
		Evidence: ledger.DisputeEvidence{Receipt: []byte{0xd8, 1, 2}, Proofs: []byte{0, 0, 0, 1}, Tokens: tokens,
			Input: []byte(`{"chat":true,"messages":[{"role":"user","content":"hé 🙂"}],"sampling":{"max_tokens":4}}`)}}
	var answer any = want
	params := ledger.DefaultParams()
	bond0, bond2 := ledger.DisputeBond(params, want.Price, 0), ledger.DisputeBond(params, want.Price, 2)
	if bond0 <= params.DisputeMinBond || bond2 <= bond0 {
		t.Fatalf("the test's price makes bonds %d and %d (min %d): not telling", bond0, bond2, params.DisputeMinBond)
	}
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage                  `json:"id"`
			Method string                           `json:"method"`
			Params gatewayapi.DisputeEvidenceParams `json:"params"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		if req.Method == "tenzro_getParams" {
			_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": params})
			return
		}
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
	for _, s := range []string{"settled at height 42", "chunk 0, not checked", "chunk that verifies loses its bond", "--model DIR",
		"tenzrod tx dispute open --key YOUR_ACCOUNT_KEY --payer " + payer + " --request " + digest + " --evidence " + file + " --bond " + fmt.Sprint(bond0) + "\n"} {
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
	if got.Chunk != 0 || string(got.Receipt) != string(want.Evidence.Receipt) || string(got.Proofs) != string(want.Evidence.Proofs) ||
		!slices.Equal(got.Tokens, want.Evidence.Tokens) || string(got.Input) != string(want.Evidence.Input) ||
		open.Subject.Payer.String() != payer || open.Subject.RequestDigest.String() != digest {
		t.Fatalf("tx dispute open reads %+v, the gateway kept %+v", open, want.Evidence)
	}

	byHand := filepath.Join(dir, "chunk2.json")
	out, err = runCLI(t, "evidence", "dispute", "--api", api.URL, "--request", digest, "--token", token, "--out", byHand, "--chunk", "2")
	if err != nil {
		t.Fatalf("evidence dispute --chunk 2: %v\n%s", err, out)
	}
	if !strings.Contains(out, "chunk 2, named by hand") || !strings.Contains(out, " --evidence "+byHand+" --bond "+fmt.Sprint(bond2)+"\n") {
		t.Errorf("--chunk 2: output lacks the chunk or the bond %d:\n%s", bond2, out)
	}
	if open, err := recordDisputeOpen(payer, digest, byHand, bond2); err != nil || open.Evidence.Chunk != 2 {
		t.Errorf("--chunk 2: tx dispute open reads %v, %v; want chunk 2", open, err)
	}

	for name, tc := range map[string]struct {
		args []string
		msg  string
	}{
		"no token":            {[]string{"--token", ""}, "bearer token"},
		"bad digest":          {[]string{"--token", token, "--request", "zz"}, "--request"},
		"chunk past the last": {[]string{"--token", token, "--chunk", "3"}, "chunks 0 to 2"},
		"chunk and model":     {[]string{"--token", token, "--chunk", "1", "--model", dir}, "not both"},
		"chain would refuse":  {[]string{"--token", token}, "the chain would refuse this evidence"},
	} {
		answer = want
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
