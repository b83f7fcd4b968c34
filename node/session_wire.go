package node

import (
	"context"
	"encoding/hex"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/node/openai"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/gateway"
)

// The gateway's session collaborators on a chain: who operates a
// provider, and the stream escrows that pay standby successors.

// chainOperators is gateway.Operators: the registration of machine m
// (cached per block by the registry) must name peer p and have a live bond.
type chainOperators struct{ r *chainRegistry }

func (o chainOperators) Operator(ctx context.Context, p peer.ID, m identity.MachineID) (string, bool, error) {
	op, peerID, ok, err := o.r.ProviderOperator(ctx, m)
	if err != nil || !ok || peerID != p.String() {
		return "", false, err
	}
	return hex.EncodeToString(op[:]), true, nil
}

// chainStreams is gateway.StandbyStreams: this node's account, the
// settler of its buyers' escrows, opens and stops the streams.
type chainStreams struct{ acct *consensus.Submitter }

func (s chainStreams) Open(ctx context.Context, payer string, payee identity.MachineID, rate, deposit uint64) (string, error) {
	p, err := terms.ParseAccountID(payer)
	if err != nil {
		return "", fmt.Errorf("node: standby stream: payer %q is not an account: %w", payer, err)
	}
	res, err := s.acct.Submit(ctx, &ledger.StreamOpen{Payer: p, Payee: payee, Rate: rate, Deposit: deposit})
	if err != nil {
		return "", fmt.Errorf("node: standby stream to %s: %w", payee, err)
	}
	if len(res.Data) != len(terms.Hash32{}) {
		return "", fmt.Errorf("node: standby stream to %s: the chain returned a %d-byte stream ID", payee, len(res.Data))
	}
	return hex.EncodeToString(res.Data), nil
}

func (s chainStreams) Stop(ctx context.Context, id string) error {
	h, err := terms.ParseHash(id)
	if err != nil {
		return fmt.Errorf("node: stop standby stream %q: %w", id, err)
	}
	if _, err := s.acct.Submit(ctx, &ledger.StreamStop{ID: h}); err != nil {
		return fmt.Errorf("node: stop standby stream %s: %w", id, err)
	}
	return nil
}

// sessionDeps fills the gateway's session collaborators: the successors'
// protocol and, with a chain, operators and stream escrows.
func (n *Node) sessionDeps(d *gateway.Deps, acct *consensus.Submitter) {
	d.Successors = n.sessionSuccessors()
	if n.chain == nil || acct == nil {
		return
	}
	d.Operators = chainOperators{n.registry}
	d.Streams = chainStreams{acct}
}

// sessionRequest converts the parsed `tenzro.session` for the gateway.
func sessionRequest(o *openai.SessionOptions) *gateway.SessionRequest {
	if o == nil {
		return nil
	}
	s := &gateway.SessionRequest{ID: o.ID, Jurisdiction: o.Jurisdiction}
	switch o.Continuity {
	case openai.ContinuityOn:
		s.Continuity = gateway.ContinuityOn
	case openai.ContinuityRequired:
		s.Continuity = gateway.ContinuityRequired
	}
	return s
}
