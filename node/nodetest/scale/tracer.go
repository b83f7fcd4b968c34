package scale

import (
	"sync"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
	"google.golang.org/protobuf/proto"
)

// wire counts what one node's GossipSub router receives: published
// messages and their bytes per topic (duplicates included, as they cost
// the wire and the router), the control traffic, and the messages the
// router dropped before or after validation.
type wire struct {
	mu       sync.Mutex
	msgs     map[string]uint64
	bytes    map[string]uint64
	dups     map[string]uint64
	control  uint64 // bytes of RPCs beyond their published messages
	rejected map[string]uint64
}

// controlTopic labels the control traffic (IHAVE, IWANT, GRAFT, PRUNE,
// subscriptions) in the per-topic figures.
const controlTopic = "control"

func newWire() *wire {
	return &wire{msgs: map[string]uint64{}, bytes: map[string]uint64{}, dups: map[string]uint64{}, rejected: map[string]uint64{}}
}

// counts is a copy of the counters at one moment.
type counts struct {
	msgs, bytes, dups, rejected map[string]uint64
	control                     uint64
}

func (w *wire) snapshot() counts {
	w.mu.Lock()
	defer w.mu.Unlock()
	cp := func(m map[string]uint64) map[string]uint64 {
		out := make(map[string]uint64, len(m))
		for k, v := range m {
			out[k] = v
		}
		return out
	}
	return counts{msgs: cp(w.msgs), bytes: cp(w.bytes), dups: cp(w.dups), rejected: cp(w.rejected), control: w.control}
}

func (w *wire) RecvRPC(rpc *pubsub.RPC) {
	total := uint64(proto.Size(&rpc.RPC))
	w.mu.Lock()
	defer w.mu.Unlock()
	var pub uint64
	for _, m := range rpc.GetPublish() {
		n := uint64(proto.Size(m))
		pub += n
		w.msgs[m.GetTopic()]++
		w.bytes[m.GetTopic()] += n
	}
	if total > pub {
		w.control += total - pub
	}
}

func (w *wire) DuplicateMessage(m *pubsub.Message) {
	w.mu.Lock()
	w.dups[m.GetTopic()]++
	w.mu.Unlock()
}

func (w *wire) RejectMessage(m *pubsub.Message, reason string) {
	// Verdicts of the topic validators are counted by the gossip service;
	// these are the router's own drops, the sign of a node falling behind.
	switch reason {
	case pubsub.RejectValidationQueueFull, pubsub.RejectValidationThrottled:
		w.mu.Lock()
		w.rejected[reason]++
		w.mu.Unlock()
	}
}

func (w *wire) UndeliverableMessage(m *pubsub.Message) {
	w.mu.Lock()
	w.rejected["undeliverable"]++
	w.mu.Unlock()
}

func (w *wire) DropRPC(*pubsub.RPC, peer.ID) {
	w.mu.Lock()
	w.rejected["rpc_dropped"]++
	w.mu.Unlock()
}

func (*wire) OnNewOutboundStream(peer.ID, protocol.ID)             {}
func (*wire) OnClosedOutboundStream(peer.ID)                       {}
func (*wire) AddPeer(peer.ID, protocol.ID)                         {}
func (*wire) RemovePeer(peer.ID)                                   {}
func (*wire) Join(string)                                          {}
func (*wire) Leave(string)                                         {}
func (*wire) Graft(peer.ID, string)                                {}
func (*wire) Prune(peer.ID, string)                                {}
func (*wire) ValidateMessage(*pubsub.Message)                      {}
func (*wire) DeliverMessage(*pubsub.Message)                       {}
func (*wire) ThrottlePeer(peer.ID)                                 {}
func (*wire) SendRPC(*pubsub.RPC, peer.ID)                         {}
func (*wire) SendRPCCompleted(*pubsub.RPC, peer.ID, time.Duration) {}
