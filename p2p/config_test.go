package p2p

import (
	"strings"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"
)

const testPeer = "12D3KooWEyoppNCUx8Yx66oV9fJnriXwCcXwDDUA2kj6vnc6iDEp"

func TestDefaultConfigValid(t *testing.T) {
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("DefaultConfig().Validate() = %v", err)
	}
	if c.ConnLow != 64 || c.ConnHigh != 192 {
		t.Fatalf("watermarks = %d/%d, want 64/192", c.ConnLow, c.ConnHigh)
	}
	if len(c.Listen) != 2 || !strings.HasSuffix(c.Listen[1], "/quic-v1") {
		t.Fatalf("default listen = %v", c.Listen)
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*Config)
		wantErr string // substring; "" means valid
	}{
		{"default", func(*Config) {}, ""},
		{"bootstrap tcp", func(c *Config) { c.Bootstrap = []string{"/ip4/127.0.0.1/tcp/4001/p2p/" + testPeer} }, ""},
		{"bootstrap quic dns", func(c *Config) { c.Bootstrap = []string{"/dns4/v0.example.org/udp/4001/quic-v1/p2p/" + testPeer} }, ""},
		{"bootstrap dnsaddr", func(c *Config) { c.Bootstrap = []string{"/dnsaddr/boot.example.org/p2p/" + testPeer} }, ""},
		{"ipv6 listen", func(c *Config) { c.Listen = []string{"/ip6/::/tcp/0"} }, ""},
		{"client without listen", func(c *Config) { c.Listen = nil; c.DHTServer = false }, ""},
		{"network empty", func(c *Config) { c.Network = "" }, "p2p.network: must match [a-z0-9-]{1,32}"},
		{"network upper", func(c *Config) { c.Network = "DevNet" }, "p2p.network:"},
		{"network slash", func(c *Config) { c.Network = "dev/net" }, "p2p.network:"},
		{"network long", func(c *Config) { c.Network = strings.Repeat("a", 33) }, "p2p.network:"},
		{"listen garbage", func(c *Config) { c.Listen = []string{"/ip4/0.0.0.0/tcp/1", "x"} }, `p2p.listen[1]: invalid multiaddr "x"`},
		{"listen old quic", func(c *Config) { c.Listen = []string{"/ip4/0.0.0.0/udp/1/quic"} }, "p2p.listen[0]: "},
		{"listen websocket", func(c *Config) { c.Listen = []string{"/ip4/0.0.0.0/tcp/1/ws"} }, "p2p.listen[0]: "},
		{"listen with p2p", func(c *Config) { c.Listen = []string{"/ip4/0.0.0.0/tcp/1/p2p/" + testPeer} }, "p2p.listen[0]: "},
		{"listen dns", func(c *Config) { c.Listen = []string{"/dns4/example.org/tcp/1"} }, "p2p.listen[0]: "},
		{"server without listen", func(c *Config) { c.Listen = nil; c.DHTServer = true }, "p2p.listen: "},
		{"bootstrap no peer id", func(c *Config) { c.Bootstrap = []string{"/ip4/127.0.0.1/tcp/4001"} }, "p2p.bootstrap[0]: missing /p2p/ peer id"},
		{"bootstrap garbage", func(c *Config) { c.Bootstrap = []string{"/ip4/127.0.0.1/tcp/4001/p2p/" + testPeer, "nope"} }, `p2p.bootstrap[1]: invalid multiaddr "nope"`},
		{"bootstrap bad peer id", func(c *Config) { c.Bootstrap = []string{"/ip4/127.0.0.1/tcp/4001/p2p/QmNotAPeer"} }, "p2p.bootstrap[0]: invalid multiaddr"},
		{"bootstrap only p2p", func(c *Config) { c.Bootstrap = []string{"/p2p/" + testPeer} }, "p2p.bootstrap[0]: no transport address"},
		{"bootstrap webrtc", func(c *Config) { c.Bootstrap = []string{"/ip4/1.2.3.4/udp/1/webrtc-direct/p2p/" + testPeer} }, "p2p.bootstrap[0]: "},
		{"conn low zero", func(c *Config) { c.ConnLow = 0 }, "p2p.conn_low:"},
		{"conn high not above low", func(c *Config) { c.ConnLow, c.ConnHigh = 100, 100 }, "p2p.conn_high:"},
		{"nat relays", func(c *Config) { c.NAT.Relays = []string{"/ip4/127.0.0.1/udp/4001/quic-v1/p2p/" + testPeer} }, ""},
		{"nat private", func(c *Config) { c.NAT.Reachability = ReachPrivate }, ""},
		{"nat reachability", func(c *Config) { c.NAT.Reachability = "maybe" }, `p2p.nat.reachability: want "auto", "public" or "private", got "maybe"`},
		{"nat relays garbage", func(c *Config) { c.NAT.Relays = []string{"nope"} }, `p2p.nat.relays[0]: invalid multiaddr "nope"`},
		{"nat relay no peer id", func(c *Config) { c.NAT.Relays = []string{"/ip4/127.0.0.1/tcp/4001"} }, "p2p.nat.relays[0]: missing /p2p/ peer id"},
		{"relay circuits zero", func(c *Config) { c.NAT.Relay.MaxCircuits = 0 }, "p2p.nat.relay.max_circuits: must be at least 1"},
		{"relay data tiny", func(c *Config) { c.NAT.Relay.CircuitData = 1024 }, "p2p.nat.relay.circuit_data: must be at least 65536"},
		{"relay duration zero", func(c *Config) { c.NAT.Relay.CircuitDuration = 0 }, "p2p.nat.relay.circuit_duration:"},
		{"relay ttl short", func(c *Config) { c.NAT.Relay.ReservationTTL = time.Second }, "p2p.nat.relay.reservation_ttl:"},
		{"relay per ip above total", func(c *Config) { c.NAT.Relay.MaxReservationsPerIP = 200 }, "p2p.nat.relay.max_reservations_per_ip: 200 exceeds max_reservations 128"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := DefaultConfig()
			c.DHTServer = true
			tc.mutate(&c)
			err := c.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate() = nil, want error containing %q", tc.wantErr)
			}
			if !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("Validate() = %q, want it to contain %q", err, tc.wantErr)
			}
		})
	}
}

