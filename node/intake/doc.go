// Package intake bounds what the node's HTTP port takes in: open
// connections per remote address (LimitPerAddr) and request bodies being
// read at once, per pool and per client, at a minimum rate (Intake).
//
// It stands apart from the HTTP server the node assembles so the limits
// are tested over real sockets without a node.
package intake
