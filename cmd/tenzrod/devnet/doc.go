// Package devnet runs a whole tenzro network on loopback: it writes a home
// per node (config, keys), starts each node as a child process of the
// tenzrod binary on free ports, waits until every API answers, writes the
// devnet.json manifest (owner-only: it holds the buyer token), and on
// cancellation stops every child it started.
package devnet
