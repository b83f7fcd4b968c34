package p2p

import (
	"bufio"
	"context"
	"fmt"
	"time"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/libp2p/go-libp2p/core/protocol"
)

// Call is the client half of a request/answer protocol (payment,
// session-cache, expert), as Serve is the server half: it opens a stream
// of proto to p, attached to the resource manager's service and under
// ctx's deadline, writes request as one frame, half-closes and reads one
// answer frame of at most maxAnswer bytes. Ending ctx resets the stream,
// which unblocks the write or the read; a failure then reports ctx's
// cause. sent is the bytes put on the wire (0 when the request did not go
// out), which a caller counts whatever the outcome. The exchange may cross
// a relay (AllowRelayed): its peer may be a provider behind a hard NAT.
func Call(ctx context.Context, h host.Host, p peer.ID, proto protocol.ID, service string, request []byte, maxAnswer int) (answer []byte, sent int, err error) {
	s, err := h.NewStream(AllowRelayed(ctx, string(proto)), p, proto)
	if err != nil {
		return nil, 0, fmt.Errorf("open stream to %s: %w", p, err)
	}
	if err := s.Scope().SetService(service); err != nil {
		_ = s.Reset()
		return nil, 0, fmt.Errorf("attach stream to service %s: %w", service, err)
	}
	if deadline, ok := ctx.Deadline(); ok {
		_ = s.SetDeadline(deadline)
	}
	stop := context.AfterFunc(ctx, func() { _ = s.Reset() })
	defer stop()
	fail := func(what string, err error) ([]byte, int, error) {
		_ = s.Reset()
		if ctx.Err() != nil {
			err = context.Cause(ctx)
		}
		return nil, sent, fmt.Errorf("%s: %w", what, err)
	}
	start := time.Now()
	if err := WriteFrame(s, request); err != nil {
		return fail("send request", err)
	}
	sent = len(request)
	// The server reads one frame, not to the end of the stream, and may
	// answer and close before this half-close: on QUIC its close cancels
	// this side's writing and CloseWrite fails although the answer is
	// there (seen on the devnet). A stream really broken fails the read.
	_ = s.CloseWrite()
	b, err := ReadFrame(bufio.NewReader(s), maxAnswer)
	if err != nil {
		return fail(fmt.Sprintf("read answer after %s", time.Since(start).Round(time.Millisecond)), err)
	}
	_ = s.Close()
	return b, sent, nil
}
