package chainview

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// The gateway's session collaborators on a chain: who operates a
// provider, and the stream escrows that pay standby successors.

// Operators is gateway.Operators: the registration of machine m
// (cached per block by the registry) must name peer p and have a live bond.
type Operators struct{ R *Registry }

// Operator implements gateway.Operators.
func (o Operators) Operator(ctx context.Context, p peer.ID, m identity.MachineID) (string, bool, error) {
	op, peerID, ok, err := o.R.ProviderOperator(ctx, m)
	if err != nil || !ok || peerID != p.String() {
		return "", false, err
	}
	return hex.EncodeToString(op[:]), true, nil
}

// Streams is gateway.StandbyStreams: this node's account, the
// settler of its buyers' escrows, opens and stops the streams.
type Streams struct{ Account *consensus.Submitter }

// Open implements gateway.StandbyStreams.
func (s Streams) Open(ctx context.Context, payer string, payee identity.MachineID, rate, deposit uint64) (string, int64, error) {
	p, err := terms.ParseAccountID(payer)
	if err != nil {
		return "", 0, fmt.Errorf("chainview: standby stream: payer %q is not an account: %w", payer, err)
	}
	res, err := s.Account.Submit(ctx, &ledger.StreamOpen{Payer: p, Payee: payee, Rate: rate, Deposit: deposit})
	if err != nil {
		return "", 0, fmt.Errorf("chainview: standby stream to %s: %w", payee, err)
	}
	if len(res.Data) != len(terms.Hash32{}) {
		return "", 0, fmt.Errorf("chainview: standby stream to %s: the chain returned a %d-byte stream ID", payee, len(res.Data))
	}
	return hex.EncodeToString(res.Data), res.Height, nil
}

// Stop implements gateway.StandbyStreams.
func (s Streams) Stop(ctx context.Context, id string) error {
	h, err := terms.ParseHash(id)
	if err != nil {
		return fmt.Errorf("chainview: stop standby stream %q: %w", id, err)
	}
	if _, err := s.Account.Submit(ctx, &ledger.StreamStop{ID: h}); err != nil {
		return fmt.Errorf("chainview: stop standby stream %s: %w", id, err)
	}
	return nil
}
