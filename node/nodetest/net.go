package nodetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/internal/freeport"
)

// Member is one part of a test network: a node, or anything with the same
// lifecycle.
type Member interface {
	Start(ctx context.Context) error
	Stop(ctx context.Context) error
}

// Timeouts of a member's start and stop.
const (
	StartTimeout = 30 * time.Second
	StopTimeout  = 30 * time.Second
)

// Start starts m and stops it when the test ends; a failure to stop is a
// test error.
func Start[M Member](t testing.TB, what string, m M) M {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), StartTimeout)
	defer cancel()
	if err := m.Start(ctx); err != nil {
		t.Fatalf("start %s: %v", what, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), StopTimeout)
		defer cancel()
		if err := m.Stop(ctx); err != nil {
			t.Errorf("stop %s: %v", what, err)
		}
	})
	return m
}

// Spec is the shape of a network: how many members of each role.
type Spec struct {
	Validators, Providers, Gateways int
}

// Role names a member's place in a Spec.
type Role string

// The roles of a Spec, in the order Build starts them.
const (
	RoleValidator Role = "validator"
	RoleProvider  Role = "provider"
	RoleGateway   Role = "gateway"
)

// Factory builds the i-th member of role, given the addresses of the
// members built before it (to bootstrap from); it does not start it.
type Factory[M Member] func(t testing.TB, role Role, i int, bootstrap []string) M

// Addressed is a member others can bootstrap from.
type Addressed interface {
	Member
	Bootstrap() []string
}

// Net is a started test network.
type Net[M Addressed] struct {
	Validators, Providers, Gateways []M
}

// All is every member, in start order.
func (n *Net[M]) All() []M {
	out := append([]M{}, n.Validators...)
	out = append(out, n.Providers...)
	return append(out, n.Gateways...)
}

// Build starts spec's members in order (validators, providers, gateways),
// each bootstrapping from the first member, and stops them in reverse
// when the test ends.
func Build[M Addressed](t testing.TB, spec Spec, build Factory[M]) *Net[M] {
	t.Helper()
	n := &Net[M]{}
	var boot []string
	add := func(role Role, count int, into *[]M) {
		for i := range count {
			m := Start(t, fmt.Sprintf("%s %d", role, i), build(t, role, i, boot))
			if boot == nil {
				boot = m.Bootstrap()
			}
			*into = append(*into, m)
		}
	}
	add(RoleValidator, spec.Validators, &n.Validators)
	add(RoleProvider, spec.Providers, &n.Providers)
	add(RoleGateway, spec.Gateways, &n.Gateways)
	return n
}

// FreeTCP returns a loopback TCP address, tcp://127.0.0.1:PORT, reserved
// for this test binary (freeport).
func FreeTCP(t testing.TB) string {
	t.Helper()
	addr, err := freeport.Addr()
	if err != nil {
		t.Fatal(err)
	}
	return "tcp://" + addr
}

// LoopbackListen are libp2p listen addresses on loopback with free ports.
func LoopbackListen() []string {
	return []string{"/ip4/127.0.0.1/tcp/0", "/ip4/127.0.0.1/udp/0/quic-v1"}
}
