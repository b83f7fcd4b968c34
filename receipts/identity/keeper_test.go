package identity

import (
	"testing"
	"time"

	"github.com/filecoin-project/go-clock"

	"github.com/tenzrod/tenzrod/receipts/hwkey"
)

// TestSessionKeeperRenews: the keeper hands out the same session until a
// quarter of its lifetime is left, then a fresh one certified for the
// same machine and peer.
func TestSessionKeeperRenews(t *testing.T) {
	id := openIdentity(t, hwkey.BackendSoftware, t.TempDir())
	clk := clock.NewMock()
	clk.Set(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	k := NewSessionKeeper(id, newPeerKey(t), time.Hour, clk, nil)
	first, err := k.Current()
	if err != nil {
		t.Fatal(err)
	}
	clk.Add(44 * time.Minute)
	if again, _ := k.Current(); again != first {
		t.Fatal("renewed with more than a quarter of the lifetime left")
	}
	clk.Add(2 * time.Minute)
	renewed, err := k.Current()
	if err != nil {
		t.Fatal(err)
	}
	if renewed == first || !renewed.NotAfter().After(first.NotAfter()) {
		t.Fatalf("not renewed: not_after %s then %s", first.NotAfter(), renewed.NotAfter())
	}
	if k.Identity() != id {
		t.Fatal("keeper reports another identity")
	}
}
