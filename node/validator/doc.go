// Package validator is the validator role of a tenzrod node, beside its
// CometBFT validator: SLA verdicts from heartbeat samples and probes
// (verdicts.go), paid probes of every registered, live provider
// (probe.go), and price observations signed by the operator account and
// gossiped for the price feed (priceobs.go). It gets its dependencies as a
// Deps struct from node/, never the node itself.
package validator
