package gossip

import (
	"cmp"
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/filecoin-project/go-clock"
	pubsub "github.com/libp2p/go-libp2p-pubsub"
	pb "github.com/libp2p/go-libp2p-pubsub/pb"
	"github.com/libp2p/go-libp2p/core/discovery"
	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/tenzrod/tenzrod/internal/logbridge"
	"github.com/tenzrod/tenzrod/receipts/attest"
)

// Deps are the service's collaborators.
type Deps struct {
	Host       host.Host
	Discovery  discovery.Discovery // optional: finds topic peers beyond bootstrap
	Pins       Pins                // nil means first-seen pinning
	Validators ValidatorSet        // nil: price observations are ignored
	Clock      clock.Clock         // nil means the wall clock
	Registerer prometheus.Registerer
	Logger     *slog.Logger
	// Attest is what announced TEE attestations are verified against
	// (nil: AMD's roots, no CRL, no minimum TCB).
	Attest *attest.Policy
	// PubSubOptions are appended to the router's options (a tracer that
	// counts wire bytes, in the scale harness).
	PubSubOptions []pubsub.Option
	// SubscriptionBuffer overrides the subscriptions' buffer size (0 means
	// SubscriptionBuffer; the scale harness compares with the library's).
	SubscriptionBuffer int
}

// Service joins the tenzro topics, validates what arrives and hands accepted
// messages to handlers.
type Service struct {
	cfg       Config
	log       *slog.Logger
	ps        *pubsub.PubSub
	validator *Validator
	metrics   *Metrics
	tap       *Tap
	scores    atomic.Pointer[map[peer.ID]float64] // last snapshot of the router's peer scores

	topics map[Kind]*pubsub.Topic
	subs   map[Kind]*pubsub.Subscription
	subBuf int

	onHeartbeat    func(*VerifiedHeartbeat)
	onAnnouncement func(*VerifiedAnnouncement)
	onPriceObs     func(*VerifiedPriceObs)
	onPeerJoin     map[Kind]func(peer.ID)

	cancel context.CancelFunc
	wg     sync.WaitGroup
}

// MessageID is content addressing: identical bytes are one message,
// whoever forwards them.
func MessageID(m *pb.Message) string {
	h := sha256.Sum256(m.Data)
	return string(h[:])
}

