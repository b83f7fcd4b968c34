package testnet

import (
	"context"
	"testing"
)

// StartT is Start for a test: a network that does not start fails t at
// once, and the network is stopped when t ends, a failed stop failing t.
func StartT(ctx context.Context, t testing.TB, dir string, opt Options) *Net {
	t.Helper()
	n, err := Start(ctx, dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := n.Stop(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return n
}
