package nodetest

import (
	"testing"

	"github.com/libp2p/go-libp2p/core/host"
	mocknet "github.com/libp2p/go-libp2p/p2p/net/mock"
)

// Mocknet returns n linked, connected in-memory libp2p hosts, for tests
// that need more hosts than loopback sockets serve well; they close when
// the test ends.
func Mocknet(t testing.TB, n int) []host.Host {
	t.Helper()
	mn, err := mocknet.FullMeshConnected(n)
	if err != nil {
		t.Fatalf("mocknet: %v", err)
	}
	t.Cleanup(func() { _ = mn.Close() })
	return mn.Hosts()
}
