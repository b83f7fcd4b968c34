package node

import (
	"context"
	"encoding/hex"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/router"
)

// TestNetworkGossipAndDHT runs six real nodes on loopback: two validators,
// three providers and a gateway, all bootstrapping off the first validator.
// Every node must see every provider's announcement and heartbeats; the
// gateway must find, through the DHT, a provider of a model that was never
// gossiped at all.
func TestNetworkGossipAndDHT(t *testing.T) {
	v0 := startNode(t, testConfig(t, RoleValidator, "software", nil))
	boot := v0.Host().Addrs()[:1]

	nodes := []*Node{v0, startNode(t, testConfig(t, RoleValidator, "software", boot))}
	var providers []*Node
	for i, backend := range []string{"tpm-sim", "software", "software"} {
		cfg := testConfig(t, RoleProvider, backend, boot)
		if i == 2 {
			cfg.Provider.Region = "Europe"
		}
		p := startNode(t, cfg)
		providers = append(providers, p)
		nodes = append(nodes, p)
	}
	gw := startNode(t, testConfig(t, RoleGateway, "software", boot))
	nodes = append(nodes, gw)

	for _, n := range nodes {
		nodetest.Eventually(t, 30*time.Second, "every provider up at "+string(n.cfg.Role), func() bool {
			for _, p := range providers {
				v, ok := n.Table().Get(p.Host().ID())
				if !ok || v.Status != router.StatusUp || v.MachineID != p.Identity().MachineID().String() {
					return false
				}
			}
			return true
		})
	}
	v, _ := gw.Table().Get(providers[0].Host().ID())
	if v.KeyBackend != "tpm-sim" || len(v.Models) != 1 || v.Models[0].State != "warm" || v.Region != "DE" || !v.HardwareClass.Claimed {
		t.Fatalf("gateway's view of the tpm-sim provider: %+v", v)
	}

	// A host that never gossips provides a model nobody announced.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	silent := newRogueHost(t, func(pc *p2p.Config) { pc.Bootstrap, pc.DHTServer = boot, true })
	var hidden [32]byte
	copy(hidden[:], []byte("a model only the DHT knows about"))
	if err := silent.ProvideModel(ctx, hidden); err != nil {
		t.Fatal(err)
	}

	var found []p2p.FoundProvider
	nodetest.Eventually(t, 30*time.Second, "the gateway to find the silent provider in the DHT", func() bool {
		res, err := gw.call(ctx, "tenzro_findProviders", []byte(`{"model":"`+hex.EncodeToString(hidden[:])+`"}`))
		if err != nil {
			t.Logf("findProviders: %v", err)
			return false
		}
		found = res.([]p2p.FoundProvider)
		return len(found) == 1
	})
	if found[0].PeerID != silent.ID().String() {
		t.Fatalf("found %v, want %s", found, silent.ID())
	}
	dv, ok := gw.Table().Get(silent.ID())
	if !ok || dv.Source != "dht" || dv.Status != router.StatusDown || len(dv.Models) != 1 || dv.Models[0].ModelID != hex.EncodeToString(hidden[:]) {
		t.Fatalf("table entry for the DHT-found provider: %+v", dv)
	}
}
