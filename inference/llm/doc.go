// Package llm is tenzrod's embedded inference engine: a pure-Go
// llama-family decoder on GGUF weights.
//
// Model: token embedding, then per layer RMSNorm → grouped-query attention
// with rotary position embeddings (GGML "normal" mode: adjacent pairs) and a
// KV cache → residual → RMSNorm → SwiGLU feed-forward (or a mixture of
// experts: a router picks the top ExpertsUsed of Experts per token, weights
// renormalised over the chosen ones) → residual; final RMSNorm and the output
// projection (tied to the embedding when the file has no output.weight).
// Weights may be F32, F16 or Q8_0; F16 and Q8_0 rows stay encoded in memory
// and are decoded row by row (Q8_0 block by block) as a matrix product needs
// them.
//
// Parallelism and determinism: matrix products are split over output rows
// and attention over (token, head) pairs, on Options.Threads goroutines.
// Every output element is one dot product computed in a fixed order by one
// goroutine, the kernels round every product explicitly (no fused
// multiply-add), and exp, log, sin and cos are portable ports
// (detmath.go). Results are therefore bit-identical across thread counts,
// prefill batch sizes and CPU architectures, which the continuation and
// commitment checks rely on. ReferenceForward is an independent float64
// transcription of the same network, used to test the kernels.
//
// Tokenizers come from the GGUF metadata: "llama" (SentencePiece BPE by
// piece scores with byte fallback, "▁" for spaces, optional space prefix)
// and "gpt2" (byte-level BPE by merge rank after GPT-2's pre-tokenizer
// pattern). Other pre-tokenizers (tokenizer.ggml.pre, e.g. llama-bpe or
// qwen2) are approximated by GPT-2's pattern. Control and user-defined tokens
// are matched in prompt text; in chat messages only the template's own
// markers are, so message content cannot forge turns. Chat templates are not
// executed as Jinja: the family (ChatML, Llama 3, Llama 2, Gemma) is
// recognised from tokenizer.chat_template and rendered natively; generated
// models carry ChatML.
//
// Sampling: temperature 0 is greedy; otherwise top_k, then top_p over the
// candidates sorted by logit, then an inverse-CDF draw with a uniform number
// derived only from (seed, absolute position), so a generation resumed from
// its emitted tokens (GenerateRequest.Continuation) continues exactly.
//
// Engine implements inference.Engine; Open verifies a model directory
// against its catalog Merkle root (inference/catalog) before loading it.
package llm
