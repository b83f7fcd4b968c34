package modelgen_test

import (
	"fmt"
	"maps"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	parser "github.com/gpustack/gguf-parser-go"

	"github.com/tenzrod/tenzrod/inference/gguf"
	"github.com/tenzrod/tenzrod/inference/modelgen"
)

// specKeys are the metadata keys of the GGUF specification (and of
// llama.cpp's architecture and tokenizer loaders) that generated files may
// carry, each with a check of its value; ARCH stands for the file's
// general.architecture. A file with any other key, or a value llama.cpp
// does not know, fails.
var specKeys = map[string]check{
	"general.architecture": func(f *gguf.File, key string, o modelgen.GenOptions) string {
		return wantString(archOf(o))(f, key, o)
	},
	"general.name":        anyString,
	"general.description": anyString,
	"general.alignment":   wantUint(gguf.DefaultAlignment),
	"general.file_type": func(f *gguf.File, key string, o modelgen.GenOptions) string {
		// llama_ftype: ALL_F32 0, MOSTLY_F16 1, MOSTLY_Q8_0 7, MOSTLY_Q4_K_S 14,
		// MOSTLY_Q6_K 18, MOSTLY_BF16 32.
		want := map[gguf.Type]uint64{gguf.TypeF32: 0, gguf.TypeF16: 1, gguf.TypeQ8_0: 7, gguf.TypeQ4_K: 14, gguf.TypeQ6_K: 18, gguf.TypeBF16: 32}[o.Quant]
		return wantUint(want)(f, key, o)
	},
	"ARCH.context_length":                   anyUint,
	"ARCH.embedding_length":                 anyUint,
	"ARCH.block_count":                      anyUint,
	"ARCH.feed_forward_length":              anyUint,
	"ARCH.attention.head_count":             anyUint,
	"ARCH.attention.head_count_kv":          anyUint,
	"ARCH.attention.key_length":             anyUint,
	"ARCH.attention.value_length":           anyUint,
	"ARCH.attention.sliding_window":         anyUint,
	"ARCH.attn_logit_softcapping":           anyFloat,
	"ARCH.final_logit_softcapping":          anyFloat,
	"ARCH.rope.dimension_count":             anyUint,
	"ARCH.rope.freq_base":                   anyFloat,
	"ARCH.rope.scaling.type":                wantString("linear"),
	"ARCH.rope.scaling.factor":              anyFloat,
	"ARCH.attention.layer_norm_rms_epsilon": anyFloat,
	"ARCH.vocab_size":                       anyUint,
	"ARCH.expert_count":                     anyUint,
	"ARCH.expert_used_count":                anyUint,
	"ARCH.expert_feed_forward_length":       anyUint,
	"tokenizer.ggml.model": func(f *gguf.File, key string, o modelgen.GenOptions) string {
		return wantString(map[string]string{"": "gpt2", "gpt2": "gpt2", "llama": "llama"}[o.Tokenizer])(f, key, o)
	},
	"tokenizer.ggml.pre":    wantString("gpt-2"),
	"tokenizer.ggml.tokens": anyStrings,
	"tokenizer.ggml.merges": anyStrings,
	"tokenizer.ggml.scores": anyFloats,
	"tokenizer.ggml.token_type": func(f *gguf.File, key string, _ modelgen.GenOptions) string {
		types, ok, err := f.Ints(key)
		if err != nil || !ok {
			return "not an integer array"
		}
		for i, ty := range types {
			// llama_token_type: normal 1 .. byte 6.
			if ty < 1 || ty > 6 {
				return fmt.Sprintf("token %d has type %d", i, ty)
			}
		}
		return ""
	},
	"tokenizer.ggml.bos_token_id":     anyUint,
	"tokenizer.ggml.eos_token_id":     anyUint,
	"tokenizer.ggml.unknown_token_id": anyUint,
	"tokenizer.ggml.add_bos_token":    anyBool,
	"tokenizer.ggml.add_space_prefix": anyBool,
	"tokenizer.chat_template":         anyString,
}

// tensorName matches the tensor names llama.cpp gives the generated
// architectures in GGUF.
var tensorName = regexp.MustCompile(`^((token_embd|output_norm|output|rope_freqs|blk\.\d+\.(attn_norm|attn_q|attn_k|attn_v|attn_qkv|attn_output|attn_q_norm|attn_k_norm|post_attention_norm|post_ffw_norm|ffn_norm|ffn_gate|ffn_up|ffn_down|ffn_gate_inp|ffn_gate_exps|ffn_up_exps|ffn_down_exps))\.weight|blk\.\d+\.attn_[qkv]\.bias)$`)

func archOf(o modelgen.GenOptions) string {
	if o.Arch == "" {
		return "llama"
	}
	return o.Arch
}

// metadataKeys lists the keys of the file at path as the GGUF parser the
// reader is built on sees them: the reader itself looks keys up by name only.
func metadataKeys(t *testing.T, path string) map[string]bool {
	t.Helper()
	gf, err := parser.ParseGGUFFile(path)
	if err != nil {
		t.Fatal(err)
	}
	keys := make(map[string]bool, len(gf.Header.MetadataKV))
	for _, kv := range gf.Header.MetadataKV {
		keys[kv.Key] = true
	}
	return keys
}

