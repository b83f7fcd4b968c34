package store

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"fmt"
	"testing"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/tenzrod/tenzrod/receipts/receipt"
	"github.com/tenzrod/tenzrod/receipts/terms"
	"github.com/tenzrod/tenzrod/router/pricing"
)

func openStore(t testing.TB, dir string) *Store {
	t.Helper()
	s, err := OpenWith(dir, GroupSync)
	if err != nil {
		t.Fatalf("OpenWith(%s): %v", dir, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

var testProvider = func() peer.ID {
	k, _, err := crypto.GenerateEd25519Key(rand.Reader)
	if err != nil {
		panic(err)
	}
	id, err := peer.IDFromPrivateKey(k)
	if err != nil {
		panic(err)
	}
	return id
}()

var card = terms.RateCard{InputTokens: 2, OutputTokens: 5, Minimum: 1}

// payment returns a valid record for request number n of payer, billed
// outputTokens (price 5 per output token plus 2 per input token).
func payment(t testing.TB, payer string, n int, timeMs int64, inputTokens, outputTokens uint64) *receipt.Bill {
	t.Helper()
	u := terms.Units{InputTokens: inputTokens, OutputTokens: outputTokens}
	b, err := pricing.Price(card, u, terms.VerifyReceipt, pricing.Surcharges{})
	if err != nil {
		t.Fatal(err)
	}
	req := sha256.Sum256(fmt.Appendf(nil, "%s/%d", payer, n))
	return &receipt.Bill{
		RequestDigest: req[:], QuoteDigest: bytes.Repeat([]byte{1}, 32), Payer: payer,
		ProviderPeer: []byte(testProvider), MachineID: bytes.Repeat([]byte{2}, 32), ReceiptHash: bytes.Repeat([]byte{3}, 32),
		Units: u, Breakdown: b, Price: b.Total, TimeMs: timeMs,
	}
}
