package payment

import (
	"bufio"
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p"
)

// handle serves one stream: one Delivery frame in, one Ack frame out.
func (s *Server) handle(st network.Stream) {
	from := st.Conn().RemotePeer()
	log := s.log.With("peer", from)
	release, err := s.admit(from)
	if err != nil {
		log.Debug("delivery refused before reading", "err", err)
		s.reset(st)
		return
	}
	defer release()
	if err := st.Scope().SetService(ServiceName); err != nil {
		log.Debug("attach stream to service", "err", err)
		s.reset(st)
		return
	}
	start := time.Now()
	deadline := start.Add(s.cfg.Timeout)
	_ = st.SetReadDeadline(deadline)
	_ = st.SetWriteDeadline(deadline.Add(writeGrace))

	d, ok := s.readDelivery(st, log)
	if !ok {
		s.reset(st)
		return
	}
	ctx, cancel := context.WithDeadline(s.life.Context(), deadline)
	results := s.results(ctx, from, d, log)
	cancel()
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
		log.Debug("write ack", "err", err)
		s.reset(st)
		return
	}
	_ = st.Close()
	log.Debug("delivery answered", "records", len(results), "took", time.Since(start))
}

func (s *Server) reset(st network.Stream) {
	s.stats.reset.Add(1)
	_ = st.Reset()
}

// readDelivery reads and decodes the delivery frame within the stream's
// memory reservation; false means the stream is to be reset (oversized,
// truncated or malformed frame, out of memory).
func (s *Server) readDelivery(st network.Stream, log *slog.Logger) (*Delivery, bool) {
	r := bufio.NewReader(st)
	if size := p2p.PeekFrameSize(r); size > 0 && size <= MaxFrameSize {
		// The frame buffer and the decoded records beside it.
		if err := st.Scope().ReserveMemory(2*size, network.ReservationPriorityHigh); err != nil {
			log.Debug("reserve memory for the delivery", "bytes", 2*size, "err", err)
			return nil, false
		}
		defer st.Scope().ReleaseMemory(2 * size)
	}
	b, err := p2p.ReadFrame(r, MaxFrameSize)
	if err != nil {
		if errors.Is(err, p2p.ErrFrameTooLarge) {
			log.Debug("oversized delivery frame", "err", err)
		} else {
			log.Debug("read delivery", "err", err)
		}
		return nil, false
	}
	d, err := DecodeDelivery(b)
	if err != nil {
		log.Debug("malformed delivery frame", "err", err)
		return nil, false
	}
	return d, true
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
