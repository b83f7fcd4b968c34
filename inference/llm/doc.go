// Package llm is tenzrod's embedded inference engine: a decoder-only
// transformer on GGUF weights, in Go with assembly kernels.
//
// Model: token embedding, then per layer RMSNorm → grouped-query attention
// with rotary position embeddings (GGML "normal" mode: adjacent pairs) and a
// KV cache → residual → RMSNorm → SwiGLU feed-forward (or a mixture of
// experts: a router picks the top ExpertsUsed of Experts per token, weights
// renormalised over the chosen ones) → residual; final RMSNorm and the output
// projection (tied to the embedding when the file has no output.weight).
// Weights may be F32, F16 (kept as halves), Q8_0 (int8 quants, block
// scales decoded to float32 at load), Q4_K (likewise, plus sub-block mins:
// its products are Q8_0 products less a mins term, q4k.go), or BF16 and
// Q6_K (decoded to float32 at load: exact, but four bytes a weight).
//
// Architectures (arch.go) vary that network as llama.cpp does for the same
// general.architecture, reading the same metadata keys and tensor names:
// llama (optionally with linear rope scaling or Llama 3.1's per-frequency
// rope_freqs.weight); qwen2 (Q/K/V biases, NEOX rope: pairs (i, i+d/2));
// qwen3 (an RMSNorm over each head of Q and K, heads of key_length rather
// than dim/heads); qwen3moe (qwen3 with experts of
// expert_feed_forward_length); gemma2 (embeddings times sqrt(dim), GeGLU, norms after
// attention and feed-forward too, attention and final logits soft-capped
// as c·tanh(x/c), even layers attending to a sliding window); gemma3
// (gemma2's layout with head norms, no soft-caps, five sliding layers in
// six whose rope has its own base); phi3 (fused attn_qkv and gate+up
// ffn_up, cut into the usual matrices at load; its sliding window is
// ignored, as llama.cpp ignores it, and LongRoPE factor tensors are
// refused). Gemma's norm weights are used as
// stored: llama.cpp's converter has already added the 1 of (1+w).
//
// Kernels (kernels.go): the inner loops come in kernel sets chosen at start
// by CPU feature detection: AVX2 (and AVX-512 prefill tiles) on amd64, NEON
// on arm64, pure Go elsewhere or with TENZRO_KERNELS=go. The pure-Go
// kernels define the results; the assembly ones perform the same IEEE
// operations in the same order (an 8-lane accumulator per dot product,
// multiplies and adds never fused, a fixed reduction tree), so every kernel
// set gives the same bits. Prefill and scoring use register-blocked tiles
// (rows x tokens) in which each output is still one such dot product.
//
// Parallelism and determinism: matrix products are split over groups of
// output rows and attention over (token, head) pairs, on Options.Threads
// workers from a persistent pool (small products run on the caller).
// Every output element is one dot product computed in a fixed order by one
// worker, and exp, log, sin and cos are portable ports (detmath.go).
// Results are therefore bit-identical across thread counts, prefill batch
// sizes, kernel sets and CPU architectures, which the continuation and
// commitment checks rely on. ReferenceForward is an independent float64
// transcription of the same network, used to test the kernels.
//
// Tokenizers come from the GGUF metadata, as llama.cpp reads it: "llama"
// (SentencePiece BPE by piece scores with byte fallback, "▁" for spaces,
// optional space prefix) and "gpt2" (byte-level BPE by merge rank after
// the pre-tokenizer rule tokenizer.ggml.pre selects: gpt-2, llama-bpe,
// qwen2, smollm or default, each the exact sequence of regexes llama.cpp
// applies, as hand-written matchers checked against those regexes in the
// tests; unknown names get the default rule, as in llama.cpp). Text is
// decoded as llama.cpp decodes it (each invalid UTF-8 byte is U+FFFD);
// add_bos/add_eos follow the file, with llama.cpp's defaults. Control and
// user-defined tokens are split out longest first, as llama.cpp does.
//
// Chat templates (tmpl_*.go): tokenizer.chat_template is executed by a
// Jinja engine (github.com/ardanlabs/jinja) with messages, tools,
// add_generation_prompt, bos_token/eos_token and a fixed strftime_now date
// (a validator must re-encode the same prompt later); a file without a
// template is rendered as ChatML. Message text cannot forge turns: control
// token text in messages, tools and tool-call arguments is swapped for
// private-use code points while the template renders, so only the
// template's own markers become control tokens, and the text is put back
// before it is tokenized as text.
//
// Prefix cache (prefix.go, prefill.go): a generation with a CacheKey (a
// session ID) leaves its sequence's KV state in a per-engine cache bounded
// by Options.CacheBytes (least recently used out); the next keyed
// generation reuses the longest token prefix it shares with a cached
// sequence (its own key's is moved, another's copied) and computes only
// the rest, always at least the last prompt token. Prefill warms a key
// from a token list (a successor's sealed session state). Because every
// position is computed the same way whatever the batch, a cached prefix
// gives the bits a cold run gives; Result.CachedTokens says how many
// prompt tokens were reused. Calls without a key neither use nor fill it.
//
// Sampling: temperature 0 is greedy; otherwise top_k, then top_p over the
// candidates sorted by logit, then an inverse-CDF draw with a uniform number
// derived only from (seed, absolute position), so a generation resumed from
// its emitted tokens (GenerateRequest.Continuation) continues exactly.
//
// Engine implements inference.Engine; Open verifies a model directory
// against its catalog Merkle root (inference/catalog) before loading it.
package llm
