// Package rpc is a small JSON-RPC 2.0 server over HTTP POST.
//
// It exists because the node's methods take named parameter objects
// (`{"model": ..., "units": ...}`), which the maintained Go JSON-RPC servers
// served here either do not accept (go-ethereum's rpc takes positional
// arrays only) or tie to a single connection stream (jsonrpc2). Requests,
// notifications and batches follow the specification; errors use its
// standard codes with a message that says what was wrong.
//
// A body is at most MaxBody bytes (a declared larger one is refused
// unread). A batch holds at most DefaultMaxBatch calls, run in order under
// one DefaultBatchTimeout deadline for all of them: a batch is one HTTP
// request and may not take a long call's time once per call.
package rpc
