package gateway

import (
	"strings"
	"testing"
	"time"

	"github.com/tenzrod/tenzrod/gossip"
	"github.com/tenzrod/tenzrod/receipts/attest"
	"github.com/tenzrod/tenzrod/receipts/identity/identitytest"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// announceTEE makes fp offer the model at `tee` too, with a verified
// attestation binding the session key pub.
func (m *market) announceTEE(fp *fakeProvider, outPrice uint64, pub []byte) {
	mach := fp.ident.MachineID()
	s := gossip.Sender{Peer: fp.id, Machine: mach, Backend: "software", Received: time.Now()}
	m.table.ApplyAnnouncement(&gossip.VerifiedAnnouncement{Sender: s,
		Attested: &attest.Result{Kind: attest.KindSEVSNP, Signer: "VCEK", ProductLine: "Milan",
			Measurement: []byte{0xab}, SessionPub: pub, NotAfter: time.Now().Add(time.Hour)},
		Announcement: gossip.Announcement{MachineID: mach[:], Region: "DE", Models: []gossip.ModelOffer{{ModelID: modelID, Name: modelName,
			RateCard: terms.RateCard{InputTokens: 1, OutputTokens: outPrice}, Verification: []terms.Verification{terms.VerifyReceipt, terms.VerifyTEE}}}}})
	m.beat()
}

// TestTEEReceiptFromAnotherKeyFailsOver: the cheaper provider's attestation
// binds a key other than the one its receipts are signed with (it rotated,
// or it serves outside the guest). Its answer reaches nobody, is not paid,
// and the call is served by the next attested provider.
func TestTEEReceiptFromAnotherKeyFailsOver(t *testing.T) {
	inBubble(t, func(t *testing.T, st *bubbleLedger) {
		m := newMarket(t, st, 2, testConfig(), answer(5*ms, "outside", " the guest"), answer(5*ms, "inside", " the guest"))
		liar, honest := m.provs[0], m.provs[1]
		key, _ := identitytest.PeerKey(t)
		other := identitytest.Session(t, liar.ident, key, time.Now().Add(-time.Hour), time.Now().Add(time.Hour))
		m.announceTEE(liar, 10, other.Cert.SessionPub)
		m.announceTEE(honest, 11, honest.sess.Cert.SessionPub)
		before := balance(t, st)
		req := request()
		req.Verification = terms.VerifyTEE
		res, ds, err := route(t, m, req)
		if err != nil {
			t.Fatalf("tee call: %v", err)
		}
		if res.Provider.PeerID != honest.id.String() {
			t.Fatalf("served by %s, want the honest attested provider %s", res.Provider.PeerID, honest.id)
		}
		var got strings.Builder
		for _, d := range ds {
			got.WriteString(d.Text)
		}
		if got.String() != "inside the guest" {
			t.Fatalf("buyer received %q: the refused answer leaked or the served one is incomplete", got.String())
		}
		if res.Payment == nil || string(res.Payment.ProviderPeer) != string(honest.id) {
			t.Fatalf("payment %+v: want one record, to the honest provider", res.Payment)
		}
		if paid := before - balance(t, st); paid != res.Payment.Price {
			t.Fatalf("buyer paid %d, the record says %d: the refused answer was billed too", paid, res.Payment.Price)
		}
		if calls := m.calls(); len(calls) != 2 || calls[0].peer != liar.id {
			t.Fatalf("calls %d (first to %s): want the liar tried first, then the honest provider", len(calls), calls[0].peer)
		}
	})
}
