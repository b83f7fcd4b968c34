package gossip

import (
	"fmt"
	"strings"
)

// Kind names a gossip message kind independently of the network.
type Kind string

const (
	KindHeartbeat Kind = "heartbeat"
	KindAnnounce  Kind = "announce"
	KindPriceObs  Kind = "price-obs"
)

// TopicSpec is one row of the versioned topic table.
type TopicSpec struct {
	Kind        Kind
	Version     int
	Domain      string // envelope signing domain; distinct per kind
	PayloadType string
	MaxSize     int // cap on the whole pubsub message, envelope included
}

// Topics is the single table of gossip topics. A change to a message's
// encoding or rules bumps its Version (and so its topic string).
var Topics = []TopicSpec{
	{Kind: KindHeartbeat, Version: 1, Domain: "tenzro/v1/heartbeat", PayloadType: "tenzro.heartbeat.v1", MaxSize: 16 << 10},
	{Kind: KindAnnounce, Version: 1, Domain: "tenzro/v1/announce", PayloadType: "tenzro.announce.v1", MaxSize: 64 << 10},
	{Kind: KindPriceObs, Version: 1, Domain: "tenzro/v1/price-obs", PayloadType: "tenzro.price-obs.v1", MaxSize: 8 << 10},
}

// Spec returns the table row for kind.
func Spec(kind Kind) (TopicSpec, bool) {
	for _, s := range Topics {
		if s.Kind == kind {
			return s, true
		}
	}
	return TopicSpec{}, false
}

// TopicName is the pubsub topic string of kind on network, e.g.
// "/tenzro/devnet/heartbeat/1".
func TopicName(network string, kind Kind) string {
	s, ok := Spec(kind)
	if !ok {
		panic(fmt.Sprintf("gossip: kind %q missing from topic table", kind))
	}
	return fmt.Sprintf("/tenzro/%s/%s/%d", network, s.Kind, s.Version)
}

// ParseTopic resolves a short kind name ("heartbeat") or a full topic string
// on network to its kind.
func ParseTopic(network, name string) (Kind, error) {
	for _, s := range Topics {
		if name == string(s.Kind) || name == TopicName(network, s.Kind) {
			return s.Kind, nil
		}
	}
	known := make([]string, 0, len(Topics))
	for _, s := range Topics {
		known = append(known, string(s.Kind))
	}
	return "", fmt.Errorf("gossip: unknown topic %q (known: %s)", name, strings.Join(known, ", "))
}
