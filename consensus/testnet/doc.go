// Package testnet starts several real CometBFT validators running the
// consensus application in-process on loopback (real p2p, real
// consensus), created with consensus.DevnetGenesis and a genesis that
// funds given accounts, and follower full nodes beside them. Tests,
// benchmarks and the devnet use it. It also makes provider identities for
// registrations: Provider (bare keys) and Machine (a real machine identity
// with a certified session that signs receipts the chain verifies).
package testnet