func TestConfigValidateReportsAll(t *testing.T) {
	c := Config{Network: "X", Listen: []string{"bad"}, Bootstrap: []string{"/ip4/1.2.3.4/tcp/1"}}
	err := c.Validate()
	if err == nil {
		t.Fatal("Validate() = nil for a config with five bad keys")
	}
	for _, key := range []string{"p2p.network", "p2p.listen[0]", "p2p.bootstrap[0]", "p2p.conn_low", "p2p.conn_high"} {
		if !strings.Contains(err.Error(), key) {
			t.Errorf("error %q does not name %s", err, key)
		}
	}
}

func TestBootstrapInfosMergesPeers(t *testing.T) {
	c := DefaultConfig()
	c.Bootstrap = []string{
		"/ip4/127.0.0.1/tcp/4001/p2p/" + testPeer,
		"/ip4/127.0.0.1/udp/4001/quic-v1/p2p/" + testPeer,
	}
	infos, err := c.bootstrapInfos()
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 1 || len(infos[0].Addrs) != 2 || infos[0].ID.String() != testPeer {
		t.Fatalf("bootstrapInfos = %v, want one peer with two addrs", infos)
	}
}

// TestRelayInfos: the relays are the configured ones, else the bootstrap
// peers, never the node itself.
func TestRelayInfos(t *testing.T) {
	self, err := peer.Decode(testPeer)
	if err != nil {
		t.Fatal(err)
	}
	const other = "12D3KooWGzBQHvCmHEh5dC6b9c1jTbtXpsjqovfDD7bHTCGWRGZ2"
	c := DefaultConfig()
	c.Bootstrap = []string{"/ip4/127.0.0.1/tcp/4001/p2p/" + testPeer, "/ip4/127.0.0.1/tcp/4002/p2p/" + other}
	got, err := c.relayInfos(self)
	if err != nil || len(got) != 1 || got[0].ID.String() != other {
		t.Fatalf("relays from bootstrap = %v, %v; want only %s", got, err, other)
	}
	c.NAT.Relays = []string{"/ip4/127.0.0.1/tcp/4003/p2p/" + testPeer}
	if got, err := c.relayInfos(self); err != nil || len(got) != 0 {
		t.Fatalf("relays = %v, %v; want none (the only one is self, the bootstrap list is not used)", got, err)
	}
}
