package validator

import (
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestJudgeConstrainedAnswer: a json_schema answer served under the mask
// is acquitted; a provider that ignored the mask (it sampled freely but
// signs the request that carried the schema) is convicted by the
// re-execution, which draws under the mask.
func TestJudgeConstrainedAnswer(t *testing.T) {
	eng := openGenerated(t, filepath.Join(t.TempDir(), "m"), modelgen.DevnetOptions())
	m := testMachine(t, filepath.Join(t.TempDir(), "machine"))
	schema := `{"type":"object","properties":{"city":{"type":"string"},"n":{"type":"integer"}},"required":["city","n"],"additionalProperties":false}`
	in := DisputeInput{Chat: true, Messages: []terms.Message{{Role: "user", Content: "Where, and how many?"}},
		Sampling: terms.Sampling{Temperature: 0.8, Seed: 5, MaxTokens: 40,
			Format: &terms.ResponseFormat{Type: terms.FormatJSONSchema, Name: "place", Schema: json.RawMessage(schema)}}}
	honest := generate(t, eng, in)
	if !json.Valid([]byte(honest.text)) {
		t.Fatalf("the constrained answer %q is not JSON", honest.text)
	}
	if v, why, err := judge(t.Context(), eng, signAnswer(t, m, eng.Info().ID, []byte("nonce-honest-001"), honest), commit.DefaultTolerance); v != ledger.VerdictInnocent || err != nil {
		t.Fatalf("the honest constrained answer: %s %s %v", v, why, err)
	}
	free := in
	free.Sampling.Format = nil
	cheat := generate(t, eng, free)
	cheat.in = in // signed as an answer to the request with the schema
	v, why, err := judge(t.Context(), eng, signAnswer(t, m, eng.Info().ID, []byte("nonce-cheat-0001"), cheat), commit.DefaultTolerance)
	if v != ledger.VerdictGuilty || err != nil {
		t.Fatalf("an answer that ignored the mask: %s %s %v", v, why, err)
	}
}
