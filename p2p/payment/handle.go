package payment

import (
	"context"
	"errors"
	"fmt"
	"log/slog"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p"
)

// handle serves one stream the opening prepared (p2p.Serve): one Delivery
// frame in, one Ack frame out.
func (s *Server) handle(ctx context.Context, st *p2p.Stream) error {
	d, err := p2p.DecodeFrame(st, DecodeDelivery)
	if err != nil {
		// Oversized, truncated or malformed, or out of memory.
		return fmt.Errorf("payment: read delivery: %w", err)
	}
	results := s.results(ctx, st.Peer, d, st.Log)
	// Counted once answered, before the ack is written: a client holding
	// the ack then always sees the delivery in Stats.
	s.stats.deliveries.Add(1)
	b, err := encodeAck(&Ack{Results: results})
	if err == nil {
		err = p2p.WriteFrame(st, b)
	}
	if err != nil {
		// The records persisted stay persisted: the gateway, without its
		// ack, delivers them again and the sink finds them.
		return fmt.Errorf("payment: write ack: %w", err)
	}
	st.Log.Debug("delivery answered", "records", len(results), "took", st.Elapsed())
	return nil
}

// results passes each record of d to the sink, independently, and returns
// one Result per record in order.
func (s *Server) results(ctx context.Context, from peer.ID, d *Delivery, log *slog.Logger) []Result {
	out := make([]Result, len(d.Records))
	if err := p2p.CheckNetwork(s.cfg.Network, d.Network); err != nil {
		log.Warn("delivery from another network refused", "network", d.Network, "records", len(d.Records))
		for i := range out {
			out[i] = Result{Code: CodeWrongNetwork, Reason: clip(err.Error())}
		}
		s.stats.refused.Add(uint64(len(out)))
		return out
	}
	for i := range d.Records {
		out[i] = s.accept(ctx, from, i, d, log)
		if out[i].Transient() {
			s.stats.transient.Add(1)
		} else if out[i].OK() {
			s.stats.accepted.Add(1)
		} else {
			s.stats.refused.Add(1)
		}
	}
	return out
}

// accept checks and persists record i of d.
func (s *Server) accept(ctx context.Context, from peer.ID, i int, d *Delivery, log *slog.Logger) Result {
	rec := &d.Records[i]
	if err := CheckRecord(rec); err != nil {
		log.Info("malformed payment record refused", "request", rec.RequestDigest, "err", err)
		return Result{Code: CodeMalformed, Reason: clip(err.Error())}
	}
	if err := ctx.Err(); err != nil {
		return Result{Code: CodeRetry, Reason: "provider out of time for this delivery"}
	}
	err := s.sink.Accept(ctx, from, rec)
	if err == nil {
		return Result{}
	}
	var ref *Refusal
	if errors.As(err, &ref) {
		code := ref.Code
		if code == CodeOK {
			code = CodeRefused
		}
		log.Info("payment record refused", "request", rec.RequestDigest, "code", code, "reason", ref.Reason)
		return Result{Code: code, Reason: clip(ref.Reason)}
	}
	// The cause stays in the provider's log: it may name local paths.
	log.Warn("payment record not persisted", "request", rec.RequestDigest, "err", err)
	return Result{Code: CodeRetry, Reason: "provider could not persist the record now"}
}
