package chainapi

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/tenzrod/tenzrod/consensus/evidence"
	"github.com/tenzrod/tenzrod/consensus/ledger"
	"github.com/tenzrod/tenzrod/consensus/testnet"
	"github.com/tenzrod/tenzrod/node/rpc"
	"github.com/tenzrod/tenzrod/receipts/terms"
)

// checkReversalPacks is the acceptance of a conviction for the payer's
// evidence packs (#27): after d reversed the record settled at height
// settled, the payer's pack from tenzro_getEvidencePack over every range
// holding that record and ending at or after the reversal exports,
// verifies offline against the genesis validators, and shows the
// reversal; a range ending before it still proves the record unreversed,
// as it stood then; the provider's pack shows it too. Before the fix a reversal rewrote the record but not
// its index entry, and every such pack failed with "record is not the one
// its proof commits to".
func checkReversalPacks(t *testing.T, ctx context.Context, net *testnet.Net, payer terms.AccountID, settled int64, d ledger.Dispute) {
	t.Helper()
	if d.Reversed == 0 || d.ResolveHeight <= settled {
		t.Fatalf("the conviction reversed %d at height %d (record settled at %d): nothing to check", d.Reversed, d.ResolveHeight, settled)
	}
	trusted, err := evidence.LoadValidatorSet(net.GenesisFile)
	if err != nil {
		t.Fatal(err)
	}
	s := rpc.NewServer(nil)
	Chain{Node: net.Nodes[0]}.RegisterRPC(s)
	Payments{Node: net.Nodes[0]}.RegisterRPC(s)
	srv := newTestServer(t, s)
	for _, r := range []struct {
		from, to int64
		reversed bool
	}{
		{settled, d.ResolveHeight, true},
		{1, d.ResolveHeight + 1, true},
		{settled, settled, false}, // proven in the state before the verdict
	} {
		if err := net.WaitHeight(ctx, r.to+1); err != nil {
			t.Fatal(err)
		}
		var pack evidence.Pack
		params, _ := json.Marshal(map[string]any{"account": payer.String(), "from_height": r.from, "to_height": r.to})
		if e := rpcDo(t, srv, "tenzro_getEvidencePack", string(params), &pack); e != nil {
			t.Fatalf("pack over %d..%d (reversal at %d): %v", r.from, r.to, d.ResolveHeight, e)
		}
		rep, err := evidence.Verify(&pack, trusted)
		if err != nil {
			t.Fatalf("pack over %d..%d does not verify: %v", r.from, r.to, err)
		}
		var got *ledger.SettledRecord
		for i := range rep.Records {
			if rep.Records[i].Record.RequestDigest == d.Subject.RequestDigest {
				got = &rep.Records[i]
			}
		}
		switch {
		case got == nil:
			t.Fatalf("pack over %d..%d lacks the disputed record", r.from, r.to)
		case r.reversed && (got.Reversed != d.Reversed || got.ReversedHeight != d.ResolveHeight || rep.TotalReversed != d.Reversed ||
			!strings.Contains(rep.String(), "REVERSED")):
			t.Fatalf("pack over %d..%d: record reversed %d at %d (total %d), want %d at %d; report:\n%s",
				r.from, r.to, got.Reversed, got.ReversedHeight, rep.TotalReversed, d.Reversed, d.ResolveHeight, rep)
		case !r.reversed && (got.Reversed != 0 || rep.TotalReversed != 0):
			t.Fatalf("pack over %d..%d, proven before the verdict, shows a reversal of %d", r.from, r.to, got.Reversed)
		}
	}
	// tenzro_getPayments lists the record with its reversal.
	var pays PaymentsView
	pp, _ := json.Marshal(map[string]any{"payer": payer.String(), "from": settled, "to": d.ResolveHeight})
	if e := rpcDo(t, srv, "tenzro_getPayments", string(pp), &pays); e != nil || len(pays.Records) != 1 ||
		pays.Records[0].Reversed != d.Reversed || pays.Records[0].ReversedHeight != d.ResolveHeight {
		t.Fatalf("tenzro_getPayments: %v %+v", e, pays.Records)
	}
	// The provider's pack over the same heights: its index follows too.
	pack, err := evidence.Export(ctx, net.Nodes[0], d.Provider, settled, d.ResolveHeight)
	if err != nil {
		t.Fatalf("provider pack over %d..%d: %v", settled, d.ResolveHeight, err)
	}
	rep, err := evidence.Verify(pack, trusted)
	if err != nil || len(rep.Records) != 1 || rep.Records[0].Reversed != d.Reversed || rep.TotalReversed != d.Reversed {
		t.Fatalf("provider pack over %d..%d: %v, records %+v", settled, d.ResolveHeight, err, rep.Records)
	}
}
