// Package store persists receipts, payment records and this node's buyer
// balances in the node's datastore: a go-datastore over pebble
// (github.com/ipfs/go-ds-pebble) in one directory, written with synced
// commits so an acknowledged payment survives a crash as well as a restart.
//
// # Layout
//
// Every key lives under /tenzro-receipts/v1, so the store can share a
// datastore with other node-local state (New). Binary IDs and account names
// are hex-encoded in keys.
//
//	r/<nonce>                          receipt envelope + ReceiptMeta (CBOR)
//	p/<request digest>                 receipt.PaymentRecord (CBOR)
//	i/<payer>/<time>-<request digest>  index of a payer's records in time order
//	b/<account>                        balance, 8-byte big-endian micro-units
//
// <time> is the record's TimeMs with its sign bit flipped, as 16 hex
// digits, so keys sort in time order.
//
// # Money
//
// Settle debits the payer and stores the payment record and its index
// entry in one datastore batch: either all of it is written or none. Writes
// are serialised by the Store, so concurrent Settle, Debit and Credit calls
// can never overdraw an account or lose an update; one datastore must
// therefore be written by one Store. Arithmetic is checked: a credit that
// would exceed 2^64-1 micro-units is ErrOverflow.
package store
