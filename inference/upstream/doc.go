// Package upstream lets a provider front an OpenAI-compatible engine it
// runs itself (llama.cpp server, vLLM, Ollama) by base URL.
//
// Requests are always streamed from the upstream so tokens can be relayed
// as they arrive. When the buyer asked for log-probs, or for a verification
// level that needs logit commitments, the upstream is asked for `logprobs`
// and `top_logprobs`; an upstream that does not return them gets the
// request refused (ErrNoLogProbs) instead of answered unverifiably. Errors
// the upstream returns keep their HTTP status, code, message and
// Retry-After, so the router can tell a context-length refusal (not
// retried) from an overload (retried elsewhere).
package upstream
