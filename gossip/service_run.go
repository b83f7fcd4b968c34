package gossip

import (
	"context"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"time"

	pubsub "github.com/libp2p/go-libp2p-pubsub"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/cborx"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// OnHeartbeat sets the handler of accepted heartbeats; call before Start.
func (s *Service) OnHeartbeat(fn func(*VerifiedHeartbeat)) { s.onHeartbeat = fn }

// OnAnnouncement sets the handler of accepted announcements; call before Start.
func (s *Service) OnAnnouncement(fn func(*VerifiedAnnouncement)) { s.onAnnouncement = fn }

// OnPriceObs sets the handler of accepted price observations; call before Start.
func (s *Service) OnPriceObs(fn func(*VerifiedPriceObs)) { s.onPriceObs = fn }

// OnPeerJoin sets a handler called when a peer starts subscribing to
// kind's topic (a node that just joined the network, say); call before
// Start. A provider uses it to announce at once instead of leaving the
// newcomer without its offers until the next periodic announcement.
func (s *Service) OnPeerJoin(kind Kind, fn func(peer.ID)) {
	if s.onPeerJoin == nil {
		s.onPeerJoin = map[Kind]func(peer.ID){}
	}
	s.onPeerJoin[kind] = fn
}

// Start delivers accepted messages to the handlers until Stop.
func (s *Service) Start(ctx context.Context) error {
	ctx, s.cancel = context.WithCancel(context.WithoutCancel(ctx))
	for kind, fn := range s.onPeerJoin {
		t := s.topics[kind]
		if t == nil {
			continue
		}
		h, err := t.EventHandler()
		if err != nil {
			return fmt.Errorf("gossip: peer events of %s: %w", kind, err)
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer h.Cancel()
			for {
				ev, err := h.NextPeerEvent(ctx)
				if err != nil {
					return
				}
				if ev.Type == pubsub.PeerJoin {
					s.peerJoined(kind, fn, ev.Peer)
				}
			}
		}()
	}
	for kind, sub := range s.subs {
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			for {
				msg, err := sub.Next(ctx)
				if err != nil {
					return
				}
				s.deliver(kind, msg.ValidatorData)
			}
		}()
	}
	return nil
}

// recovered, deferred around a handler call, turns its panic into a
// logged and counted error. The handler loses that one event (Prysm's
// subscriber does the same) and the topic's loop keeps serving: a bug in
// one consumer must not take the node down.
func (s *Service) recovered(kind Kind) {
	if p := recover(); p != nil {
		name := TopicName(s.cfg.Network, kind)
		s.metrics.panics.WithLabelValues(name).Inc()
		s.log.Error("gossip handler panicked", "topic", name, "panic", p, "stack", string(debug.Stack()))
	}
}

// peerJoined calls a peer-join handler under the same panic isolation.
func (s *Service) peerJoined(kind Kind, fn func(peer.ID), p peer.ID) {
	defer s.recovered(kind)
	fn(p)
}

// deliver hands an accepted message to its handler.
func (s *Service) deliver(kind Kind, v any) {
	defer s.recovered(kind)
	switch kind {
	case KindHeartbeat:
		if hb, ok := v.(*VerifiedHeartbeat); ok && s.onHeartbeat != nil {
			s.onHeartbeat(hb)
		}
	case KindAnnounce:
		if an, ok := v.(*VerifiedAnnouncement); ok && s.onAnnouncement != nil {
			s.onAnnouncement(an)
		}
	case KindPriceObs:
		if o, ok := v.(*VerifiedPriceObs); ok && s.onPriceObs != nil {
			s.onPriceObs(o)
		}
	}
}

// Stop cancels subscriptions and leaves the topics.
func (s *Service) Stop(context.Context) error {
	if s.cancel != nil {
		s.cancel()
	}
	for _, sub := range s.subs {
		sub.Cancel()
	}
	s.wg.Wait()
	var errs []error
	for _, t := range s.topics {
		if err := t.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Publish seals msg with the session key under kind's domain and publishes
// it. The local validator runs first, so an invalid message is refused here.
func (s *Service) Publish(ctx context.Context, sess *identity.Session, kind Kind, msg any) error {
	spec, ok := Spec(kind)
	if !ok {
		return fmt.Errorf("gossip: unknown kind %q", kind)
	}
	payload, err := cborx.Marshal(msg)
	if err != nil {
		return fmt.Errorf("gossip: %s: %w", kind, err)
	}
	env, err := sess.Seal(spec.Domain, spec.PayloadType, payload)
	if err != nil {
		return fmt.Errorf("gossip: seal %s: %w", kind, err)
	}
	data, err := env.Marshal()
	if err != nil {
		return fmt.Errorf("gossip: encode %s: %w", kind, err)
	}
	if err := s.topics[kind].Publish(ctx, data); err != nil {
		return fmt.Errorf("gossip: publish %s: %w", kind, err)
	}
	return nil
}

// TopicInfo describes one joined topic.
type TopicInfo struct {
	Topic    string `json:"topic"`
	Kind     Kind   `json:"kind"`
	Peers    int    `json:"peers"`
	Accepted uint64 `json:"accepted"`
	Ignored  uint64 `json:"ignored"`
	Rejected uint64 `json:"rejected"`
}

// Topics lists joined topics with their peer counts and verdict totals.
func (s *Service) Topics() []TopicInfo {
	out := make([]TopicInfo, 0, len(s.topics))
	for kind, t := range s.topics {
		a, i, r := s.metrics.Counts(t.String())
		out = append(out, TopicInfo{Topic: t.String(), Kind: kind, Peers: len(t.ListPeers()), Accepted: a, Ignored: i, Rejected: r})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Topic < out[j].Topic })
	return out
}

// Tap returns the recent validation events.
func (s *Service) Tap() *Tap { return s.tap }

// Validator returns the topic validators' shared state.
func (s *Service) Validator() *Validator { return s.validator }

// Network returns the network name the topics belong to.
func (s *Service) Network() string { return s.cfg.Network }

// ValidationTime returns the wall time this node's validators of kind
// have taken since it started.
func (s *Service) ValidationTime(kind Kind) time.Duration {
	return s.metrics.ValidationTime(TopicName(s.cfg.Network, kind))
}
