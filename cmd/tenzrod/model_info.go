package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/llm"
)

// modelInfo is what `model inspect` reports. It is read from the GGUF
// metadata directly rather than through the engine, so a file the engine
// refuses can still be inspected (and the refusal is one of its fields).
type modelInfo struct {
	File         string         `json:"file"`
	Size         int64          `json:"size"`
	ModelID      string         `json:"model_id,omitempty"` // only for a model directory
	Name         string         `json:"name,omitempty"`
	Architecture string         `json:"architecture"`
	Dim          uint64         `json:"embedding_length"`
	Layers       uint64         `json:"block_count"`
	Heads        uint64         `json:"head_count"`
	KVHeads      uint64         `json:"head_count_kv"`
	HeadDim      uint64         `json:"head_dim"`
	FFN          uint64         `json:"feed_forward_length"`
	Context      uint64         `json:"context_length"`
	Experts      uint64         `json:"expert_count,omitempty"`
	ExpertsUsed  uint64         `json:"expert_used_count,omitempty"`
	Params       int64          `json:"params"`
	Quant        map[string]int `json:"quantization"` // tensors per type
	Tokenizer    tokenizerInfo  `json:"tokenizer"`
	Template     templateInfo   `json:"chat_template"`
	// Engine is "ok" when the embedded engine's checks pass, else why not.
	Engine string `json:"engine"`
}

type tokenizerInfo struct {
	Model  string    `json:"model"`
	Pre    string    `json:"pre,omitempty"`
	Vocab  int       `json:"vocab_size"`
	BOS    *tokenRef `json:"bos,omitempty"`
	EOS    *tokenRef `json:"eos,omitempty"`
	AddBOS *bool     `json:"add_bos,omitempty"`
	AddEOS *bool     `json:"add_eos,omitempty"`
}

type tokenRef struct {
	ID   uint64 `json:"id"`
	Text string `json:"text"`
}

type templateInfo struct {
	Present   bool   `json:"present"`
	Bytes     int    `json:"bytes,omitempty"`
	FirstLine string `json:"first_line,omitempty"`
}

// describe reads f's metadata into a modelInfo; errors are the file's
// malformed values, not missing ones.
func describe(f *gguf.File) (*modelInfo, error) {
	arch, _, err := f.String("general.architecture")
	if err != nil {
		return nil, err
	}
	in := &modelInfo{File: f.Path, Size: f.Size, Architecture: arch, Quant: map[string]int{}}
	in.Name, _, _ = f.String("general.name")
	for _, d := range []struct {
		key string
		v   *uint64
	}{
		{"embedding_length", &in.Dim}, {"block_count", &in.Layers}, {"attention.head_count", &in.Heads},
		{"attention.head_count_kv", &in.KVHeads}, {"attention.key_length", &in.HeadDim},
		{"feed_forward_length", &in.FFN}, {"context_length", &in.Context},
		{"expert_count", &in.Experts}, {"expert_used_count", &in.ExpertsUsed},
	} {
		// A per-layer array (some files give head counts per layer) is
		// not a scalar: left 0 rather than failing the inspection.
		*d.v, _, _ = f.Uint(arch + "." + d.key)
	}
	if in.HeadDim == 0 && in.Heads != 0 {
		in.HeadDim = in.Dim / in.Heads
	}
	for _, t := range f.Tensors {
		in.Quant[t.Type.String()]++
		in.Params += t.Elems
	}
	if err := describeTokenizer(f, &in.Tokenizer); err != nil {
		return nil, err
	}
	if tmpl, ok, err := f.String("tokenizer.chat_template"); err != nil {
		return nil, err
	} else if ok {
		first, _, _ := strings.Cut(tmpl, "\n")
		in.Template = templateInfo{Present: true, Bytes: len(tmpl), FirstLine: first}
	}
	in.Engine = "ok"
	if err := engineCheck(f, false); err != nil {
		in.Engine = err.Error()
	}
	return in, nil
}

func describeTokenizer(f *gguf.File, t *tokenizerInfo) error {
	t.Model, _, _ = f.String("tokenizer.ggml.model")
	t.Pre, _, _ = f.String("tokenizer.ggml.pre")
	toks, _, err := f.Strings("tokenizer.ggml.tokens")
	if err != nil {
		return err
	}
	t.Vocab = len(toks)
	ref := func(key string) *tokenRef {
		id, ok, err := f.Uint(key)
		if !ok || err != nil {
			return nil
		}
		r := &tokenRef{ID: id}
		if id < uint64(len(toks)) {
			r.Text = toks[id]
		}
		return r
	}
	t.BOS, t.EOS = ref("tokenizer.ggml.bos_token_id"), ref("tokenizer.ggml.eos_token_id")
	flag := func(key string) *bool {
		b, ok, err := f.Bool(key)
		if !ok || err != nil {
			return nil
		}
		return &b
	}
	t.AddBOS, t.AddEOS = flag("tokenizer.ggml.add_bos_token"), flag("tokenizer.ggml.add_eos_token")
	return nil
}

// engineCheck says whether the embedded engine can serve f: its
// architecture, every tensor's type and the tokenizer first, each with a
// plain reason, then (full) the engine's own loader, which checks every
// tensor's name and shape but reads all the weights.
func engineCheck(f *gguf.File, full bool) error {
	arch, _, err := f.String("general.architecture")
	if err != nil {
		return err
	}
	if !slices.Contains(llm.Architectures(), arch) {
		return fmt.Errorf("architecture %q is not one the embedded engine runs (%s)", arch, strings.Join(llm.Architectures(), ", "))
	}
	var bad []string
	for _, t := range f.Tensors {
		if !t.Type.Supported() {
			bad = append(bad, fmt.Sprintf("%s is %v", t.Name, t.Type))
		}
	}
	if len(bad) > 0 {
		more := ""
		if len(bad) > 3 {
			more = fmt.Sprintf(" and %d more", len(bad)-3)
		}
		return fmt.Errorf("tensor type not supported by the embedded engine (it reads F32, F16, BF16, Q8_0, Q4_K, Q6_K): %s%s",
			strings.Join(bad[:min(3, len(bad))], ", "), more)
	}
	if _, err := llm.NewTokenizer(f); err != nil {
		return fmt.Errorf("tokenizer: %w", err)
	}
	if full {
		if _, err := llm.LoadModel(f); err != nil {
			return err
		}
	}
	return nil
}