// New creates the pubsub router and joins every topic of the table.
func New(ctx context.Context, cfg Config, d Deps) (*Service, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if d.Pins == nil {
		d.Pins = NewFirstSeenPins()
	}
	if d.Logger == nil {
		d.Logger = slog.Default()
	}
	names := make([]string, 0, len(Topics))
	maxSize := 0
	for _, s := range Topics {
		names = append(names, TopicName(cfg.Network, s.Kind))
		maxSize = max(maxSize, s.MaxSize)
	}
	params, thresholds := scoreParams(names)
	m, err := newMetrics(d.Registerer, names)
	if err != nil {
		return nil, fmt.Errorf("gossip: metrics: %w", err)
	}
	// The service exists before the router, whose score inspector it is.
	s := &Service{
		cfg:       cfg,
		log:       d.Logger.With("component", "gossip"),
		validator: NewValidator(cfg.Network, cfg.Window, d.Clock, d.Pins),
		metrics:   m,
		tap:       NewTap(2048),
		topics:    make(map[Kind]*pubsub.Topic),
		subs:      make(map[Kind]*pubsub.Subscription),
		subBuf:    cmp.Or(d.SubscriptionBuffer, SubscriptionBuffer),
	}
	opts := []pubsub.Option{
		pubsub.WithMessageSignaturePolicy(pubsub.StrictNoSign),
		pubsub.WithNoAuthor(),
		pubsub.WithMessageIdFn(MessageID),
		pubsub.WithPeerScore(params, thresholds),
		pubsub.WithPeerScoreInspect(s.storeScores, scoreInspectPeriod),
		pubsub.WithMaxMessageSize(maxSize + 1024),
		pubsub.WithPeerExchange(true),
		pubsub.WithValidateQueueSize(ValidateQueue),
		pubsub.WithPeerOutboundQueueSize(OutboundQueue),
		pubsub.WithLogger(logbridge.Logger(d.Logger.Handler(), "pubsub").With("id", d.Host.ID().String())),
	}
	if d.Discovery != nil {
		opts = append(opts, pubsub.WithDiscovery(d.Discovery))
	}
	opts = append(opts, d.PubSubOptions...)
	if s.ps, err = pubsub.NewGossipSub(ctx, d.Host, opts...); err != nil {
		return nil, fmt.Errorf("gossip: start gossipsub: %w", err)
	}
	if d.Validators != nil {
		s.validator.SetValidatorSet(d.Validators)
	}
	s.validator.SetAttestPolicy(d.Attest)
	for _, spec := range Topics {
		if err := s.join(spec.Kind); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Router queue sizes. go-libp2p-pubsub's defaults (32 messages each)
// hold about 50 ms of a 1,000-provider network's heartbeats and
// announcements (600 unique messages/s, each also arriving from more than
// one mesh peer): a node descheduled for longer — a GC cycle, a busy
// core — dropped messages, and dropped heartbeats marked live providers
// down (docs/SCALE.md). ValidateQueue and SubscriptionBuffer hold seconds
// of 1,000 providers' traffic and most of a second of 10,000's;
// OutboundQueue is per peer, so it stays smaller: a peer that cannot take
// a second of traffic is better dropped than buffered.
const (
	ValidateQueue      = 4096
	OutboundQueue      = 1024
	SubscriptionBuffer = 4096
)

// scoreInspectPeriod is how often the router's peer scores are copied for
// PeerScore.
const scoreInspectPeriod = time.Second

func (s *Service) storeScores(m map[peer.ID]float64) { s.scores.Store(&m) }

// PeerScore returns the router's score of p as of its last snapshot (at most
// scoreInspectPeriod old); false when p has no score (not connected).
func (s *Service) PeerScore(p peer.ID) (float64, bool) {
	m := s.scores.Load()
	if m == nil {
		return 0, false
	}
	v, ok := (*m)[p]
	return v, ok
}

func (s *Service) validateFn(kind Kind) ValidateFunc {
	switch kind {
	case KindHeartbeat:
		return s.validator.ValidateHeartbeat
	case KindAnnounce:
		return s.validator.ValidateAnnouncement
	case KindPriceObs:
		return s.validator.ValidatePriceObs
	}
	panic(fmt.Sprintf("gossip: no validator for %q", kind))
}

func (s *Service) join(kind Kind) error {
	name := TopicName(s.cfg.Network, kind)
	validate := s.validateFn(kind)
	fn := func(ctx context.Context, from peer.ID, m *pubsub.Message) pubsub.ValidationResult {
		start := time.Now()
		res := guard(ctx, from, m.Data, validate, validateTimeout)
		s.metrics.observe(name, res, time.Since(start))
		ev := Event{Time: time.Now().UTC(), Topic: name, Kind: kind, Verdict: res.Verdict.String(),
			Reason: res.Reason, ReceivedFrom: from.String(), Message: res.Message}
		if res.Err != nil {
			ev.Error = res.Err.Error()
		}
		s.tap.record(ev)
		switch {
		case res.Reason == ReasonPanic:
			s.log.Error("gossip validator panicked", "topic", name, "from", from, "err", res.Err)
		case res.Verdict == Reject:
			s.log.Debug("gossip message rejected", "topic", name, "from", from, "reason", res.Reason, "err", res.Err)
		}
		if res.Verdict == Accept {
			m.ValidatorData = res.Value
		}
		return res.Verdict.pubsub()
	}
	if err := s.ps.RegisterTopicValidator(name, fn); err != nil {
		return fmt.Errorf("gossip: validator for %s: %w", name, err)
	}
	t, err := s.ps.Join(name)
	if err != nil {
		return fmt.Errorf("gossip: join %s: %w", name, err)
	}
	sub, err := t.Subscribe(pubsub.WithBufferSize(s.subBuf))
	if err != nil {
		return fmt.Errorf("gossip: subscribe %s: %w", name, err)
	}
	s.topics[kind] = t
	s.subs[kind] = sub
	return nil
}
