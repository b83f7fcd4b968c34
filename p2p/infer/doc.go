// Package infer implements /tenzro/infer/1.0.0, the stream protocol that
// forwards one inference request from a buyer's gateway to a provider.
//
// # Exchange
//
// The gateway opens a stream and writes one Request frame. The provider
// answers with zero or more Token frames followed by exactly one Final frame
// (usage, receipt, commitment) or one Error frame (HTTP-like status, code,
// message, retry-after), then closes the stream. Every frame is a
// deterministic CBOR value (receipts/cborx, integer map keys) in a uvarint
// length-prefixed frame (p2p.WriteFrame / p2p.ReadFrame). Output text always
// arrives in Token frames, also when Request.Stream is false; the buyer's
// access token is never part of a request.
//
// The gateway keeps its write side open while it wants the answer: closing
// or resetting the stream cancels the request, and the provider stops
// generating. Call resets the stream on every failure and when its context
// ends; a stream that ends without a Final or Error frame is a cut stream
// (ErrNoFinal), never a complete answer.
//
// # Limits
//
// Request.Validate bounds a request: a 16-byte nonce, a 32-byte catalog
// model ID, at most 256 messages, at most 1 MiB of text in all, a known
// verification level (none, receipt, optimistic, tee) and sane sampling
// parameters. The server reads the request under a deadline
// (ServerConfig.RequestTimeout) and a size cap (ServerConfig.MaxRequestSize),
// decodes it strictly (unknown fields, duplicate keys, trailing bytes are
// refused), and answers a malformed or invalid request with a 400 Error
// frame. It serves at most ServerConfig.MaxConcurrent streams and answers
// more with a retryable 503; a stream lasts at most ServerConfig.MaxDuration
// (then 504). Streams are attached to the resource manager's ServiceName
// service, and the server reserves memory for each request before reading
// it (503 when the reservation is refused).
//
// The client caps each received frame (ClientConfig.MaxFrameSize), limits
// the wait for the first frame (FirstTokenTimeout) and the gap between frames
// (StallTimeout), and counts the bytes that crossed the stream (WireStats),
// which the gateway uses to cap billing.
package infer
