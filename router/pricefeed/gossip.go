package pricefeed

import (
	"encoding/hex"
	"time"

	"github.com/tenzrod/tenzrod/gossip"
)

// ObservationOf is an accepted gossip price observation as the feed
// keeps it.
func ObservationOf(v *gossip.VerifiedPriceObs) Observation {
	var obs [32]byte
	copy(obs[:], v.Observer)
	return Observation{
		Observer: obs, Provider: v.ProviderPeer, Machine: hex.EncodeToString(v.ProviderMachine), Model: hex.EncodeToString(v.ModelID),
		Price: v.Price, LatencyMs: v.LatencyMs, InputTokens: v.InputTokens, OutputTokens: v.OutputTokens,
		Success: v.Success, Time: time.UnixMilli(v.TimeMs),
	}
}
