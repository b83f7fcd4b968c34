// Package validator is the validator role of a tenzrod node, beside its
// CometBFT validator: SLA verdicts from heartbeat samples and probes
// (verdicts.go), paid probes of every registered, live provider
// (probe.go), price observations signed by the operator account and
// gossiped for the price feed (priceobs.go), and the dispute committee
// duty (duty*.go). On each dispute it is drawn for, a background worker
// re-executes the disputed answer (nearest deadline first, Workers at
// once) and saves the verdict with its salt; every pass of the duty loop
// submits the commitments and reveals that are ready in one batch. It gets
// its dependencies as a Deps struct from node/, never the node itself.
package validator
