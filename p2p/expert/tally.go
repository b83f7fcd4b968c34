package expert

import (
	"context"
	"crypto/sha256"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// Tally is one call's account of remote experts: what each holder did
// for it (verified exchanges only) and how often a holder was retired.
// The serving node pays each holder from it and reports it in the
// response.
type Tally struct {
	mu    sync.Mutex
	order []peer.ID
	by    map[peer.ID]*HolderUsage
}

// HolderUsage is one holder's verified work for one call.
type HolderUsage struct {
	Holder       peer.ID
	Machine      identity.MachineID
	Price        uint64   // per expert-token, micro-units
	Batches      int      // verified exchanges (one per layer per forward pass)
	ExpertTokens uint64   // rows computed
	Retired      int      // exchanges retired (late, refused, unverifiable)
	Receipts     [][]byte // the receipt envelopes, in order
	// Sampled are the hashes of the receipts some batch of which the
	// caller's Sampler stored for re-execution: a dispute over such a
	// batch needs the record paying for the call (Binding).
	Sampled [][32]byte
}

// ReceiptsHash is SHA-256 over the SHA-256 of each receipt in order: what
// a payment record to the holder carries.
func (u *HolderUsage) ReceiptsHash() [32]byte {
	h := sha256.New()
	for _, r := range u.Receipts {
		d := sha256.Sum256(r)
		h.Write(d[:])
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

type tallyKey struct{}

// WithTally returns ctx carrying t: the Caller accounts every exchange of
// forward passes run under it there.
func WithTally(ctx context.Context, t *Tally) context.Context {
	return context.WithValue(ctx, tallyKey{}, t)
}

// TallyFrom returns the Tally of ctx, or nil.
func TallyFrom(ctx context.Context) *Tally {
	t, _ := ctx.Value(tallyKey{}).(*Tally)
	return t
}

func (t *Tally) entry(h Holder) *HolderUsage {
	if t.by == nil {
		t.by = map[peer.ID]*HolderUsage{}
	}
	u := t.by[h.Peer]
	if u == nil {
		u = &HolderUsage{Holder: h.Peer, Machine: h.Machine, Price: h.Price}
		t.by[h.Peer] = u
		t.order = append(t.order, h.Peer)
	}
	return u
}

func (t *Tally) add(h Holder, batches, tokens int, receipt []byte) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	u := t.entry(h)
	u.Batches++
	u.ExpertTokens += uint64(tokens)
	u.Receipts = append(u.Receipts, receipt)
}

// sampled marks the receipt (already added) as having a sampled batch.
func (t *Tally) sampled(h Holder, receipt []byte) {
	if t == nil {
		return
	}
	d := sha256.Sum256(receipt)
	t.mu.Lock()
	defer t.mu.Unlock()
	u := t.entry(h)
	if !slices.Contains(u.Sampled, d) {
		u.Sampled = append(u.Sampled, d)
	}
}

func (t *Tally) failed(h Holder) {
	if t == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.entry(h).Retired++
}

// Record adds u to the tally as one holder's work (a caller restoring a
// tally, or a test building one): its counts add to the holder's.
func (t *Tally) Record(u HolderUsage) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e := t.entry(Holder{Peer: u.Holder, Machine: u.Machine, Price: u.Price})
	e.Batches += u.Batches
	e.ExpertTokens += u.ExpertTokens
	e.Retired += u.Retired
	e.Receipts = append(e.Receipts, u.Receipts...)
	e.Sampled = append(e.Sampled, u.Sampled...)
}

// Holders returns a copy of each holder's usage, in order of first use.
func (t *Tally) Holders() []HolderUsage {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]HolderUsage, 0, len(t.order))
	for _, p := range t.order {
		u := *t.by[p]
		u.Receipts = append([][]byte(nil), u.Receipts...)
		u.Sampled = append([][32]byte(nil), u.Sampled...)
		out = append(out, u)
	}
	return out
}

// CallerStats counts what a Caller did since it was made.
type CallerStats struct {
	Layers       uint64            // Layer calls (one per MoE layer per forward pass)
	Exchanges    uint64            // verified exchanges
	ExpertTokens uint64            // rows computed remotely and verified
	NoHolder     uint64            // batches failed for want of a holder
	Sampled      uint64            // verified batches handed over for re-execution
	RedoTokens   uint64            // rows other holders recomputed for re-execution (Redo)
	BytesSent    uint64            // request frame bytes
	BytesRecv    uint64            // response frame bytes
	Failures     map[string]uint64 // retired exchanges by reason (Reason*)
}

type callerStats struct {
	layers, exchanges, tokens, noHolder, sent, recv atomic.Uint64
	sampledN, redoTokens                            atomic.Uint64
	m                                               *Metrics // nil: not exported

	mu       sync.Mutex
	failures map[string]uint64
}

func newCallerStats(m *Metrics) *callerStats {
	return &callerStats{failures: map[string]uint64{}, m: m}
}

func (s *callerStats) failure(reason string) {
	s.mu.Lock()
	s.failures[reason]++
	s.mu.Unlock()
	if s.m != nil {
		s.m.Retired.WithLabelValues(reason).Inc()
	}
}

func (s *callerStats) exchange(tokens int) {
	s.exchanges.Add(1)
	s.tokens.Add(uint64(tokens))
	if s.m != nil {
		s.m.Exchanges.Inc()
		s.m.ExpertTokens.Add(float64(tokens))
	}
}

func (s *callerStats) missing() {
	s.noHolder.Add(1)
	if s.m != nil {
		s.m.NoHolder.Inc()
	}
}

func (s *callerStats) sampled() {
	s.sampledN.Add(1)
	if s.m != nil {
		s.m.Sampled.Inc()
	}
}

func (s *callerStats) wire(w Wire) {
	s.sent.Add(uint64(w.Sent))
	s.recv.Add(uint64(w.Received))
	if s.m != nil {
		s.m.WireBytes.WithLabelValues("sent").Add(float64(w.Sent))
		s.m.WireBytes.WithLabelValues("received").Add(float64(w.Received))
	}
}

// Stats returns the caller's counters.
func (c *Caller) Stats() CallerStats {
	s := c.stats
	s.mu.Lock()
	f := maps.Clone(s.failures)
	s.mu.Unlock()
	return CallerStats{Layers: s.layers.Load(), Exchanges: s.exchanges.Load(), ExpertTokens: s.tokens.Load(),
		NoHolder: s.noHolder.Load(), Sampled: s.sampledN.Load(), RedoTokens: s.redoTokens.Load(), BytesSent: s.sent.Load(), BytesRecv: s.recv.Load(), Failures: f}
}
