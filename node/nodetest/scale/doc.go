// Package scale is the scale harness of issue #20: one simulated market of
// N providers, G gateways and V validators on go-libp2p's mocknet, and the
// figures of what each node pays to keep up with it.
//
// Providers are cheap on purpose: each is a mocknet host running a
// GossipSub router that publishes real signed announcements and heartbeats
// (the session certificates and signatures the topic validators require)
// but neither subscribes to nor validates those topics, so 1,000 of them
// fit on two cores. Their identities are generated once per process and
// reused by every size. Gateways and validators are real gossip services
// (package gossip, every topic validated) feeding real provider tables
// (package router) and price feeds (router/pricefeed); validators also
// publish signed price observations at the rate their probes would.
//
// Run measures one size: how long the network takes to converge, gossip
// messages and bytes received per node by topic, validation time per node,
// process CPU, provider-table memory, the time a newcomer takes to see
// every provider, quote-and-rank time per request, a DHT lookup for a model
// gossip never showed, and the price feed's observation load.
// cmd/bench-scale prints and plots the figures for a list of sizes.
package scale
