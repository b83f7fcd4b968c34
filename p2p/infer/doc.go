// Package infer implements /tenzro/infer/1.0.0, the stream protocol that
// forwards one inference request from a buyer's gateway to a provider.
//
// # Exchange
//
// The gateway opens a stream and writes one Request frame. The provider
// answers with zero or more Token frames followed by exactly one Final frame
// (usage, receipt, commitment, and for a MoE model whose experts ran at
// holders each holder's part: ExpertUse) or one Error frame (HTTP-like status, code,
// message, retry-after), then closes the stream. Every frame is a
// deterministic CBOR value (receipts/cborx, integer map keys) in a uvarint
// length-prefixed frame (p2p.WriteFrame / p2p.ReadFrame). Output text always
// arrives in Token frames, also when Request.Stream is false; the buyer's
// access token is never part of a request.
//
// Every request names its network (Request.Network, from
// ClientConfig.Network); the server checks it against ServerConfig.Network
// before anything else (p2p.CheckNetwork) and answers another network's
// request with a 421 terms.CodeWrongNetwork, so hosts of two networks that dial
// each other never exchange an inference.
//
// The gateway keeps its write side open while it wants the answer.
// Resetting the stream aborts the request: the provider stops generating
// and writes nothing more. Half-closing it (CloseWrite) stops the request
// but keeps its bill: the handler's context ends with cause
// ErrStoppedByClient (Stopped reports it) and the final frame the handler
// returns for what it generated is still sent. Call does this when its
// token callback returns an error wrapping ErrStop: it delivers no more
// tokens, waits up to ClientConfig.StopGrace for the final frame and returns
// it with an error wrapping ErrStop. Call resets the stream on every other
// failure and when its context ends; a stream that ends without a Final or
// Error frame is a cut stream (ErrNoFinal), never a complete answer.
//
// A gateway may open the stream ahead of the call (Warm, through
// ClientConfig.Warm): after an answered call it opens and negotiates the
// provider's next stream in the background, so the next call writes its
// request at once and the provider's handler is already waiting for it. A
// warm stream idles at most WarmIdle, well inside the server's
// RequestTimeout; one the provider dropped (a restart) fails before any
// answer, and the call then goes again on a new stream. Unregistering
// resets the streams still waiting for their request.
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
// frame. Streams are attached to the resource manager's ServiceName
// service, whose per-peer limits p2p.AddServiceLimits sets, and the server
// reserves memory for each request before reading it.
//
// # Admission
//
// The server runs at most ServerConfig.MaxConcurrent handlers. A request
// takes a free slot or waits in a fair queue (MaxQueue, QueueTimeout): a
// freed slot goes to the waiting peer holding the fewest slots, a peer holds
// at most MaxPerPeer requests, and when the queue is full a newcomer
// displaces the newest waiter of the peer holding the most. Callers that
// ServerConfig.Known does not know share one global budget
// (UnknownConcurrency at once, UnknownRate per minute), however many peer
// IDs they mint. A provider at capacity answers 429 terms.CodeBusy, an exhausted
// unknown budget 429 terms.CodeRateLimited, both with RetryAfterMs, so a gateway
// fails over without counting a failure. Frames are written in chunks, each
// under ServerConfig.WriteStallTimeout: a client that stops reading fails
// the handler's send within that time, cancels its context (cause
// ErrWriteStalled) and frees its slot; the stream is then reset. A stream
// lasts at most ServerConfig.MaxDuration (then 504).
//
// The client caps each received frame (ClientConfig.MaxFrameSize), limits
// the wait for the first frame (FirstTokenTimeout) and the gap between frames
// (StallTimeout), and counts the bytes that crossed the stream (WireStats),
// which the gateway uses to cap billing.
package infer
