// Package testnet starts several real CometBFT validators running the
// consensus application in-process on loopback (real p2p, real
// consensus), with a genesis that funds given accounts. Tests, benchmarks
// and the devnet use it; it also makes real provider identities (P-256
// hardware key, ML-DSA-65 key, libp2p peer ID) for registrations.
package testnet
