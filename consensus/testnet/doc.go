// Package testnet starts several real CometBFT validators running the
// consensus application in-process on loopback (real p2p, real
// consensus), created with consensus.DevnetGenesis and a genesis that
// funds given accounts, and follower full nodes beside them. Tests,
// benchmarks and the devnet use it. It also makes bare provider identities
// for registrations (Provider); a machine with a certified session that
// signs receipts is consensus/ledgertest's Machine.
package testnet
