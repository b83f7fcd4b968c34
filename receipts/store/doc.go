// Package store persists receipts, payment records and this node's buyer
// balances in the node's datastore: a go-datastore over pebble
// (github.com/ipfs/go-ds-pebble) in one directory.
//
// # Durability
//
// Every write is applied atomically and in order, and a clean stop syncs
// them all. Under GroupSync (the default) a
// background flusher fsyncs the log right behind the writers, so a paid
// request does not wait for the disk and one fsync covers a burst of
// writes; under SyncEach every write waits for its own fsync. Credits wait
// for their fsync in both modes; WaitDurable waits for everything written
// so far. See Durability for what a power failure can lose.
//
// # Layout
//
// Every key lives under /tenzro-receipts/v1, so the store can share a
// datastore with other node-local state (New). Binary IDs and account names
// are hex-encoded in keys.
//
//	r/<nonce>                          receipt envelope + ReceiptMeta (CBOR)
//	p/<request digest>                 receipt.Bill (CBOR)
//	i/<payer>/<time>-<request digest>  index of a payer's records in time order
//	b/<account>                        balance, 8-byte big-endian micro-units
//	e/<request digest>                 Evidence of a paid optimistic answer (CBOR), for its buyer's dispute
//
// <time> is the record's TimeMs with its sign bit flipped, as 16 hex
// digits, so keys sort in time order.
//
// # Money
//
// Settle debits the payer and stores the bill and its index
// entry in one datastore batch: either all of it is written or none. Writes
// are serialised by the Store, so concurrent Settle, Debit and Credit calls
// can never overdraw an account or lose an update; one datastore must
// therefore be written by one Store. Arithmetic is checked: a credit that
// would exceed 2^64-1 micro-units is ErrOverflow.
package store
