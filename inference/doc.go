// Package inference defines how tenzrod runs models: the Engine interface
// every engine implements, and the request, token and result types that cross
// it. Engines live in sub-packages:
//
//   - inference/llm: the embedded pure-Go decoder (llama, qwen2, qwen3,
//     qwen3moe, gemma2, gemma3, phi3; dense and mixture-of-experts) on GGUF
//     weights in F32, F16, BF16, Q8_0, Q4_K or Q6_K.
//   - inference/gguf: GGUF writer, and loading through gguf-parser-go.
//   - inference/modelgen: random-weight models with a real tokenizer for
//     devnet and tests (`tenzrod model gen`).
//   - inference/catalog: the model ID, an RFC 6962 Merkle root over every
//     file and 1 MiB chunk of a model directory.
//   - inference/commit: TOPLOC-style commitments to the top-k log-probs of
//     each decode step, and their verification by one prefill (Score).
//
// # Engine contract
//
// Generate renders the request (chat messages through the model's chat
// template, or a raw prompt), prefills it, and decodes until an end-of-turn
// token, a stop sequence or MaxTokens. Tokens are streamed through emit in
// order; the concatenation of every Token.Text equals Result.Text (text is
// held back while it could still be the start of a stop sequence or an
// incomplete UTF-8 character, so a Token may carry empty Text). An
// end-of-turn token is emitted too (it is part of the output the model
// produced and of what commitments cover), with no text of its own.
//
// Determinism: the same model, prompt tokens and sampling parameters give the
// same tokens on any engine instance and at any thread count. The sampler's
// randomness is keyed by (Seed, absolute position of the sampled token), so a
// generation cut after n tokens and resumed with those tokens as
// Continuation produces exactly the tokens the uncut run produced.
//
// Log-probs (Token.TopK, Score) are the model's raw distribution: the log
// softmax of the logits before temperature, top-k or top-p, sorted by
// descending log-prob with ties broken by lower token ID. Score over
// prompt+output returns, bit for bit, the TopK that Generate reported for
// those output tokens.
package inference
