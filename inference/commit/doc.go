// Package commit implements TOPLOC-style commitments to what a model
// computed, and their verification by one prefill.
//
// For every 32 decode steps, the top-4 log-probs of each step give 128
// (index, value) pairs. The index of a pair is key = step·V + token (V the
// vocabulary size; step counted within the chunk), the value is the IEEE
// half-precision bit pattern of −log-prob (non-negative, so below 0x7C00).
// An injective modulus m (the largest m ≤ p, searched downward, for which the
// keys stay distinct mod m) maps keys to field points x = key mod m, and
// the pairs are interpolated by a polynomial of degree < 128 over the prime
// field p = 65521. A chunk proof is m followed by the 128 coefficients, all
// 16-bit: 258 bytes per 32 tokens (2 + 8·n bytes for a final chunk of n
// steps). The commitment hash is SHA-256 over all chunk proofs and goes into
// the receipt.
//
// A verifier holding the same weights runs one prefill over prompt + output
// (inference.Engine.Score), takes its own top-4 at every step, evaluates the
// committed polynomial at its own indices and compares the half-precision
// exponent and mantissa of the committed value with its own. An index the
// prover did not commit to evaluates to an unrelated field element, so a
// different top-4 set shows up as mismatches too. A chunk passes when its
// exponent mismatches and its mean and median mantissa differences stay
// within Tolerance; DefaultTolerance was calibrated by the detection
// experiment in this package's tests (see commit_test.go).
package commit
