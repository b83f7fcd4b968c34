package gossip

import (
	"errors"
	"fmt"

	"github.com/tenzrod/tenzrod/receipts/cborx"
)

// ValidateAnnouncement applies the announce topic's rules to one message.
// The signature rules are the heartbeat's; in addition a region finer than a
// country is rejected. The first valid announcement of a peer pins its
// machine ID (until on-chain registration replaces first-seen pinning).
func (v *Validator) ValidateAnnouncement(data []byte) Result {
	env, snd, bad := v.open(KindAnnounce, data)
	if bad != nil {
		return *bad
	}
	var an Announcement
	if err := cborx.UnmarshalCanonical(env.Payload, len(env.Payload), &an); err != nil {
		return reject(ReasonMalformed, fmt.Errorf("gossip: announcement payload: %w", err))
	}
	res := v.checkAnnouncement(&an, snd)
	res.Message = &an
	return res
}

func (v *Validator) checkAnnouncement(an *Announcement, snd Sender) Result {
	if err := an.Check(); err != nil {
		reason := ReasonInvalid
		if errors.Is(err, ErrRegionTooFine) {
			reason = ReasonRegionTooFine
		}
		return reject(reason, fmt.Errorf("gossip: announcement: %w", err))
	}
	if string(an.MachineID) != string(snd.Machine[:]) {
		return reject(ReasonMachineMismatch, fmt.Errorf("gossip: announcement names machine %x but is signed for %s", an.MachineID, snd.Machine))
	}
	if pinned, ok := v.pins.Lookup(snd.Peer); ok && pinned != snd.Machine {
		return reject(ReasonMachineMismatch, fmt.Errorf("gossip: announcement for %s signed by machine %s, pinned %s", snd.Peer, snd.Machine, pinned))
	}
	if err := v.fresh(an.TimeMs, snd.Received); err != nil {
		return ignore(ReasonStale, err)
	}
	if err := v.advanceSeq(KindAnnounce, snd.Machine, an.Seq); err != nil {
		return ignore(ReasonReplay, err)
	}
	if pinned := v.pins.Offer(snd.Peer, snd.Machine); pinned != snd.Machine {
		return reject(ReasonMachineMismatch, fmt.Errorf("gossip: %s was pinned to %s meanwhile", snd.Peer, pinned))
	}
	return accept(&VerifiedAnnouncement{Sender: snd, Announcement: *an}, an)
}
