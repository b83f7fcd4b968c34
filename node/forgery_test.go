package node

import (
	"context"
	"strings"
	"testing"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/node/nodetest"
	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/hwkey"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestForgedGossipIsDroppedOverTheNetwork publishes, from a rogue host with
// no topic validators of its own, a correctly signed announcement whose
// region is finer than a country. The honest node must reject it (counted
// in /metrics by reason, shown by the tap) and never list the rogue.
func TestForgedGossipIsDroppedOverTheNetwork(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	honest := startNode(t, testConfig(t, RoleValidator, "software", nil))

	rogueHost := newRogueHost(t, func(pc *p2p.Config) { pc.Bootstrap = honest.Host().Addrs()[:1] })
	ps, err := pubsub.NewGossipSub(ctx, rogueHost.Host(), pubsub.WithMessageSignaturePolicy(pubsub.StrictNoSign),
		pubsub.WithNoAuthor(), pubsub.WithMessageIdFn(gossip.MessageID))
	if err != nil {
		t.Fatal(err)
	}
	topicName := gossip.TopicName("test", gossip.KindAnnounce)
	topic, err := ps.Join(topicName)
	if err != nil {
		t.Fatal(err)
	}

	id, err := identity.Open(hwkey.Config{Backend: hwkey.BackendSoftware, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer id.Close()
	sess, err := id.IssueSession(rogueHost.Host().Peerstore().PrivKey(rogueHost.ID()), time.Now().Add(-time.Minute), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	m := id.MachineID()
	spec, _ := gossip.Spec(gossip.KindAnnounce)

	nodetest.Eventually(t, 20*time.Second, "the rogue to join the honest node's announce mesh", func() bool {
		return len(topic.ListPeers()) > 0
	})
	var seq uint64 = 1
	nodetest.Eventually(t, 20*time.Second, "a rejection at the honest node", func() bool {
		seq++
		an := &gossip.Announcement{MachineID: m[:], Seq: seq, TimeMs: time.Now().UnixMilli(), Region: "US-CA",
			HardwareClass: "h100", Capacity: 1, Models: []gossip.ModelOffer{{ModelID: testModel[:], Name: "x",
				WeightsHash: testModel[:], Engine: "e", Verification: []terms.Verification{"none"}}}}
		payload, _ := cborx.Marshal(an)
		env, err := sess.Seal(spec.Domain, spec.PayloadType, payload)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := env.Marshal()
		if err := topic.Publish(ctx, data); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		_, _, rejected := honestCounts(honest, topicName)
		return rejected > 0
	})

	_, body := send(t, honest.APIURL()+"/metrics", "", "")
	want := `tenzro_gossip_messages_total{reason="region_too_fine",topic="` + topicName + `",verdict="reject"}`
	if !strings.Contains(body, want) {
		t.Fatalf("/metrics lacks %s", want)
	}
	events, _ := honest.Gossip().Tap().Since(ctx, 1, gossip.KindAnnounce, 100, 0)
	if len(events) == 0 || events[len(events)-1].Reason != gossip.ReasonRegionTooFine || events[len(events)-1].Verdict != "reject" {
		t.Fatalf("tap events: %+v", events)
	}
	if _, ok := honest.Table().Get(rogueHost.ID()); ok {
		t.Fatalf("rogue provider listed")
	}
}

func honestCounts(n *Node, topic string) (uint64, uint64, uint64) {
	for _, ti := range n.Gossip().Topics() {
		if ti.Topic == topic {
			return ti.Accepted, ti.Ignored, ti.Rejected
		}
	}
	return 0, 0, 0
}
