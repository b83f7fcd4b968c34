//go:build !sessioncache

package node

import "github.com/tenzrod/tenzrod/router/gateway"

// sessionSuccessors is nil until the session-cache protocol is built in
// (build tag sessioncache, see session_cache.go): every session then
// reports successor_reason "unsupported".
func (n *Node) sessionSuccessors() gateway.Successors { return nil }
