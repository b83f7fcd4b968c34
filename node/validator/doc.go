// Package validator is the validator role of a tenzrod node, beside its
// CometBFT validator: SLA verdicts from heartbeat samples and probes
// (verdicts.go), paid probes of every registered, live provider
// (probe.go), and price observations signed by the operator account and
// gossiped for the price feed (priceobs.go), and the committee duty
// (duty*.go): on each dispute it is drawn for, a background worker
// re-executes the disputed answer (nearest deadline first, Workers at
// once), the verdict and salt are saved, and every pass submits the
// commitments and reveals that are ready in one batch. It gets its dependencies as a
// Deps struct from node/, never the node itself.
package validator
