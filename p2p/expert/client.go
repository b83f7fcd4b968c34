package expert

import (
	"bufio"
	"context"
	"errors"
	"fmt"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p"
)

// ErrRefused marks a holder's failure answer (a nonzero Response.Code).
var ErrRefused = errors.New("expert: holder refused the batch")

// Wire is what one exchange put on the wire, in frame bytes.
type Wire struct{ Sent, Received int }

// Exchange sends req to holder p on one stream and reads its response,
// bounded by ctx (which should carry the caller's per-batch deadline).
// It verifies nothing: the caller checks the receipt (Verify, Match)
// before using a row. A failure answer is returned with ErrRefused.
func Exchange(ctx context.Context, h host.Host, p peer.ID, req *Request) (*Response, Wire, error) {
	var w Wire
	payload, err := EncodeRequest(req)
	if err != nil {
		return nil, w, err
	}
	s, err := h.NewStream(ctx, p, ProtocolID)
	if err != nil {
		return nil, w, fmt.Errorf("expert: open stream to %s: %w", p, err)
	}
	if err := s.Scope().SetService(ServiceName); err != nil {
		_ = s.Reset()
		return nil, w, fmt.Errorf("expert: attach stream to service: %w", err)
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = s.SetDeadline(deadline)
	}
	// Ending ctx resets the stream, which unblocks the write or the read.
	stop := context.AfterFunc(ctx, func() { _ = s.Reset() })
	defer stop()
	fail := func(what string, err error) (*Response, Wire, error) {
		_ = s.Reset()
		if ctx.Err() != nil {
			return nil, w, fmt.Errorf("expert: %s: %w", what, context.Cause(ctx))
		}
		return nil, w, fmt.Errorf("expert: %s: %w", what, err)
	}
	if err := p2p.WriteFrame(s, payload); err != nil {
		return fail("send request", err)
	}
	w.Sent = len(payload)
	// The holder reads one frame, not to the end of the stream, and may
	// answer and close before this half-close: on QUIC its close cancels
	// this side's writing and CloseWrite fails although the answer is
	// there (seen on the devnet). A stream really broken fails the read.
	_ = s.CloseWrite()
	b, err := p2p.ReadFrame(bufio.NewReader(s), MaxResponseSize)
	if err != nil {
		return fail("read response", err)
	}
	w.Received = len(b)
	resp, err := DecodeResponse(b, req)
	if err != nil {
		return fail("decode response", err)
	}
	_ = s.Close()
	if resp.Code != CodeOK {
		return resp, w, fmt.Errorf("%w: code %d: %s", ErrRefused, resp.Code, resp.Reason)
	}
	return resp, w, nil
}
