package router

import (
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/identity"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/pricing"
)

// teeTable holds two warm providers that both announce `tee`; only
// "attested" carries a verified attestation.
func teeTable(t *testing.T) *Table {
	t.Helper()
	clk := clock.NewMock()
	clk.Set(time.Unix(1_800_000_000, 0))
	tb := NewTable(clk, nil)
	model := make([]byte, 32)
	for i, name := range []string{"attested", "claims-only"} {
		p, m := peer.ID(name), identity.MachineID{byte(i + 1)}
		var res *attest.Result
		if name == "attested" {
			res = &attest.Result{Kind: attest.KindSEVSNP, Signer: "VCEK", ProductLine: "Milan", Measurement: []byte{0xab, 0xcd}}
		}
		snd := gossip.Sender{Peer: p, Machine: m, Backend: "tpm-sim", Received: clk.Now()}
		tb.ApplyAnnouncement(&gossip.VerifiedAnnouncement{Sender: snd, Attested: res,
			Announcement: gossip.Announcement{MachineID: m[:], Region: "DE", Models: []gossip.ModelOffer{{
				ModelID: model, Name: "m", RateCard: gossip.RateCard{InputTokens: 1, OutputTokens: 1},
				Verification: []terms.Verification{terms.VerifyNone, terms.VerifyTEE}}}}})
		tb.ApplyHeartbeat(&gossip.VerifiedHeartbeat{Sender: snd, Heartbeat: gossip.Heartbeat{MachineID: m[:], Seq: 1, Capacity: 4,
			Models: []gossip.ModelStatus{{ModelID: model, State: gossip.StateWarm}}}})
	}
	return tb
}

func TestTEEQuotedOnlyWithVerifiedAttestation(t *testing.T) {
	tb := teeTable(t)
	units := pricing.Units{InputTokens: 10, OutputTokens: 10}
	lines, err := tb.Quotes("m", units, terms.VerifyTEE, pricing.Surcharges{})
	if err != nil {
		t.Fatal(err)
	}
	if len(lines) != 1 || lines[0].Provider != peer.ID("attested").String() {
		t.Fatalf("tee quotes %+v: want only the attested provider", lines)
	}
	if lines[0].Attested == nil || lines[0].Attested.Measurement != "abcd" {
		t.Fatalf("tee quote does not show the attestation: %+v", lines[0].Attested)
	}
	if lines, err := tb.Quotes("m", units, terms.VerifyNone, pricing.Surcharges{}); err != nil || len(lines) != 2 {
		t.Fatalf("none quotes: %d lines, %v; want both providers", len(lines), err)
	}
}

func TestListShowsAttestation(t *testing.T) {
	for _, v := range teeTable(t).List() {
		switch v.PeerID {
		case peer.ID("attested").String():
			if v.Attested == nil || v.Attested.Kind != "sev-snp" || v.Attested.Measurement != "abcd" || v.Attested.ProductLine != "Milan" {
				t.Fatalf("attested provider view: %+v", v.Attested)
			}
		default:
			if v.Attested != nil {
				t.Fatalf("%s shown attested without an attestation", v.PeerID)
			}
		}
	}
}
