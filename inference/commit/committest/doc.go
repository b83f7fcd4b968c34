// Package committest serves test requests the way a provider commits to
// its answers: generated with the top-k log-probs of every step and built
// into the answer's proofs, for tests that need honest (or deliberately
// dishonest) evidence without a provider. It also checks a whole answer's
// proofs with one prefill (VerifyWithEngine, where a validator judges one
// disputed chunk), and names the models the cost benchmarks run on.
package committest
