// Package ledger is the tenzro state machine, independent of the consensus
// engine that replicates it (it imports nothing of CometBFT; the consensus
// package adapts it to ABCI).
//
// State lives in go-ethereum's Merkle-Patricia trie (hash scheme) over a
// pebble database on disk (Store). Every block updates the trie
// incrementally; its root is the app hash, so any value read from state
// can be proven against a header.
//
// Transactions are canonical CBOR envelopes signed by Ed25519 account keys
// over domain-separated bytes ("tenzro/v1/tx", chain ID, body) and carry a
// per-account nonce. A transaction either applies whole or changes nothing;
// rejections carry one of the codes in codes.go.
//
// The ledger holds accounts, validator stakes (turned into validator power
// changes), provider registrations with serving bonds, governed parameters
// changed by proposals that pass with > 2/3 of validator power, spend
// escrows, call settlements carrying payment records, hourly SLA verdicts,
// and the standing every node derives from them.
//
// A payment record may carry the provider's receipt envelope; settlement
// then verifies it against the machine registered as the record's provider
// (CodeWrongMachine for another machine's, CodeBadReceipt otherwise) and
// stores the record marked as checked, without the envelope. Every settled
// record is also indexed by payer and height (KeyRecordIndex), so a range
// proof can show all of a payer's records in a span of heights.
//
// Ledger drives it the way an engine does: InitChain, then per block
// Finalize and Commit; Check keeps a mempool view and Prepare filters a
// proposal. Exec applies one transaction to any KV.
package ledger
