package payment

import (
	"context"
	"fmt"

	"github.com/libp2p/go-libp2p/core/host"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/p2p"
	"github.com/tenzrod/tenzrod/receipts/receipt"
)

// DefaultClientTimeout bounds one frame's exchange when ctx has no
// earlier deadline: the server's default Timeout plus the ack's write.
const DefaultClientTimeout = DefaultTimeout + 2*writeGrace

// Deliver sends recs to provider p on network, in frames of at most
// MaxRecords, one stream per frame, and returns one Result per record in
// order.
//
// A record failing CheckRecord is not sent: its result is CodeMalformed.
// err reports a transport failure (the stream could not be opened, broke,
// was reset, or answered a malformed ack) or ctx ending: nothing is known
// acked for the frame it happened in, so its records and those of the
// frames not attempted after it get CodeRetry results. The results of the
// frames answered before it stand; results always holds len(recs)
// entries.
func Deliver(ctx context.Context, h host.Host, network string, p peer.ID, recs []receipt.PaymentRecord) ([]Result, error) {
	results := make([]Result, len(recs))
	var idx []int // indexes of the records to send
	for i := range recs {
		if err := CheckRecord(&recs[i]); err != nil {
			results[i] = Result{Code: CodeMalformed, Reason: clip(err.Error())}
			continue
		}
		idx = append(idx, i)
	}
	for len(idx) > 0 {
		n := min(len(idx), MaxRecords)
		chunk := idx[:n]
		frame := &Delivery{Network: network, Records: make([]receipt.PaymentRecord, n)}
		for j, i := range chunk {
			frame.Records[j] = recs[i]
		}
		got, err := exchange(ctx, h, p, frame)
		if err != nil {
			for _, i := range idx {
				results[i] = Result{Code: CodeRetry, Reason: clip(err.Error())}
			}
			return results, err
		}
		for j, i := range chunk {
			results[i] = got[j]
		}
		idx = idx[n:]
	}
	return results, nil
}

// exchange sends one delivery frame on a new stream and reads its ack.
func exchange(ctx context.Context, h host.Host, p peer.ID, d *Delivery) ([]Result, error) {
	payload, err := encodeDelivery(d)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("payment: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, DefaultClientTimeout)
	defer cancel()
	b, _, err := p2p.Call(ctx, h, p, ProtocolID, ServiceName, payload, MaxAckSize)
	if err != nil {
		return nil, fmt.Errorf("payment: delivery: %w", err)
	}
	a, err := DecodeAck(b, len(d.Records))
	if err != nil {
		return nil, fmt.Errorf("payment: decode ack: %w", err)
	}
	return a.Results, nil
}
