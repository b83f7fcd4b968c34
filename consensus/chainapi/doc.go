// Package chainapi is the chain's part of a node's JSON-RPC API: accounts,
// standings, validators, escrows, model names, params, transactions,
// evidence packs, settled payments, stream escrows and disputes, each read
// with its proof from the node's own chain.
//
// It is a package of its own, not part of consensus, because the evidence
// export it serves (consensus/evidence) is built on consensus. Every method
// answers Unavailable on a node without a chain.
package chainapi
