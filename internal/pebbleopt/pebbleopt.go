// Package pebbleopt holds the pebble options of the node's own stores
// (receipts, outbox, collected records), one choice for all of them.
package pebbleopt

import "github.com/cockroachdb/pebble/v2"

// MemTableSize is the node stores' memtable. Pebble preallocates every
// write-ahead log it keeps at 1.1 × the memtable and keeps a few for
// reuse: at its default 4 MB a devnet's eight nodes held about 250 MB of
// mostly empty logs in these stores after a quarter of an hour. Their
// writes are records and receipts of a few kilobytes; 1 MB still takes
// hundreds per flush.
const MemTableSize = 1 << 20

// Store is a fresh set of options for one node store.
func Store() *pebble.Options {
	return &pebble.Options{MemTableSize: MemTableSize}
}
