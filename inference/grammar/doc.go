// Package grammar compiles a JSON schema (the subset OpenAI's strict
// structured outputs accept, plus "any JSON object") into a byte-level
// context-free grammar, and turns the grammar into a token mask: given a
// tokenizer's vocabulary (token → bytes) and the text so far, which tokens
// may come next.
//
// The mask is a pure function of the schema, the vocabulary, the output
// tokens so far and the token budget left, so a provider and a committee
// that replays its answer draw from the same masked distribution: a
// provider that ignored the mask is caught by re-execution.
//
// The matcher is a set of stacks over a flattened grammar (one stack per
// way the text so far can be parsed). A token is allowed when its bytes
// keep at least one stack alive and the value can still be finished within
// the budget left; the end of the answer is allowed only when the value is
// complete. Output is compact JSON: no whitespace between tokens.
package grammar
