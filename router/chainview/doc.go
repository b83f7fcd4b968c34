// Package chainview is the routing side's view of the node's own chain:
// the registrations and standings gossip and the provider table read
// (Registry, cached per block), model-name resolution (Names), the
// verification surcharges (Surcharges), the session collaborators
// (Operators, Streams) and a gateway's escrow-backed Payments.
//
// Each type implements an interface router, gossip or router/gateway
// defines, so those packages never import consensus; reads are cached
// for the block they were made in, since the chain changes only with a
// block.
package chainview
