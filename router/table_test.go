package router

import (
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/routertest"
)

type fixture struct {
	clk   *clock.Mock
	table *Table
	peer  peer.ID
	mach  identity.MachineID
	seq   uint64
}

func newFixture(t *testing.T) *fixture {
	clk := clock.NewMock()
	clk.Set(time.Unix(1_800_000_000, 0))
	f := &fixture{clk: clk, table: NewTable(clk, nil), peer: peer.ID("provider-a"), mach: identity.MachineID{7}}
	f.table.ApplyAnnouncement(&gossip.VerifiedAnnouncement{
		Sender: gossip.Sender{Peer: f.peer, Machine: f.mach, Backend: "tpm-sim", Received: clk.Now()},
		Announcement: gossip.Announcement{MachineID: f.mach[:], Region: "DE", HardwareClass: "a100",
			Models: []gossip.ModelOffer{{ModelID: make([]byte, 32), Name: "m", Verification: []terms.Verification{"none"}}}},
	})
	return f
}

func (f *fixture) beat(degraded bool) {
	f.seq++
	f.table.ApplyHeartbeat(&gossip.VerifiedHeartbeat{
		Sender:    gossip.Sender{Peer: f.peer, Machine: f.mach, Backend: "tpm-sim", Received: f.clk.Now()},
		Heartbeat: gossip.Heartbeat{MachineID: f.mach[:], Seq: f.seq, Degraded: degraded, Capacity: 4},
	})
}

func (f *fixture) want(t *testing.T, s Status) {
	t.Helper()
	if got := f.table.Status(f.peer); got != s {
		t.Fatalf("at +%s: status %s, want %s", f.clk.Now().Sub(time.Unix(1_800_000_000, 0)), got, s)
	}
}

func TestDownAfterThreeMissedHeartbeats(t *testing.T) {
	f := newFixture(t)
	f.want(t, StatusDown) // announced, never heartbeated
	f.beat(false)
	f.want(t, StatusUp)
	f.clk.Add(DownAfter)
	f.want(t, StatusUp) // exactly 6 s: still up
	f.clk.Add(time.Millisecond)
	f.want(t, StatusDown)
	f.beat(false)
	f.want(t, StatusUp) // back at its next clean heartbeat
}

func TestRegularHeartbeatsKeepItUp(t *testing.T) {
	f := newFixture(t)
	for i := 0; i < 20; i++ {
		f.beat(false)
		f.clk.Add(HeartbeatInterval)
		f.want(t, StatusUp)
	}
}

func TestDegradedIsDownUntilNextCleanHeartbeat(t *testing.T) {
	f := newFixture(t)
	f.beat(false)
	f.clk.Add(time.Second)
	f.beat(true)
	f.want(t, StatusDegraded)
	f.clk.Add(HeartbeatInterval)
	f.beat(true)
	f.want(t, StatusDegraded)
	f.clk.Add(DownAfter + time.Second)
	f.want(t, StatusDown) // degraded heartbeats stopped too
	f.beat(false)
	f.want(t, StatusUp)
}

func TestSweepReportsTransitions(t *testing.T) {
	f := newFixture(t)
	f.beat(false)
	if ch := f.table.Sweep(); ch[f.peer] != StatusUp {
		t.Fatalf("sweep after first heartbeat: %v", ch)
	}
	if ch := f.table.Sweep(); len(ch) != 0 {
		t.Fatalf("sweep without change: %v", ch)
	}
	f.clk.Add(DownAfter + time.Millisecond)
	if ch := f.table.Sweep(); ch[f.peer] != StatusDown {
		t.Fatalf("sweep after silence: %v", ch)
	}
}

func TestListShowsClaimsAndLoad(t *testing.T) {
	f := newFixture(t)
	f.beat(false)
	f.clk.Add(1500 * time.Millisecond)
	vs := f.table.List()
	if len(vs) != 1 {
		t.Fatalf("%d providers", len(vs))
	}
	v := vs[0]
	if v.HardwareClass != (Claimed{Value: "a100", Claimed: true}) || v.KeyBackend != "tpm-sim" || v.Region != "DE" ||
		v.HeartbeatAge != 1500 || v.Capacity != 4 || v.Status != StatusUp || v.Source != "gossip" || v.Models[0].State != "unknown" {
		t.Fatalf("view: %+v", v)
	}
}

func TestStaleHeartbeatDoesNotRewind(t *testing.T) {
	f := newFixture(t)
	f.beat(false)
	f.beat(false)
	last := f.seq
	f.clk.Add(DownAfter + time.Second)
	f.table.ApplyHeartbeat(&gossip.VerifiedHeartbeat{
		Sender:    gossip.Sender{Peer: f.peer, Machine: f.mach, Received: f.clk.Now()},
		Heartbeat: gossip.Heartbeat{MachineID: f.mach[:], Seq: last - 1},
	})
	f.want(t, StatusDown)
}

// TestRegistryMarksProviders: with a registry, a provider registered to
// the machine it announced is listed registered with its standing; one
// not registered (or registered to another machine) is listed as such,
// its offers marked unregistered with standing 0; without a registry
// neither field is shown.
func TestRegistryMarksProviders(t *testing.T) {
	f := newFixture(t)
	if v := f.table.List()[0]; v.Registered != nil || v.StandingBP != nil {
		t.Fatalf("without a chain: registered %v standing %v", v.Registered, v.StandingBP)
	}
	if o := f.table.Offers("m")[0]; o.Unregistered || o.StandingKnown {
		t.Fatalf("without a chain: offer %+v", o)
	}
	reg := routertest.NewRegistry()
	reg.Standing[f.mach] = 8123
	f.table.SetRegistry(reg)
	if v := f.table.List()[0]; v.Registered == nil || *v.Registered || v.StandingBP != nil {
		t.Fatalf("unregistered: registered %v standing %v", v.Registered, v.StandingBP)
	}
	if o := f.table.Offers("m")[0]; !o.Unregistered || !o.StandingKnown || o.Standing != 0 {
		t.Fatalf("unregistered offer %+v", o)
	}
	reg.Machines[f.peer] = identity.MachineID{8} // registered, but to another machine
	if v, _ := f.table.Get(f.peer); v.Registered == nil || *v.Registered {
		t.Fatalf("peer registered to another machine listed registered")
	}
	reg.Machines[f.peer] = f.mach
	v, _ := f.table.Get(f.peer)
	if v.Registered == nil || !*v.Registered || v.StandingBP == nil || *v.StandingBP != 8123 {
		t.Fatalf("registered: registered %v standing %v", v.Registered, v.StandingBP)
	}
	if o := f.table.Offers("m")[0]; o.Unregistered || !o.StandingKnown || o.Standing != 8123 {
		t.Fatalf("registered offer %+v", o)
	}
}
