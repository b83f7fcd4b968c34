// Package ledgertest holds the drivers the consensus tests share: named
// deterministic keys, funded genesis accounts and validators, the test
// chain's parameters, signed transactions and records, and a provider
// machine with a real identity that registers and signs receipts.
//
// It imports the ledger and the receipts layer but nothing of CometBFT,
// so the ledger's own (external) tests use it as cheaply as the node's.
// Only tests and node/attacktest import it.
package ledgertest
