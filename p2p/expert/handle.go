package expert

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/libp2p/go-libp2p/core/network"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// writeGrace bounds the response write once the exchange's time is up.
const writeGrace = 2 * time.Second

// handle serves one stream: one Request frame in, one Response frame out.
func (s *Server) handle(st network.Stream) {
	from := st.Conn().RemotePeer()
	log := s.log.With("peer", from)
	release, err := s.admit(from)
	if err != nil {
		log.Debug("expert exchange refused before reading", "err", err)
		s.resetStream(st)
		return
	}
	defer release()
	if err := st.Scope().SetService(ServiceName); err != nil {
		log.Debug("attach stream to service", "err", err)
		s.resetStream(st)
		return
	}
	deadline := time.Now().Add(s.cfg.Timeout)
	_ = st.SetReadDeadline(deadline)
	_ = st.SetWriteDeadline(deadline.Add(writeGrace))
	req, ok := s.readRequest(st, log)
	if !ok {
		s.resetStream(st)
		return
	}
	ctx, cancel := context.WithDeadline(s.life.Context(), deadline)
	resp := s.answer(ctx, req, log)
	cancel()
	b, err := EncodeResponse(resp)
	if err == nil {
		err = p2p.WriteFrame(st, b)
	}
	if err != nil {
		log.Debug("write expert response", "err", err)
		s.resetStream(st)
		return
	}
	_ = st.Close()
}

func (s *Server) resetStream(st network.Stream) {
	s.reset.Add(1)
	_ = st.Reset()
}

// readRequest reads and decodes the request within the stream's memory
// reservation; false means the stream is to be reset.
func (s *Server) readRequest(st network.Stream, log *slog.Logger) (*Request, bool) {
	r := bufio.NewReader(st)
	if size := p2p.PeekFrameSize(r); size > 0 && size <= MaxRequestSize {
		// The frame, the decoded rows and the output rows beside them.
		if err := st.Scope().ReserveMemory(3*size, network.ReservationPriorityHigh); err != nil {
			log.Debug("reserve memory for the expert request", "bytes", 3*size, "err", err)
			return nil, false
		}
		defer st.Scope().ReleaseMemory(3 * size)
	}
	b, err := p2p.ReadFrame(r, MaxRequestSize)
	if err != nil {
		log.Debug("read expert request", "err", err)
		return nil, false
	}
	req, err := DecodeRequest(b)
	if err != nil {
		log.Debug("malformed expert request", "err", err)
		return nil, false
	}
	return req, true
}

// answer computes every batch of req and signs the receipt, or returns a
// failure code.
func (s *Server) answer(ctx context.Context, req *Request, log *slog.Logger) *Response {
	fail := func(code uint32, err error) *Response {
		s.refused.Add(1)
		log.Debug("expert request refused", "code", code, "err", err)
		return &Response{Code: code, Reason: clip(err.Error())}
	}
	if err := p2p.CheckNetwork(s.cfg.Network, req.Network); err != nil {
		return fail(CodeWrongNetwork, err)
	}
	dim := int(req.Dim)
	outputs := make([][]byte, len(req.Batches))
	rows := 0
	for i, b := range req.Batches {
		in, err := UnpackRows(b.Rows, dim)
		if err != nil {
			return fail(CodeBadRequest, err)
		}
		out, err := s.compute.Compute(ctx, req.Model, int(req.Layer), int(b.Expert), in)
		if err == nil && len(out) != len(in) {
			err = fmt.Errorf("expert %d computed %d rows for %d", b.Expert, len(out), len(in))
		}
		if err == nil {
			outputs[i], err = PackRows(out, dim)
		}
		switch {
		case errors.Is(err, ErrNotHeld):
			return fail(CodeNotHeld, err)
		case errors.Is(err, ErrBadRows):
			return fail(CodeBadRequest, err)
		case err != nil:
			return fail(CodeInternal, err)
		}
		rows += len(in)
	}
	sess, err := s.session()
	if err != nil {
		return fail(CodeInternal, fmt.Errorf("expert: no session: %w", err))
	}
	env, err := Seal(sess, NewReceipt(sess, req, outputs, time.Now()))
	if err != nil {
		return fail(CodeInternal, err)
	}
	if h := s.certHash(sess); len(req.KnownCert) == len(h) && bytes.Equal(req.KnownCert, h[:]) {
		env.Cert = identity.Certificate{} // the caller holds it (Request.KnownCert)
	}
	rcpt, err := env.Marshal()
	if err != nil {
		return fail(CodeInternal, err)
	}
	s.exchanges.Add(1)
	s.rows.Add(uint64(rows))
	if m := s.cfg.Metrics; m != nil {
		m.Served.Inc()
		m.ServedRows.Add(float64(rows))
	}
	return &Response{Outputs: outputs, Receipt: rcpt}
}

// sessionHash is a session and its certificate's hash, computed once per
// session rather than per exchange (it encodes some 5 KB of certificate).
type sessionHash struct {
	sess *identity.Session
	hash [32]byte
}

func (s *Server) certHash(sess *identity.Session) [32]byte {
	if c := s.lastCert.Load(); c != nil && c.sess == sess {
		return c.hash
	}
	c := &sessionHash{sess: sess, hash: sess.Cert.Hash()}
	s.lastCert.Store(c)
	return c.hash
}
