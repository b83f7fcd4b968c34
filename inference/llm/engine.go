package llm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"

	"github.com/tenzrod/tenzrod/inference"
	"github.com/tenzrod/tenzrod/inference/catalog"
	"github.com/tenzrod/tenzrod/inference/gguf"
)

// Options configure an Engine.
type Options struct {
	// Threads is the number of goroutines for matrix work; 0 uses every CPU.
	// Results do not depend on it.
	Threads int
	// MaxContext caps the sequence length (prompt + output); 0 keeps the
	// model's context length, capped at 8192.
	MaxContext int
	// PrefillChunk is the number of tokens per prefill batch (default 64).
	// Results do not depend on it.
	PrefillChunk int
	// ModelID, if set, is the catalog root the model directory must have;
	// a directory that does not match is refused before it is loaded.
	ModelID *inference.ModelID
	// Expert runs MoE expert batches (default: locally).
	Expert ExpertFunc
	// ExpertLayer, when set, runs every expert batch of an MoE layer in
	// one call (it takes precedence over Expert), so a caller sending
	// experts to remote holders can send each holder one request per
	// layer. Results do not depend on which of the two runs them.
	ExpertLayer ExpertLayerFunc
	// CacheBytes is the prefix cache's budget of KV state (see Prefill);
	// 0 takes DefaultCacheBytes, a negative value turns the cache off.
	// Results do not depend on it.
	CacheBytes int64
}

// Engine is the embedded engine: a Model behind the inference.Engine
// interface. It is safe for concurrent use; each call has its own KV cache.
type Engine struct {
	m     *Model
	info  inference.ModelInfo
	opts  Options
	chat  *ChatTemplate // nil: native ChatML
	cache *prefixCache  // nil: off
}

var _ inference.Engine = (*Engine)(nil)

// ModelFile returns the GGUF file of a model directory: model.gguf, or the
// directory's only .gguf file.
func ModelFile(dir string) (string, error) {
	p := filepath.Join(dir, "model.gguf")
	if _, err := os.Stat(p); err == nil {
		return p, nil
	}
	matches, err := filepath.Glob(filepath.Join(dir, "*.gguf"))
	if err != nil {
		return "", fmt.Errorf("llm: %w", err)
	}
	if len(matches) != 1 {
		return "", fmt.Errorf("llm: %s: want model.gguf or exactly one .gguf file, found %d", dir, len(matches))
	}
	return matches[0], nil
}

// Open verifies a model directory against the catalog (its Merkle root is
// the model ID; opts.ModelID, if set, must match) and loads its GGUF file.
func Open(dir string, opts Options) (*Engine, error) {
	f, root, err := openChecked(dir, opts.ModelID)
	if err != nil {
		return nil, err
	}
	defer f.Close() //nolint:errcheck // read-only: a close error loses nothing
	m, err := LoadModel(f)
	if err != nil {
		return nil, err
	}
	e := New(m, inference.ModelID(root), opts)
	if e.info.Name == "" {
		e.info.Name = filepath.Base(dir)
	}
	if e.chat, err = chatTemplateOf(f); err != nil {
		return nil, err
	}
	if e.chat != nil {
		e.info.Template = e.chat.Source()
	}
	return e, nil
}

// openChecked builds the catalog of dir, refuses it unless its root is
// want (when set), and opens its GGUF file.
func openChecked(dir string, want *inference.ModelID) (*gguf.File, catalog.Hash, error) {
	path, err := ModelFile(dir)
	if err != nil {
		return nil, catalog.Hash{}, err
	}
	var root catalog.Hash
	if want != nil {
		root = catalog.Hash(*want)
		err = catalog.Verify(dir, root)
	} else {
		_, root, err = catalog.Build(dir)
	}
	if err != nil {
		return nil, catalog.Hash{}, fmt.Errorf("llm: %w", err)
	}
	f, err := gguf.Open(path)
	if err != nil {
		return nil, catalog.Hash{}, fmt.Errorf("llm: %w", err)
	}
	return f, root, nil
}

// New wraps a loaded model.
func New(m *Model, id inference.ModelID, opts Options) *Engine {
	if opts.Threads <= 0 {
		opts.Threads = runtime.NumCPU()
	}
	if opts.PrefillChunk <= 0 {
		opts.PrefillChunk = 64
	}
	ctxLen := min(m.Cfg.Context, 8192)
	if opts.MaxContext > 0 {
		ctxLen = min(m.Cfg.Context, opts.MaxContext)
	}
	opts.MaxContext = ctxLen
	if opts.CacheBytes == 0 {
		opts.CacheBytes = DefaultCacheBytes
	}
	return &Engine{
		cache: newPrefixCache(opts.CacheBytes),
		m:     m,
		opts:  opts,
		info: inference.ModelInfo{
			Name: m.Cfg.Name, ID: id, Arch: m.Cfg.Arch, VocabSize: m.Cfg.Vocab,
			ContextLength: ctxLen, Quant: m.Quant, Params: m.Params, Layers: m.Cfg.Layers,
			Experts: m.Cfg.Experts, ExpertsUsed: m.Cfg.ExpertsUsed,
		},
	}
}

