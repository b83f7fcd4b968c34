// Package openai serves the OpenAI-compatible routes every node exposes:
// POST /v1/chat/completions (stream and non-stream), POST /v1/completions
// and GET /v1/models, in the exact shapes OpenAI clients expect, including
// server-sent events with `data: [DONE]` and stream_options.include_usage.
//
// The package only translates HTTP to a Backend and back. A provider's
// backend runs its local engine; a gateway's backend routes the request to
// providers. Errors use OpenAI's error object with a matching HTTP status;
// an error after a stream has started is sent as an explicit error event and
// the stream ends without [DONE], so a truncated answer is never reported as
// complete.
//
// Intake: with WithAuth the completion routes check the request's headers
// (the bearer token) before reading a byte of the body, so a client without
// a token costs its headers only. The Bearer scheme is matched without
// regard to case. A body declared over the cap is a 413 before it is read.
//
// Routing options (ParseOptions) come from the body's tenzro object or
// X-Tenzro-* headers; tenzro.session and X-Tenzro-Session make a request
// one turn of a session (SessionOptions). A backend's Result.Tenzro is
// the response's `tenzro` object, sent in a stream with its final chunks
// (finish reason, and usage when asked): a gateway's provider, receipt,
// payment and, for a MoE model whose experts ran at holders, each
// holder's part (`experts`); a provider's own route only the latter.
package openai
