// Package terms is the market's vocabulary, imported by every part: the
// types a receipt and a payment record commit to (a request's messages and
// sampling parameters, the units served, the price breakdown), the rate
// card, the verification levels, token log-probabilities as buyers see
// them, the wire error codes of the infer protocol, and the chain's names
// for money (AccountID, an account's Ed25519 key; Hash32, a digest), so a
// gateway or a wire protocol can name a payer or a request without the
// ledger. It lives at the
// bottom of the import graph, so that receipts import nothing above them
// (DESIGN.md: cmd -> node -> {router, inference, consensus, gossip, p2p} ->
// receipts -> receipts/terms); other packages use these types directly or
// under their own names (type aliases).
package terms
