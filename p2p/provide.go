package p2p

import (
	"context"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/ipfs/go-cid"
	"github.com/libp2p/go-libp2p/core/peer"
	mh "github.com/multiformats/go-multihash"
)

// defaultMaxProviders is used by FindModelProviders when max <= 0;
// maxProviders caps larger requests.
const (
	defaultMaxProviders = 20
	maxProviders        = 1 << 12
)

// ModelCID returns the DHT key of a catalog model: a CIDv1 with codec raw
// whose multihash is sha2-256 with the model ID itself as the digest. The
// model ID (a SHA-256 Merkle root) is not hashed again.
func ModelCID(modelID [32]byte) cid.Cid {
	digest, err := mh.Encode(modelID[:], mh.SHA2_256)
	if err != nil {
		// Encode only fails for unknown codes or a digest length that does
		// not fit the code; sha2-256 with 32 bytes is always valid.
		panic(fmt.Sprintf("p2p: encode model multihash: %v", err))
	}
	return cid.NewCidV1(cid.Raw, digest)
}

// provideState tracks one model this host provides.
type provideState struct {
	next  time.Time // when the background loop announces it next
	fails int       // consecutive failed announcements
}

// ProvideModel announces this host as a provider of modelID on the DHT and
// keeps announcing it: every few minutes (so records stay fresh on peers that
// joined since) and, after a failure, with a back-off starting at a few
// seconds. It waits for a non-empty routing table first, bounded by ctx and
// one minute. The error reports this first announcement only; the model stays
// registered either way.
func (h *Host) ProvideModel(ctx context.Context, modelID [32]byte) error {
	h.mu.Lock()
	switch h.state {
	case stateNew:
		h.mu.Unlock()
		return ErrNotStarted
	case stateStopped:
		h.mu.Unlock()
		return ErrStopped
	}
	if _, ok := h.provided[modelID]; !ok {
		h.provided[modelID] = &provideState{next: time.Now().Add(h.t.reprovideInterval)}
	}
	h.mu.Unlock()
	return h.provideOnce(ctx, modelID)
}

func (h *Host) provideOnce(ctx context.Context, modelID [32]byte) error {
	ctx, cancel := context.WithTimeout(ctx, h.t.opTimeout)
	defer cancel()
	start := time.Now()
	err := h.waitRoutingTable(ctx)
	if err == nil {
		err = h.dht.Provide(ctx, ModelCID(modelID), true)
	}
	h.recordProvide(modelID, err)
	model := hex.EncodeToString(modelID[:])
	if err != nil {
		h.log.Warn("provide model failed", "model", model, "err", err)
		return fmt.Errorf("p2p: provide model %s: %w", model, err)
	}
	h.log.Debug("provided model", "model", model, "took", time.Since(start).Round(time.Millisecond),
		"routing_table", h.dht.RoutingTable().Size())
	return nil
}

func (h *Host) recordProvide(modelID [32]byte, err error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st, ok := h.provided[modelID]
	if !ok {
		return
	}
	if err == nil {
		st.fails = 0
		st.next = time.Now().Add(h.t.reprovideInterval)
		return
	}
	backoff := h.t.retryInterval << min(st.fails, 16)
	st.fails++
	st.next = time.Now().Add(min(backoff, h.t.maxBackoff))
}

// retryFailedProvides makes every model whose last announcement failed due
// now (called when the host regains peers).
func (h *Host) retryFailedProvides() {
	h.mu.Lock()
	now := time.Now()
	for _, st := range h.provided {
		if st.fails > 0 {
			st.next = now
		}
	}
	h.mu.Unlock()
	select {
	case h.kick <- struct{}{}:
	default:
	}
}

// provideLoop re-announces provided models when they are due.
func (h *Host) provideLoop(ctx context.Context) {
	defer h.wg.Done()
	timer := time.NewTimer(h.t.retryInterval)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		case <-h.kick:
		}
		for _, id := range h.dueProvides(time.Now()) {
			if ctx.Err() != nil {
				return
			}
			_ = h.provideOnce(ctx, id) // logged and rescheduled by provideOnce
		}
		timer.Reset(h.untilNextProvide())
	}
}

func (h *Host) dueProvides(now time.Time) [][32]byte {
	h.mu.Lock()
	defer h.mu.Unlock()
	var due [][32]byte
	for id, st := range h.provided {
		if !st.next.After(now) {
			due = append(due, id)
		}
	}
	return due
}

// untilNextProvide is the wait before the earliest scheduled announcement,
// capped at the retry interval so newly registered models are picked up.
func (h *Host) untilNextProvide() time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	wait := h.t.reprovideInterval
	now := time.Now()
	for _, st := range h.provided {
		wait = min(wait, st.next.Sub(now))
	}
	return max(wait, 10*time.Millisecond)
}

// waitRoutingTable blocks until the DHT routing table has at least one peer:
// a lookup from an empty table fails at once, and right after connecting the
// table fills only once identify and a liveness query have completed.
func (h *Host) waitRoutingTable(ctx context.Context) error {
	if h.dht.RoutingTable().Size() > 0 {
		return nil
	}
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return fmt.Errorf("no DHT peers in routing table (connected peers: %d): %w",
				len(h.host.Network().Peers()), ctx.Err())
		case <-t.C:
			if h.dht.RoutingTable().Size() > 0 {
				return nil
			}
		}
	}
}

// FindModelProviders looks modelID up on the DHT and returns up to max
// providers other than this host (max <= 0 means 20; at most 4096). It returns what it found
// when the lookup completes or ctx ends, whichever is first (bounded by one
// minute); an error only if it found nobody and the lookup could not run or
// was cut short.
func (h *Host) FindModelProviders(ctx context.Context, modelID [32]byte, max int) ([]peer.AddrInfo, error) {
	h.mu.Lock()
	state := h.state
	h.mu.Unlock()
	switch state {
	case stateNew:
		return nil, ErrNotStarted
	case stateStopped:
		return nil, ErrStopped
	}
	if max <= 0 {
		max = defaultMaxProviders
	}
	max = min(max, maxProviders)
	ctx, cancel := context.WithTimeout(ctx, h.t.opTimeout)
	defer cancel()
	model := hex.EncodeToString(modelID[:])
	if err := h.waitRoutingTable(ctx); err != nil {
		return nil, fmt.Errorf("p2p: find providers of %s: %w", model, err)
	}
	self := h.host.ID()
	var out []peer.AddrInfo
	// Ask for one extra: our own local record counts towards the DHT's limit.
	for ai := range h.dht.FindProvidersAsync(ctx, ModelCID(modelID), max+1) {
		if ai.ID == self || len(out) >= max {
			continue
		}
		if len(ai.Addrs) == 0 {
			ai.Addrs = h.host.Peerstore().Addrs(ai.ID)
		}
		out = append(out, ai)
		if len(out) == max {
			cancel() // enough; the channel closes once the lookup unwinds
		}
	}
	if len(out) == 0 {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("p2p: find providers of %s: %w", model, err)
		}
	}
	h.log.Debug("found model providers", "model", model, "count", len(out))
	return out, nil
}
