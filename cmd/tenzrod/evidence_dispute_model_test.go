package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/inference/commit/committest"
	"github.com/tenzrod/tenzrod/inference/llm"
	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/gateway/gatewayapi"
)

// TestEvidenceDisputeModel: with --model, `evidence dispute` judges the
// fetched evidence on the buyer's copy of the weights. An answer served
// from other weights under the model's ID is written naming chunk 0, the
// first that fails; an honest answer is refused ("verifies against your
// copy of the weights") and nothing is written, unless --force.
func TestEvidenceDisputeModel(t *testing.T) {
	dir := t.TempDir()
	o := modelgen.DevnetOptions()
	o.Layers, o.Dim, o.Heads, o.KVHeads, o.FFN, o.Vocab, o.Context = 1, 64, 2, 1, 64, 300, 256
	realDir, otherDir := filepath.Join(dir, "real"), filepath.Join(dir, "other")
	if err := modelgen.GenerateModel(realDir, o); err != nil {
		t.Fatal(err)
	}
	o.Seed++
	if err := modelgen.GenerateModel(otherDir, o); err != nil {
		t.Fatal(err)
	}
	mach := testMachine(t)
	real := openModel(t, realDir)
	model := real.Info().ID
	in := receipt.EvidenceInput{Chat: true, Messages: []terms.Message{{Role: "user", Content: "café 🙂"}},
		Sampling: terms.Sampling{Temperature: 0.8, TopP: 0.95, Seed: 7, MaxTokens: 40}}
	digest := strings.Repeat("9f", 32)
	for _, tc := range []struct {
		name, served string
		args         []string
		chunk        int
		msg          string
	}{
		{"other weights", otherDir, nil, 0, "chunk 0, the first that fails"},
		{"honest", realDir, nil, -1, "the answer verifies against your copy of the weights: a dispute would lose its bond"},
		{"honest forced", realDir, []string{"--force"}, 0, "chunk 0, forced"},
	} {
		ev := servedEvidence(t, mach, model, openModel(t, tc.served), in)
		api := evidenceServer(t, gatewayapi.DisputeEvidenceResult{Payer: strings.Repeat("5e", 32), RequestDigest: digest, Evidence: ev})
		file := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-")+".json")
		out, err := runCLI(t, append([]string{"evidence", "dispute", "--api", api, "--request", digest, "--token", "t", "--out", file, "--model", realDir}, tc.args...)...)
		if tc.chunk < 0 {
			if err == nil || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("%s: %v, want an error naming %q\n%s", tc.name, err, tc.msg, out)
			}
			if _, serr := os.Stat(file); serr == nil {
				t.Errorf("%s: wrote %s anyway", tc.name, file)
			}
			continue
		}
		if err != nil || !strings.Contains(out, tc.msg) {
			t.Errorf("%s: %v, want output naming %q\n%s", tc.name, err, tc.msg, out)
			continue
		}
		b, err := os.ReadFile(file)
		var got ledger.DisputeEvidence
		if err != nil || json.Unmarshal(b, &got) != nil || got.Chunk != uint32(tc.chunk) {
			t.Errorf("%s: file %s (%v): chunk %d, want %d", tc.name, b, err, got.Chunk, tc.chunk)
		}
	}
}

func openModel(t *testing.T, dir string) *llm.Engine {
	t.Helper()
	e, err := llm.Open(dir, llm.Options{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// servedEvidence is the evidence of in answered on eng, signed by mach as
// an answer of model, as the gateway keeps it.
func servedEvidence(t *testing.T, mach *ledgertest.Machine, model inference.ModelID, eng inference.Engine, in receipt.EvidenceInput) ledger.DisputeEvidence {
	t.Helper()
	res, text, proofs := committest.Generate(t, eng, inference.GenerateRequest{Messages: in.Messages, Sampling: in.Sampling})
	tokens := make([]uint32, len(res.Tokens))
	for i, id := range res.Tokens {
		tokens[i] = uint32(id)
	}
	input, mid := in.Commitment(model[:]), mach.MachineID()
	out, ch, th := receipt.OutputHash(text), commit.Hash(proofs), receipt.TokensHash(tokens)
	env, err := receipt.Sign(mach.Session, &receipt.Receipt{ModelID: model[:], Engine: "embedded", MachineID: mid[:],
		ProviderPeer: []byte(mach.PeerID), Nonce: make([]byte, 16), InputCommitment: input[:], OutputHash: out[:],
		Units: terms.Units{OutputTokens: uint64(len(tokens))}, CommitmentHash: ch[:], TokensHash: th[:], FinishReason: "length", TimeMs: time.Now().UnixMilli()})
	if err != nil {
		t.Fatal(err)
	}
	enc, err := receipt.EncodeEvidenceInput(in)
	if err != nil {
		t.Fatal(err)
	}
	return ledger.DisputeEvidence{Receipt: env, Proofs: commit.Encode(proofs), Tokens: tokens, Input: enc}
}

// evidenceServer is a gateway without a chain that answers
// tenzro_getDisputeEvidence with res.
func evidenceServer(t *testing.T, res gatewayapi.DisputeEvidenceResult) string {
	t.Helper()
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": res})
	}))
	t.Cleanup(api.Close)
	return api.URL
}
