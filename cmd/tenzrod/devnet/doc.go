// Package devnet runs a whole tenzro network on loopback: it writes a home
// per node (config, keys), starts each node as a child process of the
// tenzrod binary on free ports, waits until every API answers, writes the
// devnet.json manifest (owner-only: it holds the buyer token and names the
// faucet key new operators are funded from), and on cancellation stops
// every child it started. While it runs, its control socket (devnet.sock)
// lets `tenzrod devnet add-provider` hand it a prepared provider home to
// start and supervise like its own.
package devnet