// newSequence starts a sequence with the engine's threads and expert hooks.
func (e *Engine) newSequence(maxLen int) *Sequence {
	s := e.m.NewSequence(e.opts.Threads, maxLen, e.opts.Expert)
	s.layer = e.opts.ExpertLayer
	return s
}

// Model returns the loaded model.
func (e *Engine) Model() *Model { return e.m }

// Info describes the model.
func (e *Engine) Info() inference.ModelInfo { return e.info }

// Tokenize tokenizes text (special-token text becomes special tokens; no BOS).
func (e *Engine) Tokenize(text string) ([]int, error) { return e.m.Tok.Encode(text), nil }

// Detokenize returns the text of ids.
func (e *Engine) Detokenize(ids []int) string { return e.m.Tok.Decode(ids) }

// EncodePrompt returns the prompt tokens of req.
func (e *Engine) EncodePrompt(req inference.GenerateRequest) ([]int, error) {
	switch {
	case len(req.PromptTokens) > 0:
		for _, t := range req.PromptTokens {
			if t < 0 || t >= e.m.Cfg.Vocab {
				return nil, fmt.Errorf("llm: prompt token %d outside the vocabulary of %d", t, e.m.Cfg.Vocab)
			}
		}
		return append([]int(nil), req.PromptTokens...), nil
	}
	return encodePrompt(e.m.Tok, e.chat, req)
}

// prefill feeds tokens to seq in chunks and returns the logits of the last.
func (e *Engine) prefill(ctx context.Context, seq *Sequence, tokens []int) ([][]float32, error) {
	var out [][]float32
	for i := 0; i < len(tokens); i += e.opts.PrefillChunk {
		end := min(i+e.opts.PrefillChunk, len(tokens))
		from := end - i // no logits for a chunk that is not the last
		if end == len(tokens) {
			from--
		}
		logits, err := seq.Forward(ctx, tokens[i:end], from)
		if err != nil {
			return nil, err
		}
		out = logits
	}
	return out, nil
}

// Score prefills prompt+output once and returns, for each output token, the
// top-k log-probs of the distribution that predicted it.
func (e *Engine) Score(ctx context.Context, prompt, output []int, k int) ([][]inference.LogProb, error) {
	top, _, err := e.score(ctx, prompt, output, k, nil, nil)
	return top, err
}

// Resample is Score that also returns, for each output token, the token
// Sample draws from the recomputed logits under sp at that token's
// position (len(prompt) + its index), as Generate would have; the output
// token itself where SampleNear forgives it (a tie within rounding).
// A constrained answer (a response format) is resampled under the mask
// of the answer so far: see ResampleAnswer.
func (e *Engine) Resample(ctx context.Context, prompt, output []int, k int, sp inference.Sampling) ([][]inference.LogProb, []int, error) {
	return e.ResampleAnswer(ctx, prompt, 0, output, k, sp)
}

// masks, when set, holds the allowed tokens of each output position (nil:
// unconstrained).
func (e *Engine) score(ctx context.Context, prompt, output []int, k int, sp *inference.Sampling, masks [][]int) ([][]inference.LogProb, []int, error) {
	if len(prompt) == 0 {
		return nil, nil, errors.New("llm: score: empty prompt")
	}
	if k <= 0 || k > MaxLogProbs {
		return nil, nil, fmt.Errorf("llm: score: k = %d outside 1..%d", k, MaxLogProbs)
	}
	if len(output) == 0 {
		return nil, nil, nil
	}
	all := append(append([]int(nil), prompt...), output[:len(output)-1]...)
	if len(all)+1 > e.opts.MaxContext {
		return nil, nil, fmt.Errorf("llm: score: %d tokens exceed the context length %d", len(all)+1, e.opts.MaxContext)
	}
	seq := e.newSequence(len(all))
	out := make([][]inference.LogProb, 0, len(output))
	var drawn []int
	for i := 0; i < len(all); i += e.opts.PrefillChunk {
		end := min(i+e.opts.PrefillChunk, len(all))
		from := max(0, len(prompt)-1-i)
		logits, err := seq.Forward(ctx, all[i:end], from)
		if err != nil {
			return nil, nil, fmt.Errorf("llm: score: %w", err)
		}
		// Each position's top-k (and draw) is independent of the others:
		// computed on the sequence's threads, the result is the same.
		top := make([][]inference.LogProb, len(logits))
		draw := make([]int, len(logits))
		first := len(out) // the output index the first of these logits predicts
		parallelFor(e.opts.Threads, len(logits), 1, func(_, lo, hi int) {
			for j := lo; j < hi; j++ {
				top[j] = TopLogProbs(logits[j], k)
				if sp != nil {
					id := output[first+j]
					d, near := 0, false
					if masks != nil {
						d, near = sampleMasked(logits[j], masks[first+j], *sp, len(prompt)+first+j, id)
					} else {
						d, near = sampleNear(logits[j], *sp, len(prompt)+first+j, id)
					}
					if d == id || near {
						draw[j] = id
					} else {
						draw[j] = d
					}
				}
			}
		})
		out = append(out, top...)
		drawn = append(drawn, draw...)
	}
	if sp == nil {
		drawn = nil
	}
	return out, drawn, nil
}
