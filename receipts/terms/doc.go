// Package terms holds the plain types a receipt and a payment record
// commit to: a request's messages and sampling parameters, the units served
// and the price breakdown. They live here, at the bottom of the import
// graph, so that receipts import nothing above them (DESIGN.md: cmd -> node
// -> {router, inference, consensus, gossip, p2p} -> receipts); inference and
// router/pricing use them under their own names (type aliases).
package terms
