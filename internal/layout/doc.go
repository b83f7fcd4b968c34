// Package layout holds the test that keeps the import graph the shape
// DESIGN.md's Layout section draws: dependencies flow one way, from cmd
// to node to the parts to receipts, and the state machine stays free of
// CometBFT. It has no code of its own; the rules run with `make test`.
package layout
