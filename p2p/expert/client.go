package expert

import (
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
	b, sent, err := p2p.Call(ctx, h, p, ProtocolID, ServiceName, payload, MaxResponseSize)
	w = Wire{Sent: sent, Received: len(b)}
	if err != nil {
		return nil, w, fmt.Errorf("expert: %w", err)
	}
	resp, err := DecodeResponse(b, req)
	if err != nil {
		return nil, w, fmt.Errorf("expert: decode response: %w", err)
	}
	if resp.Code != CodeOK {
		return resp, w, fmt.Errorf("%w: code %d: %s", ErrRefused, resp.Code, resp.Reason)
	}
	return resp, w, nil
}
