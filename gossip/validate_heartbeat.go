package gossip

import (
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// ValidateHeartbeat applies the heartbeat topic's rules to one message.
//
// Reject: oversized, malformed, wrong domain, bad certificate or signature,
// a machine other than the one pinned for the peer, or a body naming another
// machine. Ignore: peer not pinned yet (no announcement seen), outside the
// freshness window, or a sequence number not above the last accepted one.
func (v *Validator) ValidateHeartbeat(data []byte) Result {
	env, snd, bad := v.open(KindHeartbeat, data)
	if bad != nil {
		return *bad
	}
	var hb Heartbeat
	if err := cborx.UnmarshalCanonical(env.Payload, len(env.Payload), &hb); err != nil {
		return reject(ReasonMalformed, fmt.Errorf("gossip: heartbeat payload: %w", err))
	}
	res := v.checkHeartbeat(&hb, snd)
	res.Message = &hb
	return res
}

func (v *Validator) checkHeartbeat(hb *Heartbeat, snd Sender) Result {
	if err := hb.Check(); err != nil {
		return reject(ReasonInvalid, fmt.Errorf("gossip: heartbeat: %w", err))
	}
	if string(hb.MachineID) != string(snd.Machine[:]) {
		return reject(ReasonMachineMismatch, fmt.Errorf("gossip: heartbeat names machine %x but is signed for %s", hb.MachineID, snd.Machine))
	}
	pinned, ok := v.pins.Lookup(snd.Peer)
	if !ok {
		return ignore(ReasonUnpinned, fmt.Errorf("gossip: heartbeat from %s before any announcement pinned its machine", snd.Peer))
	}
	if pinned != snd.Machine {
		return reject(ReasonMachineMismatch, fmt.Errorf("gossip: heartbeat for %s signed by machine %s, pinned %s", snd.Peer, snd.Machine, pinned))
	}
	if err := v.fresh(hb.TimeMs, snd.Received); err != nil {
		return ignore(ReasonStale, err)
	}
	if err := v.advanceSeq(KindHeartbeat, snd.Machine, hb.Seq); err != nil {
		return ignore(ReasonReplay, err)
	}
	return accept(&VerifiedHeartbeat{Sender: snd, Heartbeat: *hb}, hb)
}
