package gateway

import (
	"encoding/hex"
	"sync"
	"time"

	"github.com/tenzrod/tenzrod/p2p"
)

// RecentKept is how many finished requests the gateway remembers for
// tenzro_listRecentRequests: enough for a page to show the last minutes of
// a busy gateway, small enough (a few hundred bytes each) to cost nothing.
const RecentKept = 200

// maxRecentError bounds a remembered error text.
const maxRecentError = 200

// RecentRequest is one finished request as an operator looks it up: who
// served it, how hard routing had to work, what it cost and whether the
// receipt verified.
type RecentRequest struct {
	// Seq numbers requests in the order they finished, from 1; a client
	// polling the ring asks for those after the last one it saw.
	Seq    uint64 `json:"seq"`
	TimeMs int64  `json:"time_ms"` // when it finished
	// DurationMs runs from the gateway taking the request to its end.
	DurationMs float64 `json:"duration_ms"`
	Model      string  `json:"model"`
	Stream     bool    `json:"stream"`
	Probe      bool    `json:"probe,omitempty"`
	Provider   string  `json:"provider,omitempty"` // the serving peer ID
	Attempts   int     `json:"attempts"`
	Hedged     bool    `json:"hedged"`
	Continued  bool    `json:"continued"`
	// Price is the micro-units billed; 0 when nothing was.
	Price        uint64 `json:"price"`
	InputTokens  uint64 `json:"input_tokens"`
	OutputTokens uint64 `json:"output_tokens"`
	// Nonce is the receipt's request nonce (hex, for tenzro_getReceipt)
	// and RequestDigest the payment record's (hex, as the chain's records
	// carry it); both absent when no receipt came back.
	Nonce           string `json:"nonce,omitempty"`
	RequestDigest   string `json:"request_digest,omitempty"`
	ReceiptVerified bool   `json:"receipt_verified"`
	ReceiptProblem  string `json:"receipt_problem,omitempty"`
	Error           string `json:"error,omitempty"`
}

// recentRing keeps the last RecentKept requests. It is safe for concurrent
// use.
type recentRing struct {
	mu   sync.Mutex
	buf  [RecentKept]RecentRequest
	next uint64 // Seq of the next request; buf[(seq-1) % RecentKept] holds seq
}

func newRecentRing() *recentRing { return &recentRing{next: 1} }

func (r *recentRing) add(e RecentRequest) {
	r.mu.Lock()
	e.Seq = r.next
	r.buf[(e.Seq-1)%RecentKept] = e
	r.next++
	r.mu.Unlock()
}

// since returns up to limit requests with Seq > after, newest first.
func (r *recentRing) since(after uint64, limit int) []RecentRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	oldest := uint64(1)
	if r.next > RecentKept {
		oldest = r.next - RecentKept
	}
	from := max(oldest, after+1)
	n := 0
	if r.next > from {
		n = min(int(r.next-from), limit)
	}
	out := make([]RecentRequest, 0, n)
	for seq := r.next - 1; seq >= oldest && seq > after && len(out) < limit; seq-- {
		out = append(out, r.buf[(seq-1)%RecentKept])
	}
	return out
}

// Recent returns up to limit of the last requests that finished with a Seq
// above after, newest first; limit is capped at RecentKept.
func (g *Gateway) Recent(after uint64, limit int) []RecentRequest {
	if limit <= 0 || limit > RecentKept {
		limit = RecentKept
	}
	return g.recent.since(after, limit)
}

// remember records a finished request in the recent ring.
func (g *Gateway) remember(start time.Time, req *Request, res *Result, err error) {
	now := g.clock.Now()
	e := RecentRequest{TimeMs: now.UnixMilli(), DurationMs: float64(now.Sub(start).Microseconds()) / 1000,
		Model: req.Model, Stream: req.Stream, Probe: req.Probe}
	if res != nil {
		if res.Model != "" {
			e.Model = res.Model
		}
		e.Provider, e.Attempts, e.Hedged, e.Continued = res.Provider.PeerID, res.Attempts, res.Hedged, res.Continued
		if ri := res.Receipt; ri != nil {
			e.ReceiptVerified, e.ReceiptProblem = ri.Verified, clip(ri.Problem)
			if ri.Receipt != nil {
				e.Nonce = ri.Receipt.Nonce
			}
		}
		if p := res.Payment; p != nil {
			e.Price, e.InputTokens, e.OutputTokens = p.Price, p.Units.InputTokens, p.Units.OutputTokens
			e.RequestDigest = hex.EncodeToString(p.RequestDigest)
		}
	}
	if err != nil {
		e.Error = clip(err.Error())
	}
	g.recent.add(e)
}

// clip bounds a remembered text at maxRecentError bytes, on a rune boundary.
func clip(s string) string { return p2p.Clip(s, maxRecentError) }
