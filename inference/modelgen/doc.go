// Package modelgen writes small random-weight models with a real
// tokenizer, for devnet and tests (`tenzrod model gen`): llama (optionally
// with Llama 3.1 rope factors or linear rope scaling), qwen2, qwen3,
// qwen3moe, gemma2, gemma3 and phi3, each with the metadata keys and
// tensors llama.cpp reads for its architecture (arch.go). Nothing is
// downloaded: the tokenizer's merges are learned from a short English text
// embedded in the package, and the weights come from a seeded PRNG, so the
// same options always produce the same file, byte for byte.
//
// The tokenizer is byte-level BPE ("gpt2": all 256 bytes plus learned
// merges) or SentencePiece BPE ("llama": byte-fallback tokens, the corpus's
// characters and learned pieces scored by merge order). Both carry ChatML
// control tokens and a ChatML chat template, so chat requests render the way
// they do for common instruction-tuned models. The vocabulary is padded with
// unused reserved tokens up to GenOptions.Vocab when the corpus yields fewer
// merges.
package modelgen
