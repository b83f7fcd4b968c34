package consensus

// DropPeersGracefully disconnects every CometBFT peer the way a graceful
// stop does, which CometBFT never redials itself: only the watchdog can
// bring a persistent peer back.
func (n *Node) DropPeersGracefully() int {
	sw := n.cmt.Switch()
	ps := sw.Peers().Copy()
	for _, p := range ps {
		sw.StopPeerGracefully(p)
	}
	return len(ps)
}

// RouteNames lists the first segments of every query route, so a table
// test can show it covers them all.
func RouteNames() []string {
	names := make([]string, 0, len(routes))
	for n := range routes {
		names = append(names, n)
	}
	return names
}
