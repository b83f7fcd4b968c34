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
// New/Start/Stop run a CometBFT node in-process around the application; the
// testnet sub-package starts several of them on loopback.
package consensus
