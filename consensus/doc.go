// Package consensus runs the tenzro ledger (package consensus/ledger, the
// state machine) as a CometBFT v1 ABCI 2.0 application, in-process.
//
// App adapts CometBFT's calls to the ledger. Query answers state reads
// with Merkle-Patricia proofs: any value returned with its proof can be
// checked offline against a header signed by > 2/3 of validator power
// (see Proof and ProofOpType). Every settled payment record is indexed by payer and
// height (ledger.KeyRecordIndex), so a range proof (RangeProof,
// VerifyRecordRange) shows all of a payer's records in a span of heights
// and that there are no others; the evidence sub-package turns that into
// offline-verifiable evidence packs.
//
// The ledger's types, codes and helpers are not re-exported: callers
// import consensus/ledger for them, so each name has one spelling.
// Submitter signs, submits and waits for an account's transactions on a
// running node.
//
// New/Start/Stop run a CometBFT node in-process around the application, as
// a validator or (Config.Follower) as a full node that
// follows the chain without voting. DevnetGenesis creates a network's
// validator homes, genesis and CometBFT config.toml files; LoadConfig reads
// a home back. The testnet sub-package starts such networks on loopback.
//
// The App serves the ledger's snapshots through ABCI state sync
// (ListSnapshots, LoadSnapshotChunk) and restores one (OfferSnapshot,
// ApplySnapshotChunk: a chunk not matching its hash is fetched again and
// its sender refused; a snapshot not rebuilding the trusted app hash is
// rejected). Commit's RetainHeight lets CometBFT prune old blocks per
// [chain] retain_blocks (RetainHeight), never past the newest snapshot and,
// on a validator, never within the evidence max age.
package consensus
