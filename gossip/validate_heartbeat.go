package gossip

import (
	"context"
	"fmt"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/identity"
)

// ValidateHeartbeat applies the heartbeat topic's rules to one message that
// from propagated. Cheap checks (size, encoding, structure, window, seq)
// run before the certificate and signature.
//
// Reject, for what is invalid on its own bytes: oversized, malformed, wrong
// domain, bad certificate or signature, or a body naming a machine other
// than its certificate's. Ignore, for what depends on this node's view: the
// peer not pinned yet (no announcement or registration seen), pinned to
// another machine (a registration this node may lack or hold stale),
// outside the freshness window, a certificate outside its validity on this
// node's clock, or a sequence number not above the last accepted one.
func (v *Validator) ValidateHeartbeat(_ context.Context, from peer.ID, data []byte) Result {
	return validatePayload(v, KindHeartbeat, "heartbeat", data, func(hb *Heartbeat, env *identity.Envelope) Result {
		return v.checkHeartbeat(hb, env, from)
	})
}

func (v *Validator) checkHeartbeat(hb *Heartbeat, env *identity.Envelope, from peer.ID) Result {
	if err := hb.Check(); err != nil {
		return reject(ReasonInvalid, fmt.Errorf("gossip: heartbeat: %w", err))
	}
	snd, _, bad := v.checkSequenced(KindHeartbeat, hb.MachineID, hb.TimeMs, hb.Seq, env, from)
	if bad != nil {
		return *bad
	}
	pinned, ok := v.pins.Lookup(snd.Peer)
	if !ok {
		return ignore(ReasonUnpinned, fmt.Errorf("gossip: heartbeat from %s before any announcement pinned its machine", snd.Peer))
	}
	if pinned != snd.Machine {
		return ignore(ReasonPinMismatch, fmt.Errorf("gossip: heartbeat for %s signed by machine %s, pinned here to %s", snd.Peer, snd.Machine, pinned))
	}
	if err := v.advanceSeq(KindHeartbeat, snd.Machine, hb.Seq); err != nil {
		return ignore(ReasonReplay, err)
	}
	return accept(&VerifiedHeartbeat{Sender: snd, Heartbeat: *hb}, hb)
}
