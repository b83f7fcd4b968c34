// Package consensus is the tenzro ledger: a CometBFT v1 ABCI 2.0 application
// and the code that runs it in-process.
//
// State lives in go-ethereum's Merkle-Patricia trie (hash scheme) over a
// pebble database on disk. Every block updates the trie incrementally; the
// app hash CometBFT puts in the next header is the trie root, so any value
// returned by Query with its proof can be checked offline against a header
// signed by > 2/3 of validator power (see VerifyProof).
//
// Transactions are canonical CBOR envelopes signed by Ed25519 account keys
// over domain-separated bytes ("tenzro/v1/tx", chain ID, body) and carry a
// per-account nonce. A transaction either applies whole or changes nothing;
// rejections carry one of the codes in codes.go.
//
// The ledger holds accounts, validator stakes (turned into CometBFT
// validator updates), provider registrations with serving bonds, governed
// parameters changed by proposals that pass with > 2/3 of validator power,
// spend escrows, call settlements carrying payment records, hourly SLA
// verdicts, and the standing every node derives from them.
//
// A payment record may carry the provider's receipt envelope; settlement
// then verifies it against the machine registered as the record's provider
// (CodeWrongMachine for another machine's, CodeBadReceipt otherwise) and
// stores the record marked as checked, without the envelope. Every settled
// record is also indexed by payer and height (KeyRecordIndex), so a range
// proof (RangeProof, VerifyRecordRange) shows all of a payer's records in
// a span of heights and that there are no others; the evidence
// sub-package turns that into offline-verifiable evidence packs.
//
// New/Start/Stop run a CometBFT node in-process around the application, as
// a validator or (Config.Follower, FollowerConfig) as a full node that
// follows the chain without voting. DevnetGenesis creates a network's
// validator homes, genesis and CometBFT config.toml files; LoadConfig reads
// a home back. The testnet sub-package starts such networks on loopback.
package consensus
