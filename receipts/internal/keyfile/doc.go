// Package keyfile stores small secrets (private keys, seeds) as PEM files
// with mode 0600, created atomically on first use so that concurrent openers
// of the same directory always agree on one secret.
package keyfile
