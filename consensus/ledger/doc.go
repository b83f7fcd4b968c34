// Package ledger is the tenzro state machine, independent of the consensus
// engine that replicates it (it imports nothing of CometBFT; the consensus
// package adapts it to ABCI).
//
// State lives in go-ethereum's Merkle-Patricia trie (hash scheme) over a
// pebble database on disk (Store). Every block updates the trie
// incrementally; its root is the app hash, so any value read from state
// can be proven against a header. A block's height and time are not in
// the trie (Stamp: the store keeps them per height beside it), so a block
// that changes nothing keeps the app hash, and an idle chain waits for
// transactions instead of proving each new block with another.
//
// Transactions are canonical CBOR envelopes signed by Ed25519 account keys
// over domain-separated bytes ("tenzro/v1/tx", chain ID, body) and carry a
// per-account nonce, and pay the governed FeePerTx to FeePoolAccount. In
// the mempool (Check) and a proposal (Prepare) a failing transaction is
// refused whole; inside a decided block (Deliver) a transaction that
// passed its nonce and fee checks but then fails still consumes its nonce
// and fee and changes nothing else. Rejections carry one of the codes in
// codes.go.
//
// The ledger holds accounts, validator stakes (turned into validator power
// changes), provider registrations with serving bonds, governed parameters
// changed by proposals that pass with > 2/3 of validator power, spend
// escrows, call settlements carrying payment records, hourly SLA verdicts,
// and the standing every node derives from them.
//
// Escrows are per (payer, settler). A payment record is signed by its
// settler (receipt.RecordSigningBytes: domain "tenzro/v1/payment-record", chain ID,
// canonical CBOR of every field but the signature and the envelope) and
// carries the provider's receipt envelope, which settlement verifies
// against the machine registered as the record's provider (each session
// certificate once per batch; CodeWrongMachine for another machine's,
// CodeBadReceipt otherwise); a provider's receipt names the payer and
// settler it served under and the least price it is owed, and a record
// whose request, payer or settler differ is skipped with
// CodeRecordMismatch, one priced below it with CodeUnderpriced (so nobody
// holding a receipt settles the call from another escrow or for less);
// such records are deduped by (provider, request digest) as well as
// (payer, request digest) (KeyServed). The record is stored without the
// envelope.
// Records failing a stateful check (expired, duplicate, unknown escrow,
// bad settler signature, unknown provider, bad receipt, over the escrow's
// available balance) are skipped and reported in the transaction's
// SettleReport, so resubmitting a batch is safe; only a malformed
// settlement is refused whole. A settled record credits the provider's
// operator its price less FeePerRecord (to the fee pool): Σ debited from
// escrows = Σ credited to operators + Σ record fees. A record refused at
// or after its escrow lookup costs the settlement's signer FeePerRecord
// (to the fee pool; an expired or duplicate one is free), and a
// settlement is admitted only if its signer holds FeePerTx + FeePerRecord
// × its records (at most MaxRecordsPerTx) up front (settle_fee.go). Escrow withdrawals
// wait WithdrawDelayBlocks (longer than a record's validity plus the
// gateway's grace period) before EscrowClaim pays them out; meanwhile they
// are not available to records. Every settled record is indexed by payer
// and height (KeyRecordIndex) and by provider machine and height
// (KeyProviderRecordIndex), so range proofs show all of a payer's or a
// provider's records in a span of heights. Signatures that verified in
// Check are remembered (sigCache) so Finalize does not verify them again.
//
// Stream escrows (stream.go, exec_stream.go) pay a standby by block time:
// StreamOpen, signed by the escrow's settler, moves a deposit out of the
// escrow's available balance into a stream to a registered, bonded
// machine's operator at a rate per hour; StreamClaim by that operator pays
// min(deposit, ⌊rate × (t − t_open) / 3600⌋) − claimed, always computed
// from the open time so rounding never drifts and every fraction stays
// with the payer; StreamStop by the payer or settler pays what accrued and
// refunds the rest to the escrow in the same transaction. Deposit =
// claimed + refunded + balance, always.
//
// Settlement plans (plan.go, exec_plan.go) pay several legs from one
// spend escrow, all or none: PlanOpen, signed by the escrow's settler,
// moves the total out of the escrow's available balance; each leg gets
// ⌊total × bps / 10000⌋ and the first also the remainder, so the payouts
// sum to the total exactly (PlanPayouts). A plan whose legs are all on
// this chain (no leg names another chain ID) commits in the transaction
// that opens it; otherwise PlanDecide records its one decision: commit
// pays every leg in that transaction, abort returns the total whole. A
// plan citing a quote must use the split rule (SplitRuleHash) the quote
// names.
//
// Disputes (dispute.go, exec_dispute.go, dispute_resolve.go) challenge a
// settled record's optimistic answer: DisputeOpen carries the receipt (the
// settled one), the commitment proofs it signs and the token IDs, with a
// bond. Before the transactions of the next block (FinalizeHashed), its
// hash seeds a committee of k validators drawn without replacement by
// power (DrawCommittee) from those that declared the model's weights
// (ModelDeclare), never the accused provider's operator. Members commit
// to a verdict (VoteCommitment) in the first half of the verdict limit
// and reveal in the second; ≥ 2/3 of the committee's power decides at
// once. No verdict redraws once with up to 2k+1 members, then lapses and
// returns the bond. Guilty slashes the governed share of the provider's
// bond (unbonding or not), pays the reward share to the disputer with its
// bond, burns the rest (Supply.Burned), refunds the record's whole price
// to the escrow (the operator's credit as far as it holds it, the rest out
// of the burn), rewriting the record and its index entries so range
// proofs show the reversal, and zeroes standing for the governed hours;
// innocent pays the disputer's bond to the operator. A
// bond cannot be withdrawn while disputed, nor until the dispute window
// and two verdict limits after the provider's last settled record.
//
// Ledger drives it the way an engine does: InitChain, then per block
// Finalize and Commit; Check keeps a mempool view and Prepare filters a
// proposal. Exec and Deliver apply one transaction to any KV.
//
// State-sync snapshots (snapshot_*.go): every SetSnapshots interval,
// Commit starts a goroutine that reads the root just committed (pinned
// against Prune) and writes its key/value pairs in key order, in chunks of
// at most 10 MB, each named by its SHA-256 in the snapshot's metadata
// (SnapshotFormat 2, with the block time); the newest few are kept beside the state directory.
// Restore rebuilds the trie from the pairs of an offered snapshot and
// adopts it only when the rebuilt root is the snapshot's app hash.
package ledger
