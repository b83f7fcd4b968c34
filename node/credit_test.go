package node

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// TestCreditRogueSettlerRefusedAfterOneCall: a gateway of its own (a
// libp2p host and a settler key whose escrow a transaction funded) is
// served one call; while it withholds the record every further call — from
// its peer or from fresh peer IDs it authorizes — is refused 402 unpaid
// after the provider's record wait (credit is per settler, not per peer);
// once it delivers a correct signed record for that call, it is served
// again.
func TestCreditRogueSettlerRefusedAfterOneCall(t *testing.T) {
	c := newCreditNet(t, 1, testChainParams(3600), nil)
	prov := c.provs[0]
	settler := newAccountKey(t)
	c.submit(t, &ledger.EscrowFund{Amount: 1_000_000, Settler: keyAccount(settler)})
	h := newRogueHost(t)
	auth := c.payAuth(settler, h.ID(), c.payerID())

	first := c.request(auth, "hello", 4)
	f := c.served(t, h, prov, first)

	_, err := c.call(t, h, prov, c.request(auth, "again", 4))
	ef := refused(t, "second call with the first unrecorded", nil, err, http.StatusPaymentRequired, terms.CodeUnpaid)
	if !strings.Contains(ef.Message, "owes this provider 1 payment record") || !ef.Retryable {
		t.Fatalf("unpaid refusal: %+v", ef)
	}
	for i := range 2 {
		fresh := newRogueHost(t)
		_, err := c.call(t, fresh, prov, c.request(c.payAuth(settler, fresh.ID(), c.payerID()), "fresh peer", 4))
		refused(t, fmt.Sprintf("fresh peer %d of the same settler", i), nil, err, http.StatusPaymentRequired, terms.CodeUnpaid)
	}

	rec := c.record(t, settler, prov, first, f)
	if want, ok := prov.Provider().Expected(rec.RequestDigest); !ok || rec.Price != want {
		t.Fatalf("record priced %d, provider expects %d (%v)", rec.Price, want, ok)
	}
	if res := c.deliver(t, h, prov, rec); !res[0].OK() {
		t.Fatalf("correct record refused: %+v", res[0])
	}
	c.served(t, h, prov, c.request(auth, "paid up", 4))
}

// TestCreditPayAuthorization: on a chain a provider serves only calls
// whose pay authorization verifies for the calling peer: none at all, one
// signed for another peer, or one signed by a key that is not the settler
// it names are refused 402 payment_required; a trusted caller is served
// without one.
func TestCreditPayAuthorization(t *testing.T) {
	trusted := newRogueHost(t)
	c := newCreditNet(t, 1, testChainParams(3600), []peer.ID{trusted.ID()})
	prov := c.provs[0]
	settler := newAccountKey(t)
	c.submit(t, &ledger.EscrowFund{Amount: 1_000_000, Settler: keyAccount(settler)})
	h, other := newRogueHost(t), newRogueHost(t)

	_, err := c.call(t, h, prov, c.request(nil, "no pay", 4))
	refused(t, "no authorization", nil, err, http.StatusPaymentRequired, terms.CodePaymentRequired)

	_, err = c.call(t, h, prov, c.request(c.payAuth(settler, other.ID(), c.payerID()), "borrowed", 4))
	refused(t, "authorization for another peer", nil, err, http.StatusPaymentRequired, terms.CodePaymentRequired)

	forged := c.payAuth(newAccountKey(t), h.ID(), c.payerID())
	forged.Settler = c.payAuth(settler, h.ID(), c.payerID()).Settler
	_, err = c.call(t, h, prov, c.request(forged, "forged", 4))
	ef := refused(t, "authorization not by the settler", nil, err, http.StatusPaymentRequired, terms.CodePaymentRequired)
	if !strings.Contains(ef.Message, "does not verify for caller "+h.ID().String()) {
		t.Fatalf("refusal does not say why: %q", ef.Message)
	}

	c.served(t, trusted, prov, c.request(nil, "trusted", 4))
	// The genuine authorization works from h: the refusals were about the
	// authorizations, not the caller.
	c.served(t, h, prov, c.request(c.payAuth(settler, h.ID(), c.payerID()), "genuine", 4))
}

// TestCreditEscrowCoverage: a call whose worst-case price (every input
// byte a token, max_tokens out, at the rate card) exceeds what the payer's
// escrow with that settler has available is refused 402 payment_required
// naming both amounts, and a payer without an escrow with that settler is
// refused 402 too; nothing is owed for either.
func TestCreditEscrowCoverage(t *testing.T) {
	c := newCreditNet(t, 1, testChainParams(3600), nil)
	prov := c.provs[0]
	settler := newAccountKey(t)
	const funds = 40
	c.submit(t, &ledger.EscrowFund{Amount: funds, Settler: keyAccount(settler)})
	h := newRogueHost(t)
	auth := c.payAuth(settler, h.ID(), c.payerID())

	big := c.request(auth, "a question", 32)
	worst := worstCase(t, prov, big)
	if worst <= funds {
		t.Fatalf("test setup: worst case %d fits the escrow of %d", worst, funds)
	}
	_, err := c.call(t, h, prov, big)
	ef := refused(t, "escrow short of the worst case", nil, err, http.StatusPaymentRequired, terms.CodePaymentRequired)
	want := fmt.Sprintf("has %d available, 0 already owed to this provider; this call may cost %d", funds, worst)
	if !strings.Contains(ef.Message, want) {
		t.Fatalf("refusal %q does not name the amounts (%q)", ef.Message, want)
	}
	if _, ok := prov.Provider().Expected(requestDigest(big)); ok {
		t.Fatal("a refused call is counted as owed")
	}

	stranger := newAccountKey(t) // no escrow with the settler
	_, err = c.call(t, h, prov, c.request(c.payAuth(settler, h.ID(), keyAccount(stranger)), "hi", 4))
	ef = refused(t, "payer without an escrow", nil, err, http.StatusPaymentRequired, terms.CodePaymentRequired)
	if !strings.Contains(ef.Message, "has no escrow with settler") {
		t.Fatalf("refusal %q does not say there is no escrow", ef.Message)
	}

	small := c.request(auth, "hi", 4)
	if w := worstCase(t, prov, small); w > funds {
		t.Fatalf("test setup: worst case %d over %d", w, funds)
	}
	c.served(t, h, prov, small) // the escrow covers a call that fits
}
