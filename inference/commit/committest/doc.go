// Package committest serves test requests the way a provider commits to
// its answers: generated with the top-k log-probs of every step and built
// into the answer's proofs, for tests that need honest (or deliberately
// dishonest) evidence without a provider.
package committest
