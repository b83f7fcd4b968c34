// Package provider is the provider role of a tenzrod node: the model set
// it serves (embedded engine or an upstream OpenAI-compatible engine), the
// /tenzro/infer/1.0.0 server that runs requests and signs their receipts
// (infer_server.go), its own OpenAI routes, the announcements and
// heartbeats it gossips (announce.go), and its on-chain registration
// (register.go). It gets its dependencies as a Deps struct from node/,
// never the node itself.
package provider
