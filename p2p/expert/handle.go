package expert

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/identity"
)

// writeGrace bounds the response write once the exchange's time is up.
const writeGrace = 2 * time.Second

// handle serves one stream the opening prepared (p2p.Serve): one Request
// frame in, one Response frame out.
func (s *Server) handle(ctx context.Context, st *p2p.Stream) error {
	req, err := p2p.DecodeFrame(st, DecodeRequest)
	if err != nil {
		return fmt.Errorf("expert: read request: %w", err)
	}
	b, err := EncodeResponse(s.answer(ctx, req, st.Log))
	if err == nil {
		err = p2p.WriteFrame(st, b)
	}
	if err != nil {
		return fmt.Errorf("expert: write response: %w", err)
	}
	return nil
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
	h := s.certHash(sess)
	known := len(req.KnownCert) == len(h) && bytes.Equal(req.KnownCert, h[:])
	rcpt, err := Sign(sess, NewReceipt(sess, req, outputs, time.Now()), known)
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
