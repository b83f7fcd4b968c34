// Package gatewayapi is the routing side's part of a node's JSON-RPC API:
// the provider table and quotes, the gateway's recent requests and
// latencies, router metrics, the receipts it received, its sessions and
// the dispute evidence it kept for its buyers.
//
// It is apart from router/gateway so the gateway itself stays free of the
// RPC layer and of the chain node, which tenzro_getSession and
// tenzro_getDisputeEvidence read.
package gatewayapi

import "net/http"

// Callers authenticates a read of one buyer's data: the operator's admin
// token reads anyone's, a buyer's token its own account's
// (openai.Buyers).
type Callers interface {
	Caller(h http.Header) (admin bool, payer string, err error)
}
