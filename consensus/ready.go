package consensus

import "context"

// Ready reports whether the chain has a committed block and is not
// catching up, so that transactions are accepted and queries are current.
func Ready(ctx context.Context, c *Node) bool {
	if c == nil || c.App().Height() < 1 || c.App().ChainID() == "" {
		return false
	}
	catching, err := c.CatchingUp(ctx)
	return err == nil && !catching
}
