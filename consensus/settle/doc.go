// Package settle moves signed payment records from the two parties that
// hold them to the chain: the gateway's Outbox (records it signed as
// settler) and the provider's Collector (records delivered to it). Both
// are durable stores — a pebble datastore whose every write is fsynced
// before the call returns — with background loops that submit Settlement
// transactions (SubmitAll, split by encoded size by Batches).
//
// # State machines
//
// Gateway (Outbox): signed → delivered → settled.
//
//   - Sign stores the signed record as pending before it returns; only
//     then does the buyer get it.
//   - The loop delivers pending, unacknowledged records to the provider
//     that served them (one delivery per provider at a time, exponential
//     backoff per provider) and marks what the provider acknowledged
//     (delivered = Acked, still pending).
//   - After Grace, whether delivered or not, the loop asks the chain
//     whether each record is settled; those that are become settled, the
//     rest are submitted by the gateway itself. Settled outcomes become
//     settled; a Duplicate does only when the record the chain settled
//     for the call has this record's digest (receipt.RecordDigest),
//     otherwise it is Preempted: skipped, counted
//     (records_preempted_total) and logged as an error, since this
//     record's money did not move. Skipped becomes skipped with its code,
//     Err stays pending and is retried with backoff.
//
// Provider (Collector): pending → submitted → settled | skipped.
//
//   - Accept verifies a delivered record (this machine, the settler's
//     signature, not expired, receipt present and hashing to ReceiptHash)
//     and stores it as pending before it returns; only then does the
//     wire acknowledge. Refusals (*Refusal) are permanent. An underpriced
//     record is kept and counted (Underpriced, Shortfall).
//   - Every Interval, or once BatchRecords are pending, the loop submits
//     the pending records (submitted is the in-memory state of a record
//     in a transaction in flight) and stores each outcome as for the
//     gateway.
//
// Pending records and the sums derived from them (Outbox.Unsettled,
// Collector.Held) live in memory and are rebuilt from disk on open;
// settled and skipped records stay on disk, with their height, code and
// receipt, as evidence, until Retention (default a week) has passed since
// they were signed or accepted; then the loop prunes them.
//
// # Crash safety
//
// A record is under exactly one state prefix on disk; every transition is
// one atomic, fsynced batch. So a crash leaves each record in the state
// before or after a transition, never in none or two:
//
//   - Crash before a record is stored: Sign or Accept has not returned, so
//     no buyer holds the record and no acknowledgement was sent; nothing
//     is owed that is not on disk.
//   - Crash after storing, before submission: the record reloads as
//     pending on open and is submitted by the next pass.
//   - Crash after a transaction committed, before its outcome was stored:
//     the record reloads as pending and is submitted again; the chain
//     dedupes by (payer, request digest) and by (provider, request
//     digest) and reports CodeDuplicateRecord, which is stored as settled
//     once the settled record's digest is found to be this one's. The
//     money moved once.
//   - Crash of either party for good: the other still holds the record
//     and settles it (the provider at once, the gateway after Grace).
//
// Two submitters of one record (provider and gateway) are safe for the
// same reason: the second gets Duplicate.
package settle
