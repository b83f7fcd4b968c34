// Package node assembles one tenzrod node from its configuration: the
// hardware identity and session certificate, the libp2p host and DHT, the
// gossip service, the provider table, the role's own parts and the HTTP
// API (health, Prometheus metrics, JSON-RPC 2.0, the OpenAI routes). The
// parts own their rules and their JSON-RPC methods (rpc.Contributor);
// node only builds them, registers them and runs them.
//
// Components are wired by hand with plain constructors and share one small
// lifecycle, Start(ctx) / Stop(ctx), started in order and stopped in
// reverse. No package imports node.
package node
