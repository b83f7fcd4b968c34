// Package hwkey provides the machine's hardware identity key: a P-256
// ECDSA signing key that certifies session keys.
//
// Three backends exist:
//
//   - "tpm": a primary ECC P-256 signing key in the owner hierarchy of the
//     TPM at Config.Device (default /dev/tpmrm0), created with a fixed
//     template. Primary keys derive from the hierarchy seed and the
//     template, so the same key returns on every Open without a persistent
//     handle. The key never leaves the TPM.
//   - "tpm-sim": the same TPM code path run against the go-tpm-tools
//     software simulator, with hierarchy seeds derived from a random secret
//     stored in Config.Dir. It is for devnets and tests, holds no secret
//     worth protecting, and is labelled "tpm-sim" everywhere.
//   - "software": a P-256 key in a PKCS#8 PEM file in Config.Dir, for
//     machines without a TPM.
//
// # Simulator concurrency
//
// The go-tpm-tools simulator is one process-global C library; only one
// simulator instance may be open at a time (simulator.Get blocks until the
// previous one is closed). A tpm-sim Key therefore does not hold the
// simulator open: each operation acquires the simulator, resets it with the
// key's seed, recreates the primary key, uses it and releases the simulator.
// Any number of tpm-sim keys (and other users of the simulator) can thus be
// open in one process; their operations are serialized by the simulator's
// lock, and each costs a simulator reset plus a key derivation (a few
// milliseconds). Keys are only used to certify session keys, so this cost is
// paid rarely.
//
// All Key implementations are safe for concurrent use.
package hwkey
