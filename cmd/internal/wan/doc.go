// Package wan runs a devnet's nodes in a netlab testbed: `tenzrod devnet`
// writes the homes (keys, genesis, registrations) on loopback and is
// stopped; Relocate moves every address of every home from loopback to
// the node's own namespace, and Start runs each node there with `ip netns
// exec`, behind a home router's NAT where the layout says so. The WAN
// test of cmd/tenzrod and scripts/wan (through cmd/internal/wan/wanlab)
// share it, so the person and the test see the same network.
package wan