func TestGeneratedFilesCarrySpecNames(t *testing.T) {
	small := func(tok string, q gguf.Type, moe bool) modelgen.GenOptions {
		o := modelgen.DevnetOptions()
		o.Layers, o.Dim, o.Heads, o.KVHeads, o.FFN, o.Vocab, o.Context = 1, 64, 4, 2, 64, 400, 64
		o.Tokenizer, o.Quant, o.MoE = tok, q, moe
		return o
	}
	for _, o := range []modelgen.GenOptions{
		modelgen.DevnetOptions(),
		small("gpt2", gguf.TypeF32, false),
		small("llama", gguf.TypeF16, false),
		small("gpt2", gguf.TypeQ8_0, true),
		withArch(small("llama", gguf.TypeF32, false), "llama", "llama3"),
		withArch(small("gpt2", gguf.TypeF32, false), "qwen2", ""),
		withArch(small("gpt2", gguf.TypeF16, false), "qwen3", ""),
		withArch(small("llama", gguf.TypeF32, false), "gemma2", ""),
		withArch(small("llama", gguf.TypeQ8_0, false), "gemma3", "linear"),
		withArch(small("gpt2", gguf.TypeF32, false), "phi3", ""),
		withArch(small("gpt2", gguf.TypeF32, true), "qwen3moe", ""),
	} {
		name := archOf(o) + "-" + o.RopeScaling + "-" + o.Tokenizer + "-" + o.Quant.String()
		t.Run(name, func(t *testing.T) {
			dir, _ := gen(t, o)
			path := filepath.Join(dir, "model.gguf")
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			keys := metadataKeys(t, path)
			for _, key := range slices.Sorted(maps.Keys(keys)) {
				check, ok := specKeys[strings.Replace(key, archOf(o)+".", "ARCH.", 1)]
				if !ok {
					t.Errorf("key %q is not a GGUF spec name", key)
					continue
				}
				if msg := check(f, key, o); msg != "" {
					t.Errorf("%s: %s", key, msg)
				}
			}
			for _, key := range []string{"general.architecture", "general.file_type", "tokenizer.ggml.model", "tokenizer.ggml.tokens"} {
				if !keys[key] {
					t.Errorf("required key %q missing", key)
				}
			}
			if (o.Tokenizer != "llama") != keys["tokenizer.ggml.pre"] {
				t.Errorf("tokenizer %q: tokenizer.ggml.pre present = %v", o.Tokenizer, keys["tokenizer.ggml.pre"])
			}
			for _, ti := range f.Tensors {
				if !tensorName.MatchString(ti.Name) {
					t.Errorf("tensor %q is not a llama tensor name", ti.Name)
				}
			}
		})
	}
}

// withArch makes o a model of arch with the given rope scaling and a head
// size other than dim/heads.
func withArch(o modelgen.GenOptions, arch, rope string) modelgen.GenOptions {
	o.Arch, o.RopeScaling, o.HeadDim = arch, rope, 24
	if rope == "linear" {
		o.RopeFactor = 8
	}
	return o
}

// check returns what is wrong with the value of key, or "".
type check func(f *gguf.File, key string, o modelgen.GenOptions) string

func wantString(want string) check { return wantValue((*gguf.File).String, "a string", "%q", want) }

func wantUint(want uint64) check {
	return wantValue((*gguf.File).Uint, "an unsigned integer", "%d", want)
}

// wantValue is a check that key holds want, read by get (what names the
// type, verb formats a value).
func wantValue[T comparable](get func(*gguf.File, string) (T, bool, error), what, verb string, want T) check {
	return func(f *gguf.File, key string, _ modelgen.GenOptions) string {
		got, ok, err := get(f, key)
		if err != nil || !ok {
			return fmt.Sprintf("not %s: %v", what, err)
		}
		if got != want {
			return fmt.Sprintf("value "+verb+", want "+verb, got, want)
		}
		return ""
	}
}

var (
	anyString = present((*gguf.File).String, "a string")
	anyUint   = present((*gguf.File).Uint, "an unsigned integer")
	anyFloat  = present((*gguf.File).Float, "a float")
	anyBool   = present((*gguf.File).Bool, "a bool")
)

// present is a check that key holds a value get reads (what names its
// type).
func present[T any](get func(*gguf.File, string) (T, bool, error), what string) check {
	return func(f *gguf.File, key string, _ modelgen.GenOptions) string {
		if _, ok, err := get(f, key); err != nil || !ok {
			return fmt.Sprintf("not %s: %v", what, err)
		}
		return ""
	}
}

func anyStrings(f *gguf.File, key string, _ modelgen.GenOptions) string {
	if v, ok, err := f.Strings(key); err != nil || !ok || len(v) == 0 {
		return fmt.Sprintf("not a non-empty string array: %v", err)
	}
	return ""
}

func anyFloats(f *gguf.File, key string, _ modelgen.GenOptions) string {
	if v, ok, err := f.Float32s(key); err != nil || !ok || len(v) == 0 {
		return fmt.Sprintf("not a non-empty float32 array: %v", err)
	}
	return ""
}
