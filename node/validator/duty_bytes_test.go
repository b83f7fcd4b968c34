package validator

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/ledgertest"
	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/commit"
	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/modelgen"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// bytesPrompts ask for output in many scripts; on random weights the
// answers are random token sequences whatever the prompt, which is the
// point: their bytes are invalid UTF-8, multi-byte characters split
// across tokens, control bytes and byte-fallback tokens.
var bytesPrompts = []string{
	"用中文回答：什么是验证？",
	"Emoji time 🙂🚀👩‍💻 — go!",
	"Café, naïve, jalapeño, Ærøskøbing, Øresund",
	"\x01\x02\x1b[0m\x7f control bytes",
	"Tell me about verification",
}

// stopInside returns a stop string that cuts answer a inside one of its
// tokens (a valid UTF-8 tail of a multi-byte piece that does not occur
// earlier in the text), and the number of tokens the cut answer keeps.
func stopInside(eng inference.Engine, a answer) (string, int, bool) {
	var raw []byte
	for j, id := range a.tokens {
		piece := []byte(eng.Detokenize([]int{int(id)}))
		for k := 1; j > 0 && k < len(piece); k++ {
			s := piece[k:]
			if utf8.Valid(s) && len(s) > 0 && !bytes.Contains(append(bytes.Clone(raw), piece[:k]...), s[:1]) {
				return string(s[:1]), j + 1, true
			}
		}
		raw = append(raw, piece...)
	}
	return "", 0, false
}

// TestJudgeBytesExact: for a byte-level BPE and a SentencePiece (byte
// fallback) vocabulary, answers whose bytes are invalid UTF-8, split
// multi-byte characters across tokens or are cut by a stop string inside
// a token are judged on the signed token IDs: every honest answer is
// acquitted and every answer from a Q8_0 copy of the weights convicted,
// per case, though the signed text (each piece sanitised as the provider
// sends it) is not what the tokens spell.
func TestJudgeBytesExact(t *testing.T) {
	m, err := ledgertest.NewMachine(filepath.Join(t.TempDir(), "machine"), time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	ctx := context.Background()
	for _, tok := range []string{"gpt2", "llama"} {
		t.Run(tok, func(t *testing.T) {
			o := modelgen.DevnetOptions()
			o.Tokenizer = tok
			real := openGenerated(t, filepath.Join(t.TempDir(), "real"), o)
			o.Quant = gguf.TypeQ8_0
			cheat := openGenerated(t, filepath.Join(t.TempDir(), "q8"), o)
			var invalid, split, rendered, cut int
			for i, p := range bytesPrompts {
				in := DisputeInput{Chat: true, Messages: []terms.Message{{Role: "user", Content: p}},
					Sampling: terms.Sampling{Temperature: []float64{0, 0.9, 1.3}[i%3], Seed: uint64(40 + i), MaxTokens: 24}}
				cases := []DisputeInput{in}
				if stop, keep, ok := stopInside(real, generate(t, real, in)); ok {
					cut++
					withStop := in
					withStop.Sampling.Stop = []string{stop}
					if a := generate(t, real, withStop); len(a.tokens) != keep {
						t.Fatalf("stop %q kept %d tokens, want %d", stop, len(a.tokens), keep)
					}
					cases = append(cases, withStop)
				}
				for c, in := range cases {
					honest := generate(t, real, in)
					if honest.invalid() {
						invalid++
					}
					if honest.split {
						split++
					}
					if honest.text != honest.raw {
						rendered++
					}
					name := fmt.Sprintf("prompt %d case %d (%d tokens, invalid %v, split %v, stop %q)", i, c, len(honest.tokens),
						honest.invalid(), honest.split, in.Sampling.Stop)
					ev := signAnswer(t, m, real.Info().ID, make([]byte, 16), honest)
					if v, why, err := judge(ctx, real, ev, commit.DefaultTolerance); v != ledger.VerdictInnocent || err != nil {
						t.Errorf("%s: honest answer %s (%s) %v", name, v, why, err)
					}
					lie := generate(t, cheat, in)
					ev = signAnswer(t, m, real.Info().ID, make([]byte, 16), lie)
					if v, why, err := judge(ctx, real, ev, commit.DefaultTolerance); v != ledger.VerdictGuilty || err != nil {
						t.Errorf("%s: Q8_0 answer (invalid %v, split %v) %s (%s) %v", name, lie.invalid(), lie.split, v, why, err)
					}
				}
			}
			t.Logf("%s: honest answers with invalid UTF-8 %d, a split character %d, text rendered unlike the tokens %d, cut by a stop inside a token %d",
				tok, invalid, split, rendered, cut)
			if invalid == 0 || split == 0 || rendered == 0 || cut == 0 {
				t.Fatalf("the answers do not cover the byte shapes: invalid %d, split %d, rendered %d, stop-cut %d", invalid, split, rendered, cut)
			}
		})
	}
}
