package gossip

import (
	"net"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
)

// Peer scoring: invalid messages (Reject) cost a peer heavily and decay
// slowly; time in the mesh and first deliveries earn a little. Mesh delivery
// rate penalties stay off because heartbeats are sparse (one per provider
// every 2 s) and an honest mesh peer may legitimately forward few of them.
func scoreParams(topics []string) (*pubsub.PeerScoreParams, *pubsub.PeerScoreThresholds) {
	_, loop4, _ := net.ParseCIDR("127.0.0.0/8")
	_, loop6, _ := net.ParseCIDR("::1/128")
	p := &pubsub.PeerScoreParams{
		Topics:                      make(map[string]*pubsub.TopicScoreParams, len(topics)),
		TopicScoreCap:               50,
		AppSpecificScore:            func(peer.ID) float64 { return 0 },
		AppSpecificWeight:           1,
		IPColocationFactorWeight:    -5,
		IPColocationFactorThreshold: 8,
		IPColocationFactorWhitelist: []*net.IPNet{loop4, loop6},
		BehaviourPenaltyWeight:      -10,
		BehaviourPenaltyThreshold:   6,
		BehaviourPenaltyDecay:       pubsub.ScoreParameterDecay(10 * time.Minute),
		DecayInterval:               time.Second,
		DecayToZero:                 0.01,
		RetainScore:                 10 * time.Minute,
	}
	for _, t := range topics {
		p.Topics[t] = &pubsub.TopicScoreParams{
			TopicWeight:                    1,
			TimeInMeshWeight:               0.01,
			TimeInMeshQuantum:              time.Second,
			TimeInMeshCap:                  300,
			FirstMessageDeliveriesWeight:   0.5,
			FirstMessageDeliveriesDecay:    pubsub.ScoreParameterDecay(10 * time.Minute),
			FirstMessageDeliveriesCap:      20,
			InvalidMessageDeliveriesWeight: -100,
			InvalidMessageDeliveriesDecay:  pubsub.ScoreParameterDecay(time.Hour),
		}
	}
	th := &pubsub.PeerScoreThresholds{
		GossipThreshold:             -100,
		PublishThreshold:            -500,
		GraylistThreshold:           -1000,
		AcceptPXThreshold:           10,
		OpportunisticGraftThreshold: 3,
	}
	return p, th
}
