package router

import (
	"context"
	"testing"
	"time"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/p2p/p2ptest"
)

// TestSuspicionLiftsOnHeartbeatOrReconnect: a suspected provider stays up
// (its heartbeats decide that) and stays suspected until a heartbeat
// arrives after the suspicion or Clear; an unknown peer is not recorded.
func TestSuspicionLiftsOnHeartbeatOrReconnect(t *testing.T) {
	f := newFixture(t)
	f.beat(false)
	f.table.Suspect(f.peer)
	if !f.table.Suspected(f.peer) {
		t.Fatal("not suspected")
	}
	f.want(t, StatusUp)
	f.clk.Add(time.Second)
	if !f.table.Suspected(f.peer) {
		t.Fatal("suspicion lifted by time alone")
	}
	f.beat(false)
	if f.table.Suspected(f.peer) {
		t.Fatal("a heartbeat after the suspicion did not lift it")
	}
	f.table.Suspect(f.peer)
	f.table.Clear(f.peer)
	if f.table.Suspected(f.peer) {
		t.Fatal("Clear did not lift the suspicion")
	}
	f.clk.Add(DownAfter + time.Second)
	f.want(t, StatusDown)
	stranger := peer.ID("stranger")
	f.table.Suspect(stranger)
	if f.table.Suspected(stranger) || f.table.Len() != 1 {
		t.Fatal("an unknown peer was recorded")
	}
}

// TestConnWatchSuspectsClosedConnection: over real loopback hosts, the
// watch suspects a known provider the moment this node's connection to it
// closes and clears it when one opens again.
func TestConnWatchSuspectsClosedConnection(t *testing.T) {
	gw, prov := p2ptest.Pair(t)
	table := NewTable(nil, nil)
	table.ApplyAnnouncement(&gossip.VerifiedAnnouncement{Sender: gossip.Sender{Peer: prov.ID(), Received: time.Now()},
		Announcement: gossip.Announcement{Region: "DE"}})
	w := NewConnWatch(gw.Network(), table)
	if err := w.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = w.Stop(context.Background()) }()
	if table.Suspected(prov.ID()) {
		t.Fatal("suspected while connected")
	}
	if err := gw.Network().ClosePeer(prov.ID()); err != nil {
		t.Fatal(err)
	}
	nodetest.Eventually(t, 10*time.Second, "suspected after the close", func() bool { return table.Suspected(prov.ID()) })
	p2ptest.Connect(t, gw, prov)
	nodetest.Eventually(t, 10*time.Second, "cleared after the reconnect", func() bool { return !table.Suspected(prov.ID()) })
}
